// Package memgate is the Go client of the memgate memory gateway: the gateway's core RPCs with
// the guarantees of the Python client (docs/CLIENTS.md): a generated idempotency key on every
// write, bounded retries of UNAVAILABLE and of overload (honouring retry-after-ms), per-attempt
// deadlines, the API key, TLS/mTLS and round robin over several gateways. The generated stubs
// are in memgate/client/memgatev1.
package memgate

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	_ "google.golang.org/grpc/health" // client-side health checks of the round robin
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/resolver"
	"google.golang.org/grpc/resolver/manual"

	pb "memgate/client/memgatev1"
)

// Metadata keys the gateway reads.
const (
	AgentHeader = "x-agent-id"
	KeyHeader   = "x-api-key"
	// HealthService is the service the client-side health checks ask about.
	HealthService = "memgate.v1.MemoryGateway"
)

// balanced: round robin over the healthy gateways (a draining one answers NOT_SERVING)
const balancedServiceConfig = `{"loadBalancingConfig":[{"round_robin":{}}],` +
	`"healthCheckConfig":{"serviceName":"` + HealthService + `"}}`

// TLS configures transport security; the zero value uses the system's roots.
type TLS struct {
	CA         []byte // PEM of the CA that signed the gateway's certificate (nil: system roots)
	Cert, Key  []byte // mTLS: the client's certificate chain and key (PEM), both or neither
	ServerName string // the name checked against the server certificate, instead of the host
}

// Options of a Client. Targets and AgentID are required (AgentID may be "" with a gateway that
// takes the agent id from the client certificate).
type Options struct {
	// Targets: one gateway ("127.0.0.1:50051", or any gRPC target such as
	// "dns:///gateways.internal:50051") or several host:port entries, balanced round robin.
	Targets []string
	AgentID string
	APIKey  string
	// Timeout of each attempt (default 30 s); the caller's context bounds the whole call.
	Timeout time.Duration
	// Retry policy; nil: DefaultRetryPolicy(). Retries 0 turns retries off.
	Retry *RetryPolicy
	// TLS: nil for plaintext.
	TLS *TLS
	// OnRetry is told about every retry before its wait (logging, metrics).
	OnRetry func(method string, attempt int, delay time.Duration, err *Error)
	// DialOptions are added to the gRPC client's own.
	DialOptions []grpc.DialOption
}

// Client talks to one gateway or several. Safe for concurrent use.
type Client struct {
	conn    *grpc.ClientConn
	stub    pb.MemoryGatewayClient
	md      metadata.MD
	timeout time.Duration
	policy  RetryPolicy
	onRetry func(string, int, time.Duration, *Error)
	agentID string
}

// New connects lazily (the first call dials).
func New(o Options) (*Client, error) {
	if len(o.Targets) == 0 {
		return nil, errors.New("memgate: name at least one gateway in Options.Targets")
	}
	dial := append([]grpc.DialOption{}, o.DialOptions...)
	creds, err := transportCredentials(o.TLS)
	if err != nil {
		return nil, err
	}
	dial = append(dial, grpc.WithTransportCredentials(creds))
	target, replicas := o.Targets[0], len(o.Targets)
	if replicas == 1 && strings.HasPrefix(target, "dns:") {
		// every address the name resolves to, balanced (counted as several, as in Python)
		dial = append(dial, grpc.WithDefaultServiceConfig(balancedServiceConfig))
		replicas = 2
	}
	if len(o.Targets) > 1 {
		addrs := make([]resolver.Address, 0, len(o.Targets))
		for _, t := range o.Targets {
			if _, _, err := net.SplitHostPort(t); err != nil {
				return nil, fmt.Errorf("memgate: target %q: several gateways are host:port entries", t)
			}
			addrs = append(addrs, resolver.Address{Addr: t})
		}
		r := manual.NewBuilderWithScheme("memgate")
		r.InitialState(resolver.State{Addresses: addrs})
		dial = append(dial, grpc.WithResolvers(r), grpc.WithDefaultServiceConfig(balancedServiceConfig))
		target = r.Scheme() + ":///gateways"
	}
	conn, err := grpc.NewClient(target, dial...)
	if err != nil {
		return nil, fmt.Errorf("memgate: %w", err)
	}
	c := &Client{conn: conn, stub: pb.NewMemoryGatewayClient(conn), md: metadata.MD{},
		timeout: o.Timeout, onRetry: o.OnRetry, agentID: o.AgentID}
	if c.timeout <= 0 {
		c.timeout = 30 * time.Second
	}
	if o.AgentID != "" {
		c.md.Set(AgentHeader, o.AgentID)
	}
	if o.APIKey != "" {
		c.md.Set(KeyHeader, o.APIKey)
	}
	c.policy = DefaultRetryPolicy()
	if o.Retry != nil {
		c.policy = *o.Retry
	}
	c.policy.Replicas = replicas
	return c, nil
}

func transportCredentials(t *TLS) (credentials.TransportCredentials, error) {
	if t == nil {
		return insecure.NewCredentials(), nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: t.ServerName}
	if len(t.CA) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(t.CA) {
			return nil, errors.New("memgate: TLS.CA holds no PEM certificate")
		}
		cfg.RootCAs = pool
	}
	if (len(t.Cert) > 0) != (len(t.Key) > 0) {
		return nil, errors.New("memgate: TLS.Cert and TLS.Key go together (mTLS)")
	}
	if len(t.Cert) > 0 {
		pair, err := tls.X509KeyPair(t.Cert, t.Key)
		if err != nil {
			return nil, fmt.Errorf("memgate: client certificate: %w", err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return credentials.NewTLS(cfg), nil
}

// AgentID is the agent the client calls as.
func (c *Client) AgentID() string { return c.agentID }

// Stub is the generated client on the same connection, for the RPCs this package does not wrap
// (without the retries and typed errors: add the metadata yourself).
func (c *Client) Stub() pb.MemoryGatewayClient { return c.stub }

// Close closes the connection.
func (c *Client) Close() error { return c.conn.Close() }

// invoke sends req with the identity and the per-attempt deadline, retrying by the policy (the
// same request each time, so a write keeps its idempotency key); errors are *Error.
func invoke[Req, Resp any](ctx context.Context, c *Client, method string,
	send func(context.Context, Req, ...grpc.CallOption) (Resp, error), req Req) (Resp, error) {
	ctx = metadata.NewOutgoingContext(ctx, metadata.Join(metadataOf(ctx), c.md))
	for attempt := 0; ; attempt++ {
		var trailer metadata.MD
		actx, cancel := context.WithTimeout(ctx, c.timeout)
		resp, err := send(actx, req, grpc.Trailer(&trailer))
		cancel()
		if err == nil {
			return resp, nil
		}
		gerr := typed(err, trailer)
		var zero Resp
		if ctx.Err() != nil { // the caller's deadline or cancellation: no more attempts
			return zero, gerr
		}
		delay, again := c.policy.AfterFailure(gerr, attempt)
		if !again {
			return zero, gerr
		}
		if c.onRetry != nil {
			c.onRetry(method, attempt, delay, gerr)
		}
		if delay > 0 {
			timer := time.NewTimer(delay)
			select {
			case <-ctx.Done():
				timer.Stop()
				return zero, gerr
			case <-timer.C:
			}
		}
	}
}

func metadataOf(ctx context.Context) metadata.MD {
	md, _ := metadata.FromOutgoingContext(ctx)
	return md
}

// layerNumber: an unknown name goes out as an unknown number (the gateway answers
// INVALID_ARGUMENT).
func layerNumber(name string) pb.Layer {
	switch name {
	case "":
		return pb.Layer_LAYER_UNSPECIFIED
	case "working":
		return pb.Layer_WORKING
	case "episodic":
		return pb.Layer_EPISODIC
	case "semantic":
		return pb.Layer_SEMANTIC
	case "procedural":
		return pb.Layer_PROCEDURAL
	}
	return pb.Layer(99)
}
