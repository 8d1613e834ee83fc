package pgnotify

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/dialects/postgres"
	"github.com/jitoutbox/jitoutbox/internal/redact"
	"github.com/jitoutbox/jitoutbox/internal/testdb"
	"github.com/jitoutbox/jitoutbox/notify"
	"github.com/jitoutbox/jitoutbox/txoutbox"
	"github.com/lib/pq"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func channelName(t *testing.T) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "jit_" + hex.EncodeToString(b[:])
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
// missed notifications).
func waitAny(t *testing.T, w *notify.Wakes, what string) {
	t.Helper()
	if parts, any := waitWake(t, w, what); !any {
		t.Fatalf("%s: a wake for %v, want one for any partition", what, parts)
	}
}

// waitParts waits for a wake that names want; a wake for any partition
// (a reconnect's) may come first.
func waitParts(t *testing.T, w *notify.Wakes, what string, want []int) {
	t.Helper()
	for {
		parts, any := waitWake(t, w, what)
		if any {
			continue
		}
		if !slices.Equal(parts, want) {
			t.Fatalf("%s: woken for %v, want %v", what, parts, want)
		}
		return
	}
}

func TestOptionsValidate(t *testing.T) {
	for _, name := range []string{"", "a;b", "a.b", `x"y`, "has space", "1x"} {
		if _, err := NewListener("postgres://x", WithChannel(name)); !errors.Is(err, ErrInvalidChannel) {
			t.Errorf("WithChannel(%q): err = %v, want ErrInvalidChannel", name, err)
		}
	}
	if _, err := NewListener(""); !errors.Is(err, ErrInvalidOption) {
		t.Errorf("empty DSN: err = %v", err)
	}
	if _, err := NewNotifier(nil); !errors.Is(err, ErrInvalidOption) {
		t.Errorf("nil db: err = %v", err)
	}
	if _, err := NewListener("postgres://x", WithReconnect(0, time.Second)); !errors.Is(err, ErrInvalidOption) {
		t.Errorf("bad reconnect: err = %v", err)
	}
}

// TestNotifyWakesListenerAcrossKill checks the whole path on a real server:
// the listener wakes once LISTEN is in place, a Notify from a Notifier wakes
// it, and after its connection is killed with pg_terminate_backend it
// reconnects, wakes (wakes sent meanwhile were lost), and still receives the
// next Notify.
func TestNotifyWakesListenerAcrossKill(t *testing.T) {
	db, dsn := testdb.Postgres(t, "postgres")
	ch := channelName(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	l, err := NewListener(dsn, WithChannel(ch), WithReconnect(10*time.Millisecond, 200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	wakes := notify.NewWakes()
	if err := l.Listen(ctx, wakes); err != nil {
		t.Fatal(err)
	}
	waitAny(t, wakes, "initial wake after LISTEN")

	n, err := NewNotifier(db, WithChannel(ch))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- n.Run(ctx) }()

	n.Notify([]int{12})
	waitParts(t, wakes, "after Notify(12)", []int{12})
	n.Notify(nil)
	waitAny(t, wakes, "after Notify(nil)")

	// Kill the listener's backend.
	res, err := db.ExecContext(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE pid <> pg_backend_pid() AND query = 'LISTEN "'||$1||'"'`, ch)
	if err != nil {
		t.Fatal(err)
	}
	if k, _ := res.RowsAffected(); k != 1 {
		t.Fatalf("expected to kill exactly one listener backend, killed %d", k)
	}
	waitAny(t, wakes, "after reconnect")

	// Wait until LISTEN is back in place, then a Notify must arrive.
	deadline := time.Now().Add(20 * time.Second)
	for {
		var k int
		if err := db.QueryRowContext(ctx, `SELECT count(*) FROM pg_stat_activity WHERE query = 'LISTEN "'||$1||'"'`, ch).Scan(&k); err != nil {
			t.Fatal(err)
		}
		if k == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("listener did not LISTEN again")
		}
		time.Sleep(10 * time.Millisecond)
	}
	n.Notify([]int{3, 40})
	waitParts(t, wakes, "Notify after the listener was killed", []int{3, 40})

	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run returned %v", err)
	}
}

func TestNotifierCoalesces(t *testing.T) {
	db, _ := testdb.Postgres(t, "postgres")
	n, err := NewNotifier(db, WithChannel(channelName(t)))
	if err != nil {
		t.Fatal(err)
	}
	// Before Run, any number of Notify calls never block and leave one
	// send due, naming the union of their partitions.
	for i := 0; i < 10000; i++ {
		n.Notify([]int{i % 4})
	}
	if len(n.pending.C()) != 1 {
		t.Fatalf("pending sends = %d, want 1", len(n.pending.C()))
	}
	if parts, any := n.pending.Take(); any || !slices.Equal(parts, []int{0, 1, 2, 3}) {
		t.Fatalf("the send due names %v (any %v), want [0 1 2 3]", parts, any)
	}
}

// TestTxNotifierDeliversOnCommitOnly runs the in-transaction mode through
// txoutbox on a real server and counts raw notifications: a rolled-back
// time-critical transaction sends none, a committed one exactly one, whose
// payload names the event's partition.
func TestTxNotifierDeliversOnCommitOnly(t *testing.T) {
	db, dsn := testdb.Postgres(t, "postgres")
	ch := channelName(t)
	ctx := context.Background()
	d, err := postgres.New()
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Migrate(ctx, db); err != nil {
		t.Fatal(err)
	}
	raw := pq.NewListener(dsn, 10*time.Millisecond, time.Second, nil)
	defer raw.Close()
	if err := raw.Listen(ch); err != nil {
		t.Fatal(err)
	}
	tn, err := NewTxNotifier(WithChannel(ch))
	if err != nil {
		t.Fatal(err)
	}
	ob, err := txoutbox.New(db, d, txoutbox.WithNotifier(tn))
	if err != nil {
		t.Fatal(err)
	}
	ev := txoutbox.Event{AggregateType: "order", AggregateID: "1", EventType: "order.placed", Payload: []byte(`{}`)}
	for _, commit := range []bool{false, true} {
		tx, _ := ob.Begin(ctx, nil, txoutbox.TimeCritical())
		if _, err := tx.Add(ev); err != nil {
			t.Fatal(err)
		}
		if commit {
			err = tx.Commit()
		} else {
			err = tx.Rollback()
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.ExecContext(ctx, "SELECT pg_notify($1, 'marker')", ch); err != nil {
		t.Fatal(err)
	}
	part := dialects.PartitionOf(ev.AggregateType, ev.AggregateID, dialects.DefaultPartitions)
	wakes := 0
	for {
		select {
		case n := <-raw.Notify:
			if n == nil {
				continue
			}
			if n.Extra == "marker" {
				if wakes != 1 {
					t.Fatalf("got %d notifications for one committed and one rolled-back transaction, want 1", wakes)
				}
				return
			}
			wakes++
			if want := string(notify.AppendPayload(nil, []int{part})); n.Extra != want {
				t.Errorf("payload %q, want %q (the event's partition)", n.Extra, want)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("marker notification never arrived")
		}
	}
}

// TestListenerLogsNoPassword: lib/pq quotes a DSN it cannot parse (here an
// unescaped '%' in the password) in its error, which the listener logs on
// every reconnect attempt; the password, in every form, appears in no log
// line. No server is needed: the DSN fails to parse before any dial.
func TestListenerLogsNoPassword(t *testing.T) {
	const pw = `pw%zzSECRET#"x`
	for _, dsn := range []string{
		"postgres://u:" + pw + "@127.0.0.1:1/db?sslmode=disable",
		"postgres://u:" + pw + "@127.0.0.1:1/db?sslmode=%zz",
	} {
		var buf syncBuf
		log := slog.New(slog.NewJSONHandler(&buf, nil))
		l, err := NewListener(dsn, WithLogger(log), WithReconnect(time.Millisecond, 5*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		if err := l.Listen(ctx, notify.NewWakes()); err != nil {
			cancel()
			t.Fatal(err)
		}
		deadline := time.Now().Add(10 * time.Second)
		for !strings.Contains(buf.String(), "LISTEN failed") && !strings.Contains(buf.String(), "cannot connect") {
			if time.Now().After(deadline) {
				cancel()
				t.Fatalf("no failure logged: %q", buf.String())
			}
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
		out := buf.String()
		for _, leak := range []string{"SECRET", "zz", `\"x`} {
			if strings.Contains(out, leak) {
				t.Errorf("DSN %q: the log holds %q:\n%s", dsn, leak, out)
			}
		}
		if !strings.Contains(out, redact.Mask) && !strings.Contains(out, "invalid") {
			t.Logf("log: %s", out)
		}
	}
}

// syncBuf is a bytes.Buffer safe for concurrent use.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
