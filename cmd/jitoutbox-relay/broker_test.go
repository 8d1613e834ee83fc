package main

import (
	"context"
	"database/sql"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects/sqlite"
	"github.com/jitoutbox/jitoutbox/internal/e2e/relayproc"
	"github.com/jitoutbox/jitoutbox/internal/testdb"
	"github.com/jitoutbox/jitoutbox/txoutbox"
)

// The end-to-end tests of each broker commit good events and one poison
// event (one the broker refuses for good) to SQLite, run the command, and
// check that the good events are consumed in order and the poison event
// arrives at the -dead-letter destination with its dead-letter headers.

// e2eEvent is one committed event.
type e2eEvent struct {
	id, aggType, aggID, evType string
	payload                    []byte
}

// sqliteOutbox returns the DSN of a fresh migrated SQLite outbox.
func sqliteOutbox(t *testing.T) string {
	t.Helper()
	dsn := testdb.SQLiteDSN(filepath.Join(t.TempDir(), "outbox.db"))
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	d, err := sqlite.New()
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Migrate(context.Background(), db); err != nil {
		t.Fatal(err)
	}
	return dsn
}

// commitEvents commits evs, one transaction each, and sets their ids.
func commitEvents(t *testing.T, dsn string, evs []*e2eEvent) {
	t.Helper()
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	d, err := sqlite.New()
	if err != nil {
		t.Fatal(err)
	}
	ob, err := txoutbox.New(db, d)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs {
		tx, err := ob.Begin(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if ev.id, err = tx.Add(txoutbox.Event{AggregateType: ev.aggType, AggregateID: ev.aggID,
			EventType: ev.evType, Payload: ev.payload}); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
	}
}

// goodAndPoison returns n events of aggregate type "order" over two
// aggregates, numbered in their payloads, and poison (already in evs,
// between the good ones).
func goodAndPoison(n int, poison *e2eEvent) (evs []*e2eEvent, good []*e2eEvent) {
	for i := range n {
		ev := &e2eEvent{aggType: "order", aggID: strconv.Itoa(i % 2), evType: "placed", payload: []byte(strconv.Itoa(i))}
		good = append(good, ev)
		evs = append(evs, ev)
		if i == n/2 {
			evs = append(evs, poison)
		}
	}
	return evs, good
}

// cmdRun is the command running in-process.
type cmdRun struct {
	log    *relayproc.Log
	cancel context.CancelFunc
	done   chan error
}

// startRun runs the command with args until stop; the test fails if it
// does not stop cleanly.
func startRun(t *testing.T, args ...string) *cmdRun {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := &cmdRun{log: relayproc.NewLog(), cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- run(ctx, args, envOf(nil), r.log, r.log) }()
	t.Cleanup(func() { r.stop(t) })
	return r
}

func (r *cmdRun) stop(t *testing.T) {
	t.Helper()
	if r.cancel == nil {
		return
	}
	r.cancel()
	r.cancel = nil
	select {
	case err := <-r.done:
		if err != nil {
			t.Errorf("run: %v\n%s", err, r.log.String())
		}
	case <-time.After(30 * time.Second):
		t.Errorf("run did not return after cancel\n%s", r.log.String())
	}
}

// checkGood checks that got holds the payloads of good, in order per
// aggregate, each once. got is "aggregate id/payload".
func checkGood(t *testing.T, good []*e2eEvent, got []string) {
	t.Helper()
	if len(got) != len(good) {
		t.Fatalf("consumed %d events, want %d: %q", len(got), len(good), got)
	}
	next := map[string]int{}
	for _, g := range got {
		agg, p, _ := strings.Cut(g, "/")
		i, err := strconv.Atoi(p)
		if err != nil || i%2 != mustAtoi(t, agg) || i < next[agg] {
			t.Fatalf("event %q out of order or of the wrong aggregate: %q", g, got)
		}
		next[agg] = i + 1
	}
}

func mustAtoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// checkDead checks the dead-letter headers given by get.
func checkDead(t *testing.T, get func(string) string) {
	t.Helper()
	if e := get("Jitoutbox-Dead-Error"); e == "" {
		t.Error("dead letter without Jitoutbox-Dead-Error")
	}
	if a := get("Jitoutbox-Dead-Attempts"); a != "1" {
		t.Errorf("Jitoutbox-Dead-Attempts = %q, want 1 (a permanent error)", a)
	}
	at, err := time.Parse(time.RFC3339Nano, get("Jitoutbox-Dead-At"))
	if err != nil || time.Since(at) > time.Minute || time.Since(at) < 0 {
		t.Errorf("Jitoutbox-Dead-At = %q (%v), want the last minute", get("Jitoutbox-Dead-At"), err)
	}
}
