package rabbitpub_test

import (
	"net"
	"net/url"
	"sync"
	"testing"
)

// tcpProxy forwards TCP connections to a broker so that a test can cut,
// stall or refuse them without touching the shared broker.
type tcpProxy struct {
	ln     net.Listener
	target string
	wg     sync.WaitGroup

	mu     sync.Mutex
	pairs  map[*pair]struct{}
	refuse bool
	gate   chan struct{} // closed while broker-to-client traffic flows
	upGate chan struct{} // closed while client-to-broker traffic flows
}

// pair is one proxied connection.
type pair struct {
	client, server net.Conn
	done           chan struct{}
	once           sync.Once
}

func (p *pair) close() {
	p.once.Do(func() {
		close(p.done)
		_ = p.client.Close()
		_ = p.server.Close()
	})
}

// newProxy starts a proxy to brokerURL's host and returns it with the URL
// that goes through it. The proxy stops when the test ends.
func newProxy(t testing.TB, brokerURL string) (*tcpProxy, string) {
	t.Helper()
	u, err := url.Parse(brokerURL)
	if err != nil {
		t.Fatalf("proxy: parse broker URL: %v", err)
	}
	target := u.Host
	if u.Port() == "" {
		target = net.JoinHostPort(u.Hostname(), "5672")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("proxy: listen: %v", err)
	}
	open := make(chan struct{})
	close(open)
	p := &tcpProxy{ln: ln, target: target, pairs: make(map[*pair]struct{}), gate: open, upGate: open}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(func() {
		_ = ln.Close()
		p.Resume()
		p.Cut()
		p.wg.Wait()
	})
	u.Host = ln.Addr().String()
	return p, u.String()
}

func (p *tcpProxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		refuse := p.refuse
		p.mu.Unlock()
		if refuse {
			_ = c.Close()
			continue
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			_ = c.Close()
			continue
		}
		pr := &pair{client: c, server: s, done: make(chan struct{})}
		p.mu.Lock()
		p.pairs[pr] = struct{}{}
		p.mu.Unlock()
		p.wg.Add(2)
		go p.pipe(pr, s, c, true)
		go p.pipe(pr, c, s, false)
	}
}

// pipe copies src to dst until either side closes, waiting while the
// proxy stalls its direction (up: client to broker).
func (p *tcpProxy) pipe(pr *pair, dst, src net.Conn, up bool) {
	defer p.wg.Done()
	defer func() {
		pr.close()
		p.mu.Lock()
		delete(p.pairs, pr)
		p.mu.Unlock()
	}()
	buf := make([]byte, 32*1024)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.mu.Lock()
			gate := p.gate
			if up {
				gate = p.upGate
			}
			p.mu.Unlock()
			select {
			case <-gate:
			case <-pr.done:
				return
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// Cut closes every proxied connection, as a network failure would.
func (p *tcpProxy) Cut() {
	p.mu.Lock()
	pairs := make([]*pair, 0, len(p.pairs))
	for pr := range p.pairs {
		pairs = append(pairs, pr)
	}
	p.mu.Unlock()
	for _, pr := range pairs {
		pr.close()
	}
}

// Stall holds back broker-to-client traffic (confirms, returns,
// heartbeats) until Resume; client-to-broker traffic still flows unless
// up is true.
func (p *tcpProxy) Stall(up bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	shut := func(g *chan struct{}) {
		select {
		case <-*g:
			*g = make(chan struct{})
		default:
		}
	}
	shut(&p.gate)
	if up {
		shut(&p.upGate)
	}
}

// Resume lets traffic flow again both ways.
func (p *tcpProxy) Resume() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, g := range []chan struct{}{p.gate, p.upGate} {
		select {
		case <-g:
		default:
			close(g)
		}
	}
}

// Refuse makes the proxy close new connections at once (on) or forward
// them again (off).
func (p *tcpProxy) Refuse(on bool) {
	p.mu.Lock()
	p.refuse = on
	p.mu.Unlock()
}
