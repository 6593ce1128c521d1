package memgate_test

import (
	"bytes"
	"io"
	"net"
	"sync"
	"testing"
	"time"
)

// lossyProxy forwards TCP to a gateway, except on the first connection that carries marker:
// from then on it forwards nothing back for hold (the gateway serves the call and answers into
// the void) and then cuts the connection. The client sees UNAVAILABLE for a call the gateway
// did carry out: what a retry's idempotency key is for.
type lossyProxy struct {
	addr   string
	marker []byte
	hold   time.Duration
	mu     sync.Mutex
	fired  bool
}

func startLossyProxy(t *testing.T, upstream string, marker []byte, hold time.Duration) *lossyProxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	p := &lossyProxy{addr: l.Addr().String(), marker: marker, hold: hold}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go p.serve(c, upstream)
		}
	}()
	return p
}

func (p *lossyProxy) Fired() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.fired
}

func (p *lossyProxy) serve(client net.Conn, upstream string) {
	server, err := net.Dial("tcp", upstream)
	if err != nil {
		_ = client.Close()
		return
	}
	cut, done := make(chan struct{}), make(chan struct{})
	var once sync.Once
	closeBoth := func() { once.Do(func() { _ = client.Close(); _ = server.Close(); close(done) }) }
	go func() { // client -> gateway, watching for the marker
		buf := make([]byte, 32<<10)
		var seen []byte
		armed := true
		for {
			n, err := client.Read(buf)
			if n > 0 {
				if armed {
					seen = append(seen, buf[:n]...)
					if bytes.Contains(seen, p.marker) {
						armed = false
						p.mu.Lock()
						first := !p.fired
						p.fired = true
						p.mu.Unlock()
						if first {
							close(cut)
						}
					}
				}
				if _, werr := server.Write(buf[:n]); werr != nil {
					break
				}
			}
			if err != nil {
				break
			}
		}
		closeBoth()
	}()
	go func() { // gateway -> client, swallowed once the marker went by
		buf := make([]byte, 32<<10)
		for {
			n, err := server.Read(buf)
			select {
			case <-cut:
				_, _ = io.Copy(io.Discard, io.LimitReader(server, 1<<20)) // drain while holding
				return
			default:
			}
			if n > 0 {
				if _, werr := client.Write(buf[:n]); werr != nil {
					break
				}
			}
			if err != nil {
				break
			}
		}
		closeBoth()
	}()
	go func() {
		select {
		case <-cut:
			time.Sleep(p.hold)
			closeBoth()
		case <-done:
		}
	}()
}
