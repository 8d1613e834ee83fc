package relay

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
)

// exec runs a raw statement written with '?' placeholders ($n on
// PostgreSQL).
func (e env) exec(t *testing.T, q string, args ...any) {
	t.Helper()
	if e.d.Name() == "postgres" {
		for i := 1; strings.Contains(q, "?"); i++ {
			q = strings.Replace(q, "?", "$"+strconv.Itoa(i), 1)
		}
	}
	if _, err := e.db.ExecContext(context.Background(), q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// One row whose headers hold valid JSON of the wrong shape (the number 5:
// possible on every database) is dead-lettered at once, without a publish
// attempt, with a last error naming the column; the 160 events of 40
// other aggregates and the bad row's earlier event are published; its
// later event waits behind it (blocked, as behind any dead row) until an
// operator repairs and requeues it, or flows at once with ReleaseOnDead.
// DeadLetter and the DeadLetterHook see it, with its headers empty.
func TestBadRowIsDeadLetteredAlone(t *testing.T) {
	for _, mode := range []string{"block", "release"} {
		t.Run(mode, func(t *testing.T) {
			forEachTarget(t, func(t *testing.T, e env) { testBadRow(t, e, mode == "release") })
		})
	}
}

func testBadRow(t *testing.T, e env, release bool) {
	bad := e.events("bad", 0, 3) // bad/1 gets corrupt headers
	others := e.interleaved(40, 4)
	evs := append(others[:80:80], bad...)
	evs = append(evs, others[80:]...)
	e.insert(t, evs)
	e.exec(t, "UPDATE "+e.d.Table()+" SET headers = '5' WHERE id = ?", bad[1].ID)

	rec := newRecorder(nil)
	hooks := &hookRecorder{}
	dl := newRecorder(nil)
	cfg := testConfig("r1")
	cfg.Hooks = hooks
	cfg.DeadLetter = dl
	cfg.BatchSize = 50 // several batches: the bad row is not in the first
	cfg.PollInterval = 20 * time.Millisecond
	cfg.ReleaseOnDead = release
	r := newRelay(t, e, rec, cfg)
	cycles := armCycles(r)
	stop := start(t, r)

	want := len(others) + 1 // bad/0 too
	if release {
		want++ // bad/2 flows past the dead bad/1
	}
	waitFor(t, 30*time.Second, "the other events published", func() bool { return rec.published() >= want })
	waitFor(t, 10*time.Second, "the bad row dead", func() bool { return e.stats(t).Dead == 1 })
	// Polls after the dead letter: a blocked bad/2 must stay put.
	for range 3 {
		nextCycle(t, cycles, "a poll", func(s cycleSignal) bool { return s.Reason == reasonPoll })
	}
	rec.mu.Lock()
	got, count := len(rec.got), rec.count[bad[1].ID]
	later := rec.count[bad[2].ID]
	rec.mu.Unlock()
	if got != want || count != 0 || (later == 1) != release {
		t.Fatalf("published %d (bad/1 %d times, bad/2 %d times), want %d: the bad row never, bad/2 only with ReleaseOnDead",
			got, count, later, want)
	}
	rec.check(t)

	ctx := context.Background()
	row, err := e.d.Get(ctx, e.db, bad[1].ID)
	if err != nil {
		t.Fatalf("Get of the bad row: %v", err)
	}
	if row.State != dialects.StateDead || row.Attempts != 1 ||
		!strings.HasPrefix(row.LastError, "bad row: column headers: json: cannot unmarshal number") {
		t.Fatalf("bad row: state %v, attempts %d, last error %q; want dead after 1 attempt, naming the headers",
			row.State, row.Attempts, row.LastError)
	}
	if !errors.Is(row.Bad, dialects.ErrBadRow) || row.Bad.Column != "headers" || row.Bad.Raw != "5" {
		t.Fatalf("Get: Bad = %+v, want the headers column with its raw text", row.Bad)
	}
	dead := dl.snapshot()
	if len(dead) != 1 || dead[0].ID != bad[1].ID || dead[0].Headers != nil || string(dead[0].Payload) != "bad/1" ||
		dead[0].Dead == nil || dead[0].Dead.Error != row.LastError {
		t.Fatalf("dead-letter publisher got %+v, want bad/1 with its payload, no headers and the error", dead)
	}
	bl, err := e.d.Blockers(ctx, e.db, time.Now(), 10)
	if err != nil {
		t.Fatal(err)
	}
	if release != (len(bl) == 0) || (!release && (bl[0].Head == nil || bl[0].Head.ID != bad[1].ID)) {
		t.Fatalf("blockers %+v: want the bad row's aggregate blocked by it (none with ReleaseOnDead)", bl)
	}

	if !release {
		// The operator's way out: repair the column, requeue the row; it is
		// published first, then bad/2.
		e.exec(t, "UPDATE "+e.d.Table()+" SET headers = NULL WHERE id = ?", bad[1].ID)
		if n, err := e.d.Requeue(ctx, e.db, dialects.RequeueFilter{IDs: []string{bad[1].ID}}, time.Now()); err != nil || n != 1 {
			t.Fatalf("requeue: %d, %v", n, err)
		}
		want += 2
		waitFor(t, 20*time.Second, "bad/1 and bad/2 published after the requeue", func() bool { return rec.published() == want })
	}
	stop()
	rec.check(t) // the recorder checks bad/1 before bad/2
	hooks.mu.Lock()
	if len(hooks.dead) != 1 || hooks.dead[0] != bad[1].ID {
		t.Errorf("DeadLetterHook saw %v, want bad/1", hooks.dead)
	}
	hooks.mu.Unlock()
}

// A bad row behind an earlier row of its aggregate that fails in the same
// batch is not dead-lettered then: the failure holds the aggregate, and
// the bad row stays pending (no attempt counted) until the earlier row is
// published; only then is it dead-lettered.
func TestBadRowWaitsBehindAnEarlierFailure(t *testing.T) {
	forEachTarget(t, func(t *testing.T, e env) {
		evs := e.events("x", 0, 2)
		e.insert(t, append(evs, e.events("y", 0, 2)...))
		e.exec(t, "UPDATE "+e.d.Table()+" SET headers = '[1]' WHERE id = ?", evs[1].ID)
		var mu sync.Mutex
		var log []string // publishes and dead letters, in order
		failed := false
		rec := newRecorder(func(m Message) error {
			mu.Lock()
			defer mu.Unlock()
			if m.ID == evs[0].ID && !failed {
				failed = true
				return errors.New("try again")
			}
			log = append(log, "pub "+string(m.Payload))
			return nil
		})
		dl := &funcPublisher{fn: func(m Message) {
			mu.Lock()
			log = append(log, "dead "+string(m.Payload))
			mu.Unlock()
		}}
		cfg := testConfig("r1")
		cfg.DeadLetter = dl
		// The retry comes long after the first cycle's signal, when the
		// test looks at the bad row.
		cfg.Backoff = func(int) time.Duration { return 500 * time.Millisecond }
		r := newRelay(t, e, rec, cfg)
		cycles := armCycles(r)
		stop := start(t, r)
		first := nextCycle(t, cycles, "the first batch", func(s cycleSignal) bool { return s.Claimed > 0 })
		if first.Published != 2 {
			t.Fatalf("first cycle published %d, want y's 2", first.Published)
		}
		attempts, state := e.rowState(t, evs[1].ID)
		if attempts != 0 || state != dialects.StatePending {
			t.Fatalf("bad row after its aggregate's first failure: attempts %d, state %v; want pending, untouched", attempts, state)
		}
		waitFor(t, 20*time.Second, "the bad row dead", func() bool { return e.stats(t).Dead == 1 })
		stop()
		mu.Lock()
		defer mu.Unlock()
		if got := strings.Join(log, ", "); !strings.HasSuffix(got, "pub x/0, dead x/1") {
			t.Fatalf("log %q: want x/0 published, then x/1 dead-lettered", got)
		}
	})
}

// funcPublisher accepts every message and calls fn with each.
type funcPublisher struct{ fn func(Message) }

func (p *funcPublisher) Publish(_ context.Context, batch []Message, _ []error) {
	for _, m := range batch {
		p.fn(m)
	}
}

// rowState reads attempts and state of one event with plain SQL.
func (e env) rowState(t *testing.T, id string) (int, dialects.State) {
	t.Helper()
	q := "SELECT attempts, state FROM " + e.d.Table() + " WHERE id = ?"
	if e.d.Name() == "postgres" {
		q = strings.Replace(q, "?", "$1", 1)
	}
	var attempts int
	var state dialects.State
	if err := e.db.QueryRowContext(context.Background(), q, id).Scan(&attempts, &state); err != nil {
		t.Fatalf("row %s: %v", id, err)
	}
	return attempts, state
}
