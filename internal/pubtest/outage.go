package pubtest

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/internal/testdb"
	"github.com/jitoutbox/jitoutbox/relay"
	"github.com/jitoutbox/jitoutbox/txoutbox"
)

// Cut is a broker a test can make unavailable and bring back.
type Cut struct {
	// Publisher is the publisher under test.
	Publisher relay.Publisher
	// Down makes the broker unavailable (stopped, or its network cut);
	// Up brings it back.
	Down, Up func(t testing.TB)
}

// OutageDuration is how long Outage keeps the broker down.
const OutageDuration = 3 * time.Second

// Outage runs, on every database target (SQLite, PostgreSQL with lib/pq
// and pgx, MariaDB; the server ones when their variable is set), a relay
// with the default timings publishing through the publisher of newCut,
// while one-event aggregates trickle in, one commit each (every other one
// time-critical, handed over to the relay), during a broker outage of
// OutageDuration. It checks that the outage spends no attempt (the
// attempts column stays 0 for every row), that the relay logs it once when
// it starts and once when it ends, and that once the broker is back every
// event is published (within a generous deadline: speed is not asserted).
func Outage(t *testing.T, newCut func(t *testing.T) Cut) {
	for _, tgt := range testdb.Targets() {
		t.Run(tgt.Name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			c := newCut(t)
			db, _ := tgt.Open(t)
			d := testdb.NewDialect(t, tgt.Dialect)
			if err := d.Migrate(ctx, db); err != nil {
				t.Fatal(err)
			}
			logs := &LogBuffer{}
			r, err := relay.New(db, d, c.Publisher, relay.Config{Owner: "outage",
				Logger: slog.New(slog.NewTextHandler(logs, nil)), MaxAttempts: 2})
			if err != nil {
				t.Fatal(err)
			}
			ob, err := txoutbox.New(db, d, txoutbox.WithRelay(r))
			if err != nil {
				t.Fatal(err)
			}
			rctx, stop := context.WithCancel(ctx)
			var wg sync.WaitGroup
			wg.Go(func() {
				if err := r.Run(rctx); err != nil {
					t.Errorf("Run: %v", err)
				}
			})
			defer wg.Wait()
			defer stop()

			commit := func(k int) {
				t.Helper()
				var opts []txoutbox.TxOption
				if k%2 == 1 {
					opts = append(opts, txoutbox.TimeCritical())
				}
				tx, err := ob.Begin(ctx, nil, opts...)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := tx.Add(txoutbox.Event{AggregateType: "order", AggregateID: fmt.Sprint("one-", k),
					EventType: "order.placed", Payload: fmt.Appendf(nil, "%d", k)}); err != nil {
					t.Fatal(err)
				}
				if err := tx.Commit(); err != nil {
					t.Fatal(err)
				}
			}
			commit(0)
			WaitPending(t, ctx, db, d, 0, 30*time.Second) // the broker is up: the publisher connects

			c.Down(t)
			const n = 8
			for k := 1; k <= n; k++ {
				commit(k)
				time.Sleep(OutageDuration / n) // trickling traffic
			}
			if a := MaxAttempts(t, db, d); a != 0 {
				t.Errorf("attempts spent during the outage: max attempts %d", a)
			}
			if p := Pending(t, ctx, db, d); p != n {
				t.Errorf("%d events pending during the outage, want %d", p, n)
			}
			c.Up(t)
			restored := time.Now()
			defer func() {
				if t.Failed() {
					t.Logf("relay log:\n%s", logs.String())
				}
			}()
			WaitPending(t, ctx, db, d, 0, 30*time.Second)
			t.Logf("broker back -> last pending event published: %v", time.Since(restored))
			if a := MaxAttempts(t, db, d); a != 0 {
				t.Errorf("attempts spent: max attempts %d", a)
			}
			if st, err := d.Stats(ctx, db); err != nil || st.Dead != 0 {
				var last sql.NullString
				_ = db.QueryRow("SELECT MAX(last_error) FROM " + d.Table()).Scan(&last)
				t.Errorf("after the outage: %+v, %v; want nothing dead (last error %q)", st, err, last.String)
			}
			deadline := time.Now().Add(10 * time.Second)
			for !strings.Contains(logs.String(), "broker recovered") && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			s := logs.String()
			if c := strings.Count(s, "broker outage;"); c != 1 {
				t.Errorf("outage start logged %d times, want once:\n%s", c, s)
			}
			if c := strings.Count(s, "broker recovered"); c != 1 {
				t.Errorf("outage end logged %d times, want once:\n%s", c, s)
			}
		})
	}
}

// Pending returns the number of pending rows.
func Pending(t testing.TB, ctx context.Context, db *sql.DB, d dialects.Dialect) int64 {
	t.Helper()
	st, err := d.Stats(ctx, db)
	if err != nil {
		t.Fatalf("stats: %v", err)
	}
	return st.Pending
}

// WaitPending waits until n rows are pending, failing the test after
// timeout.
func WaitPending(t testing.TB, ctx context.Context, db *sql.DB, d dialects.Dialect, n int64, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		p := Pending(t, ctx, db, d)
		if p == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d rows pending after %v, want %d", p, timeout, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// MaxAttempts returns the largest attempts count of the table's rows.
func MaxAttempts(t testing.TB, db *sql.DB, d dialects.Dialect) int {
	t.Helper()
	var n sql.NullInt64
	if err := db.QueryRow("SELECT MAX(attempts) FROM " + d.Table()).Scan(&n); err != nil {
		t.Fatalf("max attempts: %v", err)
	}
	return int(n.Int64)
}

// LogBuffer collects a logger's output; it is safe for concurrent writes.
type LogBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (l *LogBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String returns what was written.
func (l *LogBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
