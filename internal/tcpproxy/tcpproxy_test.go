package tcpproxy

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// echoServer echoes every connection's bytes and keeps what it received.
type echoServer struct {
	ln     net.Listener
	wg     sync.WaitGroup
	mu     sync.Mutex
	got    bytes.Buffer
	conns  map[net.Conn]struct{}
	closed int // connections that ended (EOF or error)
	handle func(net.Conn)
}

// newEcho starts an echo server closed when t ends. handle, when not nil,
// replaces the echo.
func newEcho(t testing.TB, handle func(net.Conn)) *echoServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &echoServer{ln: ln, conns: make(map[net.Conn]struct{}), handle: handle}
	s.wg.Add(1)
	go s.accept()
	t.Cleanup(func() {
		_ = ln.Close()
		s.mu.Lock()
		for c := range s.conns {
			_ = c.Close()
		}
		s.mu.Unlock()
		s.wg.Wait()
	})
	return s
}

func (s *echoServer) accept() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		s.conns[c] = struct{}{}
		s.mu.Unlock()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer func() {
				_ = c.Close()
				s.mu.Lock()
				delete(s.conns, c)
				s.closed++
				s.mu.Unlock()
			}()
			if s.handle != nil {
				s.handle(c)
				return
			}
			buf := make([]byte, 4096)
			for {
				n, err := c.Read(buf)
				if n > 0 {
					s.mu.Lock()
					s.got.Write(buf[:n])
					s.mu.Unlock()
					if _, err := c.Write(buf[:n]); err != nil {
						return
					}
				}
				if err != nil {
					return
				}
			}
		}()
	}
}

func (s *echoServer) addr() string { return s.ln.Addr().String() }

func (s *echoServer) received() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.got.String()
}

func (s *echoServer) ended() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// dial connects to addr, closing the connection when t ends.
func dial(t testing.TB, addr string) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// roundTrip writes msg and reads it back.
func roundTrip(t testing.TB, c net.Conn, msg string) {
	t.Helper()
	if _, err := c.Write([]byte(msg)); err != nil {
		t.Fatalf("write: %v", err)
	}
	expect(t, c, msg)
}

// expect reads len(want) bytes within 10 s and compares them with want.
func expect(t testing.TB, c net.Conn, want string) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	got := make([]byte, len(want))
	if _, err := io.ReadFull(c, got); err != nil {
		t.Fatalf("read: %v (got %q)", err, got)
	}
	if string(got) != want {
		t.Fatalf("read %q, want %q", got, want)
	}
}

// expectClosed checks that c is closed by the other side within 10 s.
func expectClosed(t testing.TB, c net.Conn) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	n, err := c.Read(make([]byte, 1))
	if err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("connection still open: read %d bytes, err %v", n, err)
	}
}

// expectSilent checks that nothing arrives on c for a short while (the
// proxy holds it back; a short wait can only miss a bug, never invent one).
func expectSilent(t testing.TB, c net.Conn) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	n, err := c.Read(make([]byte, 64))
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read %d bytes, err %v while stalled; want nothing", n, err)
	}
	_ = c.SetReadDeadline(time.Time{})
}

// eventually polls cond until it holds or 10 s pass.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestForwardAndConns(t *testing.T) {
	srv := newEcho(t, nil)
	p := New(t, srv.addr())
	if !strings.HasPrefix(p.Addr(), "127.0.0.1:") || p.Addr() == srv.addr() {
		t.Fatalf("Addr = %q (target %q)", p.Addr(), srv.addr())
	}
	a, b := dial(t, p.Addr()), dial(t, p.Addr())
	roundTrip(t, a, "hello")
	roundTrip(t, b, "world")
	if n := p.Conns(); n != 2 {
		t.Errorf("Conns = %d, want 2", n)
	}
	big := strings.Repeat("0123456789", 20000) // more than one buffer
	roundTrip(t, a, big)
	if got := srv.received(); len(got) != len("hello")+len("world")+len(big) {
		t.Errorf("server received %d bytes", len(got))
	}
	_ = a.Close()
	eventually(t, "Conns to drop to 1", func() bool { return p.Conns() == 1 })
	eventually(t, "the server to see the close", func() bool { return srv.ended() == 1 })
}

func TestCut(t *testing.T) {
	srv := newEcho(t, nil)
	p := New(t, srv.addr())
	a, b := dial(t, p.Addr()), dial(t, p.Addr())
	roundTrip(t, a, "a")
	roundTrip(t, b, "b")
	p.Cut()
	expectClosed(t, a)
	expectClosed(t, b)
	eventually(t, "the server to see both closes", func() bool { return srv.ended() == 2 })
	if p.Conns() != 0 || p.Cuts() != 2 {
		t.Errorf("after Cut: Conns = %d, Cuts = %d; want 0, 2", p.Conns(), p.Cuts())
	}
	c := dial(t, p.Addr()) // still accepting
	roundTrip(t, c, "c")
	p.Cut()
	expectClosed(t, c)
	if p.Cuts() != 3 {
		t.Errorf("Cuts = %d, want 3", p.Cuts())
	}
	p.Cut() // nothing live: no-op
	if p.Cuts() != 3 {
		t.Errorf("Cuts = %d after an empty Cut, want 3", p.Cuts())
	}
}

func TestRefuseAndResume(t *testing.T) {
	srv := newEcho(t, nil)
	p := New(t, srv.addr())
	live := dial(t, p.Addr())
	roundTrip(t, live, "before")
	p.Refuse()
	for range 3 {
		expectClosed(t, dial(t, p.Addr()))
	}
	roundTrip(t, live, "still open") // Refuse leaves live connections alone
	if p.Refused() != 3 || p.Conns() != 1 {
		t.Errorf("Refused = %d, Conns = %d; want 3, 1", p.Refused(), p.Conns())
	}
	p.Resume()
	roundTrip(t, dial(t, p.Addr()), "after")
	if p.Refused() != 3 {
		t.Errorf("Refused = %d after Resume, want 3", p.Refused())
	}
}

func TestStall(t *testing.T) {
	srv := newEcho(t, nil)
	p := New(t, srv.addr())
	a := dial(t, p.Addr())
	roundTrip(t, a, "x")
	p.Stall()
	if _, err := a.Write([]byte("held")); err != nil {
		t.Fatal(err)
	}
	b := dial(t, p.Addr()) // accepted and kept while stalled
	if _, err := b.Write([]byte("new")); err != nil {
		t.Fatal(err)
	}
	expectSilent(t, a)
	expectSilent(t, b)
	if got := srv.received(); got != "x" {
		t.Errorf("server received %q while stalled, want only %q", got, "x")
	}
	eventually(t, "both connections live", func() bool { return p.Conns() == 2 })
	p.Resume()
	expect(t, a, "held")
	expect(t, b, "new")
}

func TestStallDown(t *testing.T) {
	srv := newEcho(t, nil)
	p := New(t, srv.addr())
	a := dial(t, p.Addr())
	p.StallDown()
	if _, err := a.Write([]byte("request")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the request to reach the server", func() bool { return srv.received() == "request" })
	expectSilent(t, a)
	p.Resume()
	expect(t, a, "request")
}

// A client's half-close reaches the target, whose reply still comes back.
func TestHalfClose(t *testing.T) {
	srv := newEcho(t, func(c net.Conn) {
		req, err := io.ReadAll(c) // until the client's EOF
		if err != nil {
			return
		}
		_, _ = c.Write([]byte("reply to " + string(req)))
	})
	p := New(t, srv.addr())
	c := dial(t, p.Addr())
	if _, err := c.Write([]byte("req")); err != nil {
		t.Fatal(err)
	}
	if err := c.(*net.TCPConn).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	got, err := io.ReadAll(c)
	if err != nil || string(got) != "reply to req" {
		t.Fatalf("read %q, %v; want %q", got, err, "reply to req")
	}
	eventually(t, "the pair to close", func() bool { return p.Conns() == 0 })
}

func TestTargetDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	p := New(t, addr)
	expectClosed(t, dial(t, p.Addr()))
	if p.Refused() != 1 || p.Conns() != 0 {
		t.Errorf("Refused = %d, Conns = %d; want 1, 0", p.Refused(), p.Conns())
	}
}

// Cleanup ends every goroutine, even with stalled connections holding
// bytes in both directions.
func TestCleanupEndsGoroutines(t *testing.T) {
	t.Run("stalled", func(t *testing.T) {
		srv := newEcho(t, nil)
		p := New(t, srv.addr())
		c := dial(t, p.Addr())
		roundTrip(t, c, "x")
		p.Stall()
		if _, err := c.Write([]byte("held")); err != nil {
			t.Fatal(err)
		}
		expectSilent(t, c)
	})
	goleak.VerifyNone(t)
}

func TestNewURL(t *testing.T) {
	srv := newEcho(t, nil)
	p, u := NewURL(t, "amqp://guest:guest@"+srv.addr()+"/vhost")
	if want := "amqp://guest:guest@" + p.Addr() + "/vhost"; u != want {
		t.Fatalf("NewURL = %q, want %q", u, want)
	}
	if p.Target() != srv.addr() {
		t.Fatalf("Target = %q, want %q", p.Target(), srv.addr())
	}
	roundTrip(t, dial(t, p.Addr()), "through the URL's proxy")
}

func TestParseTarget(t *testing.T) {
	const addr = "127.0.0.1:40000"
	cases := []struct {
		raw, target, rewritten string
	}{
		{"amqp://guest:guest@127.0.0.1:5672/", "127.0.0.1:5672", "amqp://guest:guest@" + addr + "/"},
		{"amqp://guest:guest@localhost/", "localhost:5672", "amqp://guest:guest@" + addr + "/"},
		{"nats://127.0.0.1:4222", "127.0.0.1:4222", "nats://" + addr},
		{"nats://10.0.0.1", "10.0.0.1:4222", "nats://" + addr},
		{"postgres://postgres@127.0.0.1:5432/test?sslmode=disable", "127.0.0.1:5432", "postgres://postgres@" + addr + "/test?sslmode=disable"},
		{"root@tcp(127.0.0.1:3306)/test?parseTime=true", "127.0.0.1:3306", "root@tcp(" + addr + ")/test?parseTime=true"},
		{"root@tcp(db)/test", "db:3306", "root@tcp(" + addr + ")/test"},
		{"127.0.0.1:9092", "127.0.0.1:9092", addr},
		{"[::1]:9092", "[::1]:9092", addr},
	}
	for _, c := range cases {
		target, rewrite, err := parseTarget(c.raw)
		if err != nil {
			t.Errorf("parseTarget(%q): %v", c.raw, err)
			continue
		}
		if target != c.target {
			t.Errorf("parseTarget(%q) target = %q, want %q", c.raw, target, c.target)
		}
		if got := rewrite(addr); got != c.rewritten {
			t.Errorf("parseTarget(%q) rewrite = %q, want %q", c.raw, got, c.rewritten)
		}
	}
	for _, raw := range []string{
		"nats://a:4222,nats://b:4222",
		"kafka://a:9092,b:9092",
		"a:9092,b:9092",
		"foo://host",            // no default port
		"postgres:///test",      // unix socket
		"localhost",             // no port
		"root@tcp(127.0.0.1/db", // unclosed
		"amqp://guest:s3cret@127.0.0.1:bad/",
	} {
		if _, _, err := parseTarget(raw); err == nil {
			t.Errorf("parseTarget(%q) = nil error", raw)
		} else if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("parseTarget error repeats the password: %v", err)
		}
	}
}
