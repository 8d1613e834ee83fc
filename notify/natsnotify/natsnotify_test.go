package natsnotify

import (
	"context"
	"errors"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/jitoutbox/jitoutbox/notify"

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

// waitWake waits for a wake and returns what it names.
func waitWake(t *testing.T, w *notify.Wakes, what string) (parts []int, any bool) {
	t.Helper()
	select {
	case <-w.C():
		return w.Take()
	case <-time.After(20 * time.Second):
		t.Fatalf("no wake: %s", what)
		return nil, false
	}
}

// waitAny waits for a wake for any partition (a listener that may have
// missed messages).
func waitAny(t *testing.T, w *notify.Wakes, what string) {
	t.Helper()
	if parts, any := waitWake(t, w, what); !any {
		t.Fatalf("%s: a wake for %v, want one for any partition", what, parts)
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
	wakes := notify.NewWakes()
	if err := l.Listen(ctx, wakes); err != nil {
		t.Fatal(err)
	}
	waitAny(t, wakes, "initial")
	if err := subConn.Flush(); err != nil { // the subscription is on the server
		t.Fatal(err)
	}

	n, err := NewNotifier(pubConn, WithSubject("test.wake"))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- n.Run(ctx) }()
	n.Notify([]int{9})
	n.Notify([]int{2})
	var got []int
	for len(got) < 2 {
		parts, any := waitWake(t, wakes, "after Notify")
		if any {
			t.Fatalf("a wake for any partition after Notify(9), Notify(2); want the partitions named")
		}
		got = append(got, parts...)
	}
	if slices.Sort(got); !slices.Equal(got, []int{2, 9}) {
		t.Fatalf("woken for %v, want [2 9]", got)
	}
	n.Notify(nil)
	waitAny(t, wakes, "after Notify(nil)")

	// Restart the server on the same port: the listener wakes after the
	// reconnect (wakes sent meanwhile were lost), and wakes flow again.
	s.Shutdown()
	s.WaitForShutdown()
	s2 := startServer(t, port)
	defer func() { s2.Shutdown(); s2.WaitForShutdown() }()
	waitAny(t, wakes, "after reconnect")
	for _, c := range []*nats.Conn{subConn, pubConn} {
		deadline := time.Now().Add(10 * time.Second)
		for !c.IsConnected() || c.Flush() != nil {
			if time.Now().After(deadline) {
				t.Fatal("connection did not come back")
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	n.Notify([]int{5})
	for {
		// A reconnect's wake (any) may come first.
		if parts, any := waitWake(t, wakes, "Notify after the restart"); !any {
			if !slices.Equal(parts, []int{5}) {
				t.Fatalf("woken for %v after Notify(5)", parts)
			}
			break
		}
	}

	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	pubConn.Close()
	subConn.Close()
}
