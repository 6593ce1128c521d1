package memgate_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	memgate "memgate/client"
	pb "memgate/client/memgatev1"
)

func uid() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func userNS() string { return "user/u-" + uid() }

func dial(t *testing.T, agent string, edit func(*memgate.Options)) *memgate.Client {
	t.Helper()
	o := memgate.Options{Targets: []string{gw.Plain}, AgentID: agent, APIKey: gw.Keys[agent]}
	if edit != nil {
		edit(&o)
	}
	c, err := memgate.New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// must(f())(t): the value, or the test fails with the error.
func must[T any](v T, err error) func(*testing.T) T {
	return func(t *testing.T) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func hitIDs(r *pb.RecallResponse) []string {
	var out []string
	for _, h := range r.GetHits() {
		out = append(out, h.GetMemory().GetId())
	}
	return out
}

func TestRememberAndRecall(t *testing.T) {
	ctx := context.Background()
	m := dial(t, "master", nil)
	ns := userNS()
	w := must(m.Write(ctx, memgate.Item{Namespace: ns, Layer: "semantic", Content: "The user is allergic to peanuts"}, true))(t)
	if w.Id == "" || w.Duplicate {
		t.Fatalf("write: %v", w)
	}
	r := must(m.Recall(ctx, "peanut allergy", []string{ns}, nil))(t)
	if got := hitIDs(r); !slices.Equal(got, []string{w.Id}) {
		t.Fatalf("hits %v, want [%s]", got, w.Id)
	}
	if !strings.Contains(r.MemoryBlock, "allergic to peanuts") {
		t.Fatalf("memory block %q", r.MemoryBlock)
	}
	mem := must(m.Get(ctx, w.Id))(t)
	if mem.Content != "The user is allergic to peanuts" || mem.SourceAgent != "master" {
		t.Fatalf("get: %v", mem)
	}
	if h := must(m.History(ctx, w.Id, time.Time{}))(t); len(h) != 1 {
		t.Fatalf("history: %d versions", len(h))
	}
	var exported []string
	for e, err := range m.Export(ctx, []string{ns}, false) {
		if err != nil {
			t.Fatal(err)
		}
		exported = append(exported, e.Versions[len(e.Versions)-1].Content)
	}
	if !slices.Equal(exported, []string{"The user is allergic to peanuts"}) {
		t.Fatalf("export: %v", exported)
	}
	tomb := must(m.Forget(ctx, w.Id, "test"))(t)
	if tomb.Status != pb.MemoryStatus_FORGOTTEN {
		t.Fatalf("forget: %v", tomb.Status)
	}
	if got := hitIDs(must(m.Recall(ctx, "peanut allergy", []string{ns}, nil))(t)); len(got) != 0 {
		t.Fatalf("a forgotten memory is recalled: %v", got)
	}
	if _, err := m.Get(ctx, "no-such-memory"); !errors.Is(err, memgate.ErrNotFound) {
		t.Fatalf("get of a missing id: %v", err)
	}
}

func contains(s, sub string) bool {
	return len(sub) == 0 || (len(s) >= len(sub) && indexOf(s, sub) >= 0)
}

func indexOf(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}

func TestRetriedWriteIsStoredOnce(t *testing.T) {
	ctx := context.Background()
	m := dial(t, "master", nil)
	ns := userNS()
	item := memgate.Item{Namespace: ns, Layer: "semantic", Content: "The user lives in Hamburg", IdempotencyKey: "k-" + uid()}
	first := must(m.Write(ctx, item, true))(t)
	again := must(m.Write(ctx, item, true))(t)
	if first.Duplicate || !again.Duplicate || again.Id != first.Id {
		t.Fatalf("first %v, again %v", first, again)
	}
	if got := hitIDs(must(m.Recall(ctx, "where does the user live", []string{ns}, nil))(t)); !slices.Equal(got, []string{first.Id}) {
		t.Fatalf("hits %v, want one: %s", got, first.Id)
	}
	results := must(m.BatchWrite(ctx, []memgate.Item{
		{Namespace: ns, Layer: "semantic", Content: "The user drinks green tea"},
		{Namespace: ns, Layer: "episodic", Content: "The user booked a flight to Oslo"},
	}, true))(t)
	if len(results) != 2 || results[0].Id == "" || results[1].Id == "" {
		t.Fatalf("batch: %v", results)
	}
	_, err := m.BatchWrite(ctx, []memgate.Item{
		{Namespace: ns, Layer: "semantic", Content: "fine"},
		{Namespace: ns, Layer: "no-such-layer", Content: "bad"},
	}, true)
	if !errors.Is(err, memgate.ErrInvalidArgument) {
		t.Fatalf("a batch with a bad item: %v", err)
	}
}

func TestWorkingMemoryAndEvents(t *testing.T) {
	ctx := context.Background()
	m := dial(t, "master", nil)
	ns, session := userNS(), "s-"+uid()
	t1 := must(m.AppendTurn(ctx, ns, session, memgate.Turn{Role: "user", Content: "I moved to Berlin last week", IdempotencyKey: "turn-1"}))(t)
	dup := must(m.AppendTurn(ctx, ns, session, memgate.Turn{Role: "user", Content: "I moved to Berlin last week", IdempotencyKey: "turn-1"}))(t)
	if !dup.Duplicate || dup.Id != t1.Id {
		t.Fatalf("repeated turn: %v (first %v)", dup, t1)
	}
	must(m.AppendTurn(ctx, ns, session, memgate.Turn{Role: "assistant", Content: "Noted, Berlin it is."}))(t)
	w := must(m.Window(ctx, ns, session))(t)
	var roles []string
	for _, turn := range w.Turns {
		roles = append(roles, turn.Role)
	}
	if !slices.Equal(roles, []string{"user", "assistant"}) {
		t.Fatalf("window roles %v", roles)
	}
	end := must(m.EndSession(ctx, ns, session, true))(t)
	if end.Turns != 2 || !end.Applied {
		t.Fatalf("end session: %v", end)
	}

	ns = userNS() // events of their own (ending the session may record one)
	a := must(m.RecordEvent(ctx, memgate.Item{Namespace: ns, Content: "Kick-off meeting with ACME", EventTime: time.Date(2026, 1, 5, 10, 0, 0, 0, time.UTC)}, "", nil, true))(t)
	b := must(m.RecordEvent(ctx, memgate.Item{Namespace: ns, Content: "Contract signed with ACME", EventTime: time.Date(2026, 1, 20, 10, 0, 0, 0, time.UTC)}, "", nil, true))(t)
	var ids []string
	for _, e := range must(m.Timeline(ctx, ns, nil))(t) {
		ids = append(ids, e.Id)
	}
	if !slices.Equal(ids, []string{a, b}) {
		t.Fatalf("timeline %v, want [%s %s]", ids, a, b)
	}
	later := must(m.Timeline(ctx, ns, &memgate.TimelineOptions{Start: time.Date(2026, 1, 10, 0, 0, 0, 0, time.UTC)}))(t)
	if len(later) != 1 || later[0].Id != b {
		t.Fatalf("timeline from Jan 10: %v", later)
	}
}

func burst(ctx context.Context, c *memgate.Client, ns, prefix string, n int) []error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := c.Recall(ctx, prefix+" "+string(rune('a'+i)), []string{ns}, nil)
			errs[i] = err
			if err == nil && len(r.Hits) != 1 {
				errs[i] = errors.New("expected one hit")
			}
		}()
	}
	wg.Wait()
	return errs
}

func TestOverloadedCallsWaitAndSucceed(t *testing.T) {
	ctx := context.Background()
	ns := userNS()
	must(dial(t, "master", nil).Write(ctx, memgate.Item{Namespace: ns, Layer: "semantic", Content: "The user likes jazz"}, true))(t)
	// without retries a burst meets the per-agent bound: RESOURCE_EXHAUSTED with the hint (bursts
	// until one did: how many calls overlap depends on the scheduling)
	strict := dial(t, "burst", func(o *memgate.Options) { o.Retry = &memgate.RetryPolicy{} })
	refused := 0
	for round := 0; round < 10 && refused == 0; round++ {
		for _, err := range burst(ctx, strict, ns, fmt.Sprintf("music %d", round), 30) {
			if err == nil {
				continue
			}
			refused++
			var ge *memgate.Error
			if !errors.As(err, &ge) || !errors.Is(err, memgate.ErrOverloaded) || ge.Code != codes.ResourceExhausted {
				t.Fatalf("refused with %v", err)
			}
			if ge.RetryAfterMs < gw.RetryAfterMs {
				t.Fatalf("retry-after-ms %d < %d", ge.RetryAfterMs, gw.RetryAfterMs)
			}
		}
	}
	if refused == 0 {
		t.Fatal("the burst should exceed the per-agent bound")
	}
	// with the default policy every call waits its turn and answers (new queries: the recall
	// cache would answer repeated ones before they queue)
	var mu sync.Mutex
	var waits []time.Duration
	patient := dial(t, "burst", func(o *memgate.Options) {
		o.OnRetry = func(_ string, _ int, d time.Duration, err *memgate.Error) {
			if errors.Is(err, memgate.ErrOverloaded) {
				mu.Lock()
				waits = append(waits, d)
				mu.Unlock()
			}
		}
	})
	// (bursts until one met the bound: how many calls overlap depends on the scheduling)
	for round := 0; round < 10 && len(waits) == 0; round++ {
		for i, err := range burst(ctx, patient, ns, fmt.Sprintf("which music %d", round), 30) {
			if err != nil {
				t.Fatalf("round %d, call %d: %v", round, i, err)
			}
		}
	}
	if len(waits) == 0 {
		t.Fatal("some calls should have been refused and retried")
	}
	for _, d := range waits {
		if d < time.Duration(gw.RetryAfterMs)*time.Millisecond {
			t.Fatalf("waited %v, less than the gateway's hint", d)
		}
	}
}

func TestSubAgentWriteBecomesProposalMasterApproves(t *testing.T) {
	ctx := context.Background()
	sub, m := dial(t, "sub-a", nil), dial(t, "master", nil)
	ns := userNS()
	w := must(sub.Write(ctx, memgate.Item{Namespace: ns, Layer: "semantic", Content: "The user prefers morning meetings"}, false))(t)
	if w.ProposalId == "" || w.Id != "" {
		t.Fatalf("a sub-agent's shared write: %v", w)
	}
	if _, err := sub.Approve(ctx, w.ProposalId, ""); !errors.Is(err, memgate.ErrPermissionDenied) {
		t.Fatalf("a sub-agent approving: %v", err)
	}
	var pending []string
	for _, p := range must(m.Proposals(ctx, "pending", 0))(t) {
		if p.GetItem().GetNamespace() == ns {
			pending = append(pending, p.Id)
			if p.Proposer != "sub-a" {
				t.Fatalf("proposer %q", p.Proposer)
			}
		}
	}
	if !slices.Equal(pending, []string{w.ProposalId}) {
		t.Fatalf("pending %v", pending)
	}
	approved := must(m.Approve(ctx, w.ProposalId, "confirmed in chat"))(t)
	if approved.State != "approved" || approved.MemoryId == "" {
		t.Fatalf("approve: %v", approved)
	}
	mem := must(m.Get(ctx, approved.MemoryId))(t)
	if mem.Content != "The user prefers morning meetings" || mem.SourceAgent != "sub-a" {
		t.Fatalf("approved memory: %v", mem)
	}
	res := must(sub.SubmitResult(ctx, "t-"+uid(), memgate.Result{
		Status: "done", Summary: "Compared vendors",
		MemoryUpdates: []memgate.Item{
			{Namespace: "agent/sub-a", Layer: "semantic", Content: "Vendor B has an EU region"},
			{Namespace: ns, Layer: "semantic", Content: "The user's company uses Salesforce"},
		},
	}))(t)
	if len(res.Committed) != 1 || len(res.Proposals) != 1 {
		t.Fatalf("submit result: %v", res)
	}
	if rej := must(m.Reject(ctx, res.Proposals[0].Id, "unverified"))(t); rej.State != "rejected" {
		t.Fatalf("reject: %v", rej)
	}
	fact := must(m.ProposeFact(ctx, ns, "The user's cat is called Mia", memgate.Fact{SessionID: "s1", Explicit: true}))(t)
	if !fact.Promoted {
		t.Fatalf("an explicit fact: %v", fact)
	}
}

func TestWrongAPIKeyIsRefusedNotRetried(t *testing.T) {
	retried := 0
	c := dial(t, "master", func(o *memgate.Options) {
		o.APIKey = "wrong"
		o.OnRetry = func(string, int, time.Duration, *memgate.Error) { retried++ }
	})
	_, err := c.Recall(context.Background(), "x", []string{"global"}, nil)
	if !errors.Is(err, memgate.ErrUnauthenticated) || retried != 0 {
		t.Fatalf("wrong key: %v (retried %d)", err, retried)
	}
}

func TestMutualTLS(t *testing.T) {
	ctx := context.Background()
	read := func(p string) []byte { return must(os.ReadFile(p))(t) }
	c := dial(t, "", func(o *memgate.Options) {
		o.Targets = []string{gw.MTLS}
		o.TLS = &memgate.TLS{CA: read(gw.CA), Cert: read(gw.ClientCert), Key: read(gw.ClientKey)}
	})
	ns := "agent/" + gw.TLSAgent
	w := must(c.Write(ctx, memgate.Item{Namespace: ns, Layer: "semantic", Content: "TLS agents remember too"}, true))(t)
	if mem := must(c.Get(ctx, w.Id))(t); mem.SourceAgent != gw.TLSAgent {
		t.Fatalf("the certificate's agent: %q", mem.SourceAgent)
	}
	if got := hitIDs(must(c.Recall(ctx, "remember", []string{ns}, nil))(t)); !slices.Equal(got, []string{w.Id}) {
		t.Fatalf("hits %v", got)
	}
	noCert := dial(t, "", func(o *memgate.Options) {
		o.Targets = []string{gw.MTLS}
		o.TLS = &memgate.TLS{CA: read(gw.CA)}
		o.Retry = &memgate.RetryPolicy{}
		o.Timeout = 3 * time.Second
	})
	if _, err := noCert.Get(ctx, w.Id); err == nil {
		t.Fatal("a client without a certificate was served")
	}
	plain := dial(t, gw.TLSAgent, func(o *memgate.Options) {
		o.Targets = []string{gw.MTLS}
		o.Retry = &memgate.RetryPolicy{}
		o.Timeout = 3 * time.Second
	})
	if _, err := plain.Get(ctx, w.Id); !errors.Is(err, memgate.ErrUnavailable) {
		t.Fatalf("plaintext to a TLS gateway: %v", err)
	}
}

func freeAddress(t *testing.T) string {
	l := must(net.Listen("tcp", "127.0.0.1:0"))(t)
	addr := l.Addr().String()
	_ = l.Close()
	return addr
}

func TestSeveralTargetsSkipAnUnreachableOne(t *testing.T) {
	ctx := context.Background()
	dead := freeAddress(t)
	c := dial(t, "master", func(o *memgate.Options) { o.Targets = []string{dead, gw.Plain} })
	for range 6 {
		must(c.Stats(ctx))(t)
	}
	only := dial(t, "master", func(o *memgate.Options) {
		o.Targets = []string{dead}
		o.Retry = &memgate.RetryPolicy{Retries: 1, Base: 10 * time.Millisecond, Cap: 10 * time.Millisecond}
	})
	if _, err := only.Stats(ctx); !errors.Is(err, memgate.ErrUnavailable) {
		t.Fatalf("an unreachable gateway: %v", err)
	}
}

func TestDeadlines(t *testing.T) {
	c := dial(t, "master", func(o *memgate.Options) {
		o.Timeout = time.Millisecond
		o.Retry = &memgate.RetryPolicy{}
	})
	_, err := c.Recall(context.Background(), "anything at all", []string{"global"}, nil)
	var ge *memgate.Error
	if !errors.As(err, &ge) || ge.Code != codes.DeadlineExceeded || !errors.Is(err, memgate.ErrUnavailable) {
		t.Fatalf("past its deadline: %v", err)
	}
	// the caller's context bounds the whole call, retries included
	patient := dial(t, "master", func(o *memgate.Options) { o.Targets = []string{freeAddress(t)} })
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := patient.Stats(ctx); !errors.Is(err, memgate.ErrUnavailable) {
		t.Fatalf("unreachable within the caller's deadline: %v", err)
	}
	if waited := time.Since(start); waited > 2*time.Second {
		t.Fatalf("the call outlived its context by far: %v", waited)
	}
}

func TestAWriteWhoseAnswerWasLostIsStoredOnce(t *testing.T) {
	ctx := context.Background()
	content := "The user's passport expires in March " + uid()
	proxy := startLossyProxy(t, gw.Plain, []byte(content), 2*time.Second)
	var retried []error
	c := dial(t, "master", func(o *memgate.Options) {
		o.Targets = []string{proxy.addr}
		o.Retry = &memgate.RetryPolicy{Retries: 6, Base: 50 * time.Millisecond, Cap: 500 * time.Millisecond}
		o.OnRetry = func(_ string, _ int, _ time.Duration, err *memgate.Error) { retried = append(retried, err) }
	})
	ns := userNS()
	w := must(c.Write(ctx, memgate.Item{Namespace: ns, Layer: "semantic", Content: content}, true))(t)
	if !proxy.Fired() || len(retried) == 0 || !errors.Is(retried[0], memgate.ErrUnavailable) {
		t.Fatalf("the first answer should have been lost and the write retried (fired %v, retries %v)", proxy.Fired(), retried)
	}
	// the gateway had stored the first attempt: the retry (same key) was answered by it
	if !w.Duplicate || w.Id == "" {
		t.Fatalf("the retried write: %v", w)
	}
	m := dial(t, "master", nil)
	if got := hitIDs(must(m.Recall(ctx, "when does the passport expire", []string{ns}, nil))(t)); !slices.Equal(got, []string{w.Id}) {
		t.Fatalf("hits %v, want exactly [%s]", got, w.Id)
	}
}
