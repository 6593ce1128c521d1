package memgate

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"iter"
	"time"

	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/types/known/timestamppb"

	pb "memgate/client/memgatev1"
)

// NewKey is a fresh idempotency key (32 hex digits).
func NewKey() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func ts(t time.Time) *timestamppb.Timestamp {
	if t.IsZero() {
		return nil
	}
	return timestamppb.New(t)
}

// Item is one memory to write. Layer: working, episodic, semantic or procedural.
type Item struct {
	Namespace, Layer, Content string
	Type                      string   // e.g. preference, fact, event
	Importance, Confidence    *float64 // 0..1; nil: the gateway decides
	SessionID, TaskID         string
	EventTime                 time.Time
	Metadata                  map[string]string
	Evidence, Entities        []string
	// IdempotencyKey: same agent + key = the same write, stored once. Made up when empty.
	IdempotencyKey string
	Role, Zone     string // working layer only
}

// WriteItem is the message of an Item, with an idempotency key made up when it has none.
func WriteItem(i Item) *pb.WriteItem {
	key := i.IdempotencyKey
	if key == "" {
		key = NewKey()
	}
	return &pb.WriteItem{
		Namespace: i.Namespace, Layer: layerNumber(i.Layer), Content: i.Content, Type: i.Type,
		Importance: i.Importance, Confidence: i.Confidence, SessionId: i.SessionID,
		TaskId: i.TaskID, EventTime: ts(i.EventTime), Metadata: i.Metadata,
		Evidence: i.Evidence, Entities: i.Entities, IdempotencyKey: key, Role: i.Role,
		Zone: i.Zone,
	}
}

// ---- long-term memories

// Write writes one memory; wait: answer once it is applied to the stores (read-your-write).
// The result's Id is "" when it was skipped or became a proposal (ProposalId).
func (c *Client) Write(ctx context.Context, item Item, wait bool) (*pb.WriteResult, error) {
	req := &pb.WriteRequest{Item: WriteItem(item), Wait: wait}
	r, err := invoke(ctx, c, "Write", c.stub.Write, req)
	if err != nil {
		return nil, err
	}
	return r.GetResult(), nil
}

// BatchWrite is all or nothing: one bad item rejects the batch (INVALID_ARGUMENT names it).
func (c *Client) BatchWrite(ctx context.Context, items []Item, wait bool) ([]*pb.WriteResult, error) {
	req := &pb.BatchWriteRequest{Wait: wait}
	for _, i := range items {
		req.Items = append(req.Items, WriteItem(i))
	}
	r, err := invoke(ctx, c, "BatchWrite", c.stub.BatchWrite, req)
	if err != nil {
		return nil, err
	}
	return r.GetResults(), nil
}

// RecallOptions narrow a recall; the zero value asks for the top 10 of every routed layer.
type RecallOptions struct {
	TopK             int
	Layers           []string
	TokenBudget      int
	SessionID        string
	Start, End, AsOf time.Time
	Types            []string
}

// Recall returns the hits best first and the memory block (MemoryBlock) for the model.
func (c *Client) Recall(ctx context.Context, query string, namespaces []string, o *RecallOptions) (*pb.RecallResponse, error) {
	if o == nil {
		o = &RecallOptions{}
	}
	req := &pb.RecallRequest{Query: query, Namespaces: namespaces, TopK: int32(o.TopK),
		TokenBudget: int32(o.TokenBudget), SessionId: o.SessionID, Start: ts(o.Start),
		End: ts(o.End), Types: o.Types, AsOf: ts(o.AsOf)}
	if req.TopK == 0 {
		req.TopK = 10
	}
	for _, l := range o.Layers {
		req.Layers = append(req.Layers, layerNumber(l))
	}
	return invoke(ctx, c, "Recall", c.stub.Recall, req)
}

// Get reads one memory.
func (c *Client) Get(ctx context.Context, id string) (*pb.Memory, error) {
	r, err := invoke(ctx, c, "Get", c.stub.Get, &pb.GetRequest{Id: id})
	return r.GetMemory(), err
}

// History is every version of a memory, oldest first; a non-zero asOf: only the version true then.
func (c *Client) History(ctx context.Context, id string, asOf time.Time) ([]*pb.Memory, error) {
	r, err := invoke(ctx, c, "History", c.stub.History, &pb.HistoryRequest{Id: id, AsOf: ts(asOf)})
	return r.GetVersions(), err
}

// Forget forgets a memory; the answer is its tombstone (no content).
func (c *Client) Forget(ctx context.Context, id, reason string) (*pb.Memory, error) {
	r, err := invoke(ctx, c, "Forget", c.stub.Forget, &pb.ForgetRequest{Id: id, Reason: reason})
	return r.GetMemory(), err
}

// ---- working memory

// Turn is one turn of a session. Zone defaults to dialogue; At to when the gateway receives it.
type Turn struct {
	Role, Content, Zone string
	Metadata            map[string]string
	IdempotencyKey      string // made up when empty
	At                  time.Time
}

// AppendTurn appends a turn to the session's window.
func (c *Client) AppendTurn(ctx context.Context, namespace, sessionID string, t Turn) (*pb.AppendTurnResponse, error) {
	req := &pb.AppendTurnRequest{Namespace: namespace, SessionId: sessionID, Role: t.Role,
		Content: t.Content, Zone: t.Zone, Metadata: t.Metadata, IdempotencyKey: t.IdempotencyKey,
		At: ts(t.At)}
	if req.Zone == "" {
		req.Zone = "dialogue"
	}
	if req.IdempotencyKey == "" {
		req.IdempotencyKey = NewKey()
	}
	return invoke(ctx, c, "AppendTurn", c.stub.AppendTurn, req)
}

// Window is the session's turns; Degraded: working memory could not be read.
func (c *Client) Window(ctx context.Context, namespace, sessionID string, zones ...string) (*pb.GetWindowResponse, error) {
	req := &pb.GetWindowRequest{Namespace: namespace, SessionId: sessionID, Zones: zones}
	return invoke(ctx, c, "GetWindow", c.stub.GetWindow, req)
}

// EndSession mines the session's new turns for facts; wait: answer once that ran. Safe to repeat.
func (c *Client) EndSession(ctx context.Context, namespace, sessionID string, wait bool) (*pb.EndSessionResponse, error) {
	req := &pb.EndSessionRequest{Namespace: namespace, SessionId: sessionID, Wait: wait}
	return invoke(ctx, c, "EndSession", c.stub.EndSession, req)
}

// ---- episodic

// Link relates a recorded event to another node: Type (CAUSED, FOLLOWS ...), Kind and ID.
type Link struct{ Type, Kind, ID string }

// RecordEvent records an event (the item's layer is episodic); its id.
func (c *Client) RecordEvent(ctx context.Context, event Item, userID string, links []Link, wait bool) (string, error) {
	event.Layer = "episodic"
	req := &pb.RecordEventRequest{Event: WriteItem(event), UserId: userID, Wait: wait}
	for _, l := range links {
		req.Links = append(req.Links, &pb.Link{Type: l.Type, Target: &pb.NodeRef{Kind: l.Kind, Id: l.ID}})
	}
	r, err := invoke(ctx, c, "RecordEvent", c.stub.RecordEvent, req)
	return r.GetResult().GetId(), err
}

// TimelineOptions: within [Start, End) (zero: open), at most Limit (default 100), of Types.
type TimelineOptions struct {
	Start, End time.Time
	Limit      int
	Types      []string
}

// Timeline is the namespace's events in time order.
func (c *Client) Timeline(ctx context.Context, namespace string, o *TimelineOptions) ([]*pb.Event, error) {
	if o == nil {
		o = &TimelineOptions{}
	}
	req := &pb.TimelineRequest{Namespace: namespace, Start: ts(o.Start), End: ts(o.End),
		Limit: int32(o.Limit), Types: o.Types}
	if req.Limit == 0 {
		req.Limit = 100
	}
	r, err := invoke(ctx, c, "Timeline", c.stub.Timeline, req)
	return r.GetEvents(), err
}

// ---- semantic facts and sub-agent results

// Fact says where a proposed fact was seen. Confidence 0 sends the default 0.5; Explicit: the
// user said it explicitly (promoted at once).
type Fact struct {
	SessionID  string
	Evidence   []string
	Confidence float64
	Explicit   bool
}

// ProposeFact: a fact becomes a semantic memory once seen in two sessions, or at once if explicit.
func (c *Client) ProposeFact(ctx context.Context, namespace, fact string, f Fact) (*pb.ProposeFactResponse, error) {
	conf := f.Confidence
	if conf == 0 {
		conf = 0.5
	}
	req := &pb.ProposeFactRequest{Namespace: namespace, Fact: fact, SessionId: f.SessionID,
		Evidence: f.Evidence, Confidence: conf, Explicit: f.Explicit}
	return invoke(ctx, c, "ProposeFact", c.stub.ProposeFact, req)
}

// Result is what a sub-agent hands back for a task. Status: done, failed or partial.
type Result struct {
	Status, Summary      string
	Artifacts, Decisions []string
	// MemoryUpdates are written (own namespace) or proposed to the master (shared ones); update
	// i without a key gets "<IdempotencyKey>:<i>".
	MemoryUpdates  []Item
	SessionID      string
	IdempotencyKey string // made up when empty
}

// SubmitResult records the result as an event of the task and routes its memory updates.
func (c *Client) SubmitResult(ctx context.Context, taskID string, r Result) (*pb.SubmitResultResponse, error) {
	key := r.IdempotencyKey
	if key == "" {
		key = NewKey()
	}
	req := &pb.SubmitResultRequest{TaskId: taskID, Status: r.Status, Summary: r.Summary,
		Artifacts: r.Artifacts, Decisions: r.Decisions, SessionId: r.SessionID, IdempotencyKey: key}
	for i, u := range r.MemoryUpdates {
		if u.IdempotencyKey == "" {
			u.IdempotencyKey = fmt.Sprintf("%s:%d", key, i)
		}
		req.MemoryUpdates = append(req.MemoryUpdates, &pb.MemoryUpdate{Item: WriteItem(u)})
	}
	return invoke(ctx, c, "SubmitResult", c.stub.SubmitResult, req)
}

// ---- arbitration (the master)

// Proposals lists proposals in a state (pending, approved, rejected; "" = pending).
func (c *Client) Proposals(ctx context.Context, state string, limit int) ([]*pb.Proposal, error) {
	if state == "" {
		state = "pending"
	}
	if limit == 0 {
		limit = 100
	}
	r, err := invoke(ctx, c, "ListProposals", c.stub.ListProposals,
		&pb.ListProposalsRequest{State: state, Limit: int32(limit)})
	return r.GetProposals(), err
}

// Approve writes a proposal's memory (master only); the answer's MemoryId names it.
func (c *Client) Approve(ctx context.Context, proposalID, reason string) (*pb.Proposal, error) {
	return invoke(ctx, c, "ApproveProposal", c.stub.ApproveProposal,
		&pb.DecideProposalRequest{Id: proposalID, Reason: reason})
}

// Reject drops a proposal (master only).
func (c *Client) Reject(ctx context.Context, proposalID, reason string) (*pb.Proposal, error) {
	return invoke(ctx, c, "RejectProposal", c.stub.RejectProposal,
		&pb.DecideProposalRequest{Id: proposalID, Reason: reason})
}

// ---- operations

// Stats are the gateway's counters.
func (c *Client) Stats(ctx context.Context) (*pb.StatsResponse, error) {
	return invoke(ctx, c, "Stats", c.stub.Stats, &pb.StatsRequest{})
}

// Export streams every memory of the namespaces (master only): range over it. Sent once (a
// stream is not retried); an error ends the sequence.
func (c *Client) Export(ctx context.Context, namespaces []string, includeVectors bool) iter.Seq2[*pb.ExportedMemory, error] {
	return func(yield func(*pb.ExportedMemory, error) bool) {
		ctx, cancel := context.WithCancel(metadata.NewOutgoingContext(ctx, metadata.Join(metadataOf(ctx), c.md)))
		defer cancel()
		stream, err := c.stub.Export(ctx, &pb.ExportRequest{Namespaces: namespaces, IncludeVectors: includeVectors})
		if err != nil {
			yield(nil, typed(err, nil))
			return
		}
		for {
			m, err := stream.Recv()
			if err != nil {
				if !errors.Is(err, io.EOF) {
					yield(nil, typed(err, stream.Trailer()))
				}
				return
			}
			if !yield(m, nil) {
				return
			}
		}
	}
}
