package natsnotify

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func startServer(t *testing.T, port int) *server.Server {
	t.Helper()
	s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: port, NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("embedded nats-server not ready")
	}
	return s
}

func waitWake(t *testing.T, c <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-c:
	case <-time.After(20 * time.Second):
		t.Fatalf("no wake: %s", what)
	}
}

func TestValidateSubject(t *testing.T) {
	for _, s := range []string{"", "a..b", ".a", "a.", "a.*", "a.>", "a b", "a\tb", "é"} {
		if err := ValidateSubject(s); !errors.Is(err, ErrInvalidSubject) {
			t.Errorf("ValidateSubject(%q) = %v", s, err)
		}
	}
	for _, s := range []string{"jitoutbox.wake", "a", "a-b.c_d"} {
		if err := ValidateSubject(s); err != nil {
			t.Errorf("ValidateSubject(%q) = %v", s, err)
		}
	}
	if _, err := NewNotifier(nil); !errors.Is(err, ErrInvalidOption) {
		t.Errorf("nil conn: %v", err)
	}
}

func TestWakeAcrossConnectionsAndReconnect(t *testing.T) {
	s := startServer(t, -1)
	port := s.Addr().(*net.TCPAddr).Port
	url := s.ClientURL()
	opts := []nats.Option{nats.MaxReconnects(-1), nats.ReconnectWait(20 * time.Millisecond)}
	pubConn, err := nats.Connect(url, opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer pubConn.Close()
	subConn, err := nats.Connect(url, opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer subConn.Close()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	l, err := NewListener(subConn, WithSubject("test.wake"))
	if err != nil {
		t.Fatal(err)
	}
	l.cfg.reconnectCheck = 10 * time.Millisecond
	wakes, err := l.Listen(ctx)
	if err != nil {
		t.Fatal(err)
	}
	waitWake(t, wakes, "initial")
	if err := subConn.Flush(); err != nil { // the subscription is on the server
		t.Fatal(err)
	}

	n, err := NewNotifier(pubConn, WithSubject("test.wake"))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- n.Run(ctx) }()
	n.Notify()
	waitWake(t, wakes, "after Notify")

	// Restart the server on the same port: the listener wakes after the
	// reconnect (wakes sent meanwhile were lost), and wakes flow again.
	s.Shutdown()
	s.WaitForShutdown()
	s2 := startServer(t, port)
	defer func() { s2.Shutdown(); s2.WaitForShutdown() }()
	waitWake(t, wakes, "after reconnect")
	for _, c := range []*nats.Conn{subConn, pubConn} {
		deadline := time.Now().Add(10 * time.Second)
		for !c.IsConnected() || c.Flush() != nil {
			if time.Now().After(deadline) {
				t.Fatal("connection did not come back")
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	n.Notify()
	waitWake(t, wakes, "Notify after the restart")

	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	pubConn.Close()
	subConn.Close()
}
