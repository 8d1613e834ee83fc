// Package tcpproxy is a TCP proxy owned by a test: it listens on a free
// loopback port, forwards every connection to a target (a broker, a
// database) and lets the test fail the network between them without
// touching the shared server: Cut closes every live connection, Refuse
// closes new ones at once, Stall keeps connections open but forwards no
// byte, Resume ends Refuse and Stall.
//
// The proxy closes, and every goroutine it started ends, when the test that
// made it ends.
package tcpproxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"testing"
	"time"
)

// dialTimeout bounds a dial to the target.
const dialTimeout = 5 * time.Second

// Proxy forwards TCP connections from Addr to its target.
type Proxy struct {
	ln     net.Listener
	target string
	ctx    context.Context // ends at cleanup: aborts dials to the target
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	pairs   map[*pair]struct{}
	closed  bool
	refuse  bool
	up      chan struct{} // closed while client-to-target bytes flow
	down    chan struct{} // closed while target-to-client bytes flow
	cuts    int
	refused int
}

// pair is one proxied connection: the client's side and the target's.
type pair struct {
	client, server net.Conn
	done           chan struct{} // closed when the pair is closed
	once           sync.Once
	mu             sync.Mutex
	halves         int // directions that ended with a clean EOF
}

func (pr *pair) close() {
	pr.once.Do(func() {
		close(pr.done)
		_ = pr.client.Close()
		_ = pr.server.Close()
	})
}

// New starts a proxy on 127.0.0.1 (a free port) that forwards to target
// ("host:port"). It is closed when t ends.
func New(t testing.TB, target string) *Proxy {
	t.Helper()
	if _, _, err := net.SplitHostPort(target); err != nil {
		t.Fatalf("tcpproxy: target %q is not host:port: %v", target, err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("tcpproxy: listen: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &Proxy{
		ln: ln, target: target, ctx: ctx, cancel: cancel,
		pairs: make(map[*pair]struct{}),
		up:    openGate(), down: openGate(),
	}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(p.close)
	return p
}

// NewURL starts a proxy (as New) in front of the server that rawURL names
// and returns it with rawURL rewritten to go through it. rawURL may be a URL
// with a scheme (amqp://guest:guest@127.0.0.1:5672/, nats://127.0.0.1:4222,
// postgres://...; a missing port is the scheme's default), a go-sql-driver
// DSN (root@tcp(127.0.0.1:3306)/test) or a bare host:port (a Kafka seed).
// A list of several servers fails the test: make one proxy per server.
func NewURL(t testing.TB, rawURL string) (*Proxy, string) {
	t.Helper()
	target, rewrite, err := parseTarget(rawURL)
	if err != nil {
		t.Fatalf("tcpproxy: %v", err)
	}
	p := New(t, target)
	return p, rewrite(p.Addr())
}

// Addr returns the proxy's listening address ("127.0.0.1:PORT").
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Target returns the address the proxy forwards to.
func (p *Proxy) Target() string { return p.target }

// Cut closes every live connection both ways, as a network failure would
// (each side sees its connection closed). The proxy keeps accepting new
// connections unless Refuse is in effect.
func (p *Proxy) Cut() {
	p.mu.Lock()
	pairs := make([]*pair, 0, len(p.pairs))
	for pr := range p.pairs {
		pairs = append(pairs, pr)
		delete(p.pairs, pr)
	}
	p.cuts += len(pairs)
	p.mu.Unlock()
	for _, pr := range pairs {
		pr.close()
	}
}

// Refuse makes the proxy close every new connection as soon as it is
// accepted, until Resume. Live connections are not touched (Cut them).
func (p *Proxy) Refuse() {
	p.mu.Lock()
	p.refuse = true
	p.mu.Unlock()
}

// Stall stops forwarding bytes in both directions until Resume: live and
// new connections stay open, as behind a network that drops every packet.
func (p *Proxy) Stall() {
	p.mu.Lock()
	shut(&p.up)
	shut(&p.down)
	p.mu.Unlock()
}

// StallDown stops forwarding target-to-client bytes only, until Resume:
// the client's requests still reach the target, but its replies (a
// broker's confirms, a database's results) are held back.
func (p *Proxy) StallDown() {
	p.mu.Lock()
	shut(&p.down)
	p.mu.Unlock()
}

// Resume ends Refuse, Stall and StallDown: bytes held back are forwarded
// and new connections are forwarded again.
func (p *Proxy) Resume() {
	p.mu.Lock()
	p.refuse = false
	open(p.up)
	open(p.down)
	p.mu.Unlock()
}

// Conns returns the number of live proxied connections.
func (p *Proxy) Conns() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.pairs)
}

// Cuts returns the number of connections Cut has closed so far, over all
// calls.
func (p *Proxy) Cuts() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cuts
}

// Refused returns the number of connections closed at once because Refuse
// was in effect, or because the target could not be reached.
func (p *Proxy) Refused() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.refused
}

// close stops accepting, closes every connection and waits for every
// goroutine of the proxy to end.
func (p *Proxy) close() {
	_ = p.ln.Close()
	p.cancel()
	p.mu.Lock()
	p.closed = true
	pairs := make([]*pair, 0, len(p.pairs))
	for pr := range p.pairs {
		pairs = append(pairs, pr)
		delete(p.pairs, pr)
	}
	p.mu.Unlock()
	for _, pr := range pairs {
		pr.close()
	}
	p.wg.Wait()
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			// A transient accept error (out of descriptors): try again
			// unless the proxy is closing.
			select {
			case <-p.ctx.Done():
				return
			case <-time.After(10 * time.Millisecond):
			}
			continue
		}
		p.mu.Lock()
		refuse := p.refuse
		if refuse {
			p.refused++
		}
		p.mu.Unlock()
		if refuse {
			_ = c.Close()
			continue
		}
		// Dial in the accept goroutine: connections are accepted one at a
		// time, which a test's few clients never notice, and a Refuse or a
		// Cut that follows sees every connection accepted before it.
		d := net.Dialer{Timeout: dialTimeout}
		s, err := d.DialContext(p.ctx, "tcp", p.target)
		if err != nil {
			p.mu.Lock()
			p.refused++
			p.mu.Unlock()
			_ = c.Close()
			continue
		}
		pr := &pair{client: c, server: s, done: make(chan struct{})}
		p.mu.Lock()
		if p.closed || p.refuse {
			if p.refuse {
				p.refused++
			}
			p.mu.Unlock()
			pr.close()
			continue
		}
		p.pairs[pr] = struct{}{}
		p.wg.Add(2)
		p.mu.Unlock()
		go p.pipe(pr, s, c, true)
		go p.pipe(pr, c, s, false)
	}
}

// pipe copies src to dst, waiting while its direction is stalled (up:
// client to target). A clean EOF half-closes dst so the other direction
// can finish; the pair closes when both directions have ended, or at once
// on any error.
func (p *Proxy) pipe(pr *pair, dst, src net.Conn, up bool) {
	defer p.wg.Done()
	buf := make([]byte, 32*1024)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.mu.Lock()
			gate := p.down
			if up {
				gate = p.up
			}
			p.mu.Unlock()
			select {
			case <-gate:
			case <-pr.done:
				return
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				p.drop(pr)
				return
			}
		}
		if err != nil {
			if isEOF(err) {
				if tc, ok := dst.(*net.TCPConn); ok && tc.CloseWrite() == nil {
					pr.mu.Lock()
					pr.halves++
					both := pr.halves == 2
					pr.mu.Unlock()
					if !both {
						return
					}
				}
			}
			p.drop(pr)
			return
		}
	}
}

// drop closes pr and forgets it.
func (p *Proxy) drop(pr *pair) {
	p.mu.Lock()
	delete(p.pairs, pr)
	p.mu.Unlock()
	pr.close()
}

func isEOF(err error) bool { return errors.Is(err, io.EOF) }

func openGate() chan struct{} {
	g := make(chan struct{})
	close(g)
	return g
}

// shut replaces an open gate with a new, unopened one (callers hold p.mu).
func shut(g *chan struct{}) {
	select {
	case <-*g:
		*g = make(chan struct{})
	default: // already shut
	}
}

// open opens a shut gate (callers hold p.mu).
func open(g chan struct{}) {
	select {
	case <-g:
	default:
		close(g)
	}
}

// String describes the proxy (its address and its target).
func (p *Proxy) String() string { return fmt.Sprintf("tcpproxy %s -> %s", p.Addr(), p.target) }
