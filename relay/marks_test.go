package relay

import (
	"context"
	"database/sql"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/relay/internal/marker"
	"github.com/jitoutbox/jitoutbox/txoutbox"
)

// gatedMarks is a dialect whose Mark waits at a gate while the gate is
// closed (or fails once with failNext), and counts the Mark calls and the
// rows they carried.
type gatedMarks struct {
	dialects.Dialect

	mu       sync.Mutex
	gate     chan struct{} // nil: open
	calls    int
	rows     int
	failNext bool
	entered  chan struct{} // receives when a Mark waits at the gate
}

func (g *gatedMarks) close() {
	g.mu.Lock()
	g.gate = make(chan struct{})
	g.mu.Unlock()
}

func (g *gatedMarks) open() {
	g.mu.Lock()
	if g.gate != nil {
		close(g.gate)
		g.gate = nil
	}
	g.mu.Unlock()
}

func (g *gatedMarks) counts() (calls, rows int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.calls, g.rows
}

var errMarkFailed = errors.New("mark failed (test)")

func (g *gatedMarks) Mark(ctx context.Context, db *sql.DB, m dialects.Mark) (int64, error) {
	g.mu.Lock()
	gate := g.gate
	g.calls++
	g.rows += len(m.Seqs)
	fail := g.failNext
	g.failNext = false
	g.mu.Unlock()
	if gate != nil {
		select {
		case g.entered <- struct{}{}:
		default:
		}
		select {
		case <-gate:
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
	if fail {
		return 0, errMarkFailed
	}
	return g.Dialect.Mark(ctx, db, m)
}

func gated(e *env) *gatedMarks {
	g := &gatedMarks{Dialect: e.d, entered: make(chan struct{}, 1)}
	e.d = g
	return g
}

func (g *gatedMarks) waitEntered(t *testing.T) {
	t.Helper()
	select {
	case <-g.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("no Mark reached the gate")
	}
}

// The hand-over lane publishes a time-critical commit while the mark of
// the batch before it is still being written, marks the batches that
// queued meanwhile with one statement, publishes every event once, and the
// read lane does not publish a row whose mark is pending.
func TestHandOverPublishesWhileMarkIsWritten(t *testing.T) {
	forEachTarget(t, func(t *testing.T, e env) {
		g := gated(&e)
		rec := newRecorder(nil)
		r, ob, _ := startHandingOver(t, e, rec, testConfig("r1"))

		g.close()
		commit(t, ob, "a", 0, 1, false, txoutbox.TimeCritical())
		g.waitEntered(t)
		// The first mark waits at the gate; later commits are published
		// anyway.
		commit(t, ob, "b", 0, 1, false, txoutbox.TimeCritical())
		commit(t, ob, "c", 0, 1, false, txoutbox.TimeCritical())
		waitFor(t, 10*time.Second, "3 published while the first mark waits", func() bool { return rec.published() == 3 })
		// A read now (an ordinary commit, and a wake) publishes that
		// commit's row and leaves alone the rows whose mark is pending.
		commit(t, ob, "d", 0, 1, false)
		r.hand.commit(txoutbox.Commit{Critical: true, Read: true})
		waitFor(t, 10*time.Second, "d published by the read lane", func() bool { return rec.published() == 4 })
		time.Sleep(100 * time.Millisecond) // a read that would publish a pending row again has time to
		rec.check(t)
		if calls, _ := g.counts(); calls != 1 {
			t.Fatalf("%d Mark calls while the first waits, want 1 (the others queue behind it)", calls)
		}
		g.open()
		waitFor(t, 10*time.Second, "all marked", func() bool { return e.stats(t).Pending == 0 })
		calls, rows := g.counts()
		if rows != 4 {
			t.Errorf("Mark calls carried %d rows, want 4 (each once)", rows)
		}
		if calls != 2 {
			t.Errorf("%d Mark calls for 4 rows, want 2 (the first, then the three that queued behind it)", calls)
		}
		// The aggregate of the first batch flows on, in order.
		commit(t, ob, "a", 1, 1, false, txoutbox.TimeCritical())
		waitFor(t, 10*time.Second, "a/1 published", func() bool { return rec.published() == 5 })
		rec.check(t)
	})
}

// The read lane publishes the next batch of a backlog (read ahead) while
// the previous batch's mark is written.
func TestReadLanePublishesWhileMarkIsWritten(t *testing.T) {
	forEachTarget(t, func(t *testing.T, e env) {
		g := gated(&e)
		rec := newRecorder(nil)
		cfg := testConfig("r1")
		cfg.BatchSize = 10
		sig, _ := startWoken(t, e, rec, cfg)
		e.insert(t, e.interleaved(40, 1)) // 40 aggregates: 4 full batches
		g.close()
		sig.Notify(nil)
		g.waitEntered(t)
		// The first batch's mark waits at the gate; the next ones are
		// published meanwhile, up to markAhead batches ahead of it.
		waitFor(t, 10*time.Second, "batches published while the first mark waits", func() bool { return rec.published() >= 20 })
		g.open()
		waitFor(t, 10*time.Second, "all marked", func() bool { return e.stats(t).Pending == 0 })
		if n := rec.published(); n != 40 {
			t.Errorf("%d published, want 40", n)
		}
		rec.check(t)
	})
}

// A mark that fails leaves its rows pending: the relay publishes them
// again (at least once), after its database back-off.
func TestFailedMarkPublishesAgain(t *testing.T) {
	forEachTarget(t, func(t *testing.T, e env) {
		g := gated(&e)
		g.failNext = true
		rec := newRecorder(nil)
		cfg := testConfig("r1")
		cfg.PollInterval = 50 * time.Millisecond
		sig, _ := startWoken(t, e, rec, cfg)
		e.insert(t, e.events("a", 0, 2))
		sig.Notify(nil)
		waitFor(t, 10*time.Second, "everything marked", func() bool { return e.stats(t).Pending == 0 })
		seen := map[string]int{}
		for _, m := range rec.snapshot() {
			seen[m.ID]++
		}
		if len(seen) != 2 {
			t.Fatalf("%d events published, want 2", len(seen))
		}
		again := 0
		for _, n := range seen {
			again += n - 1
		}
		if again == 0 {
			t.Error("no event published again after its mark failed")
		}
	})
}

// An ownership change waits for the queued marks: a partition moves only
// once what the relay published of it is marked.
func TestApplyWaitsForMarks(t *testing.T) {
	e := sqliteEnv(t)
	g := gated(&e)
	r := newRelay(t, e, newRecorder(nil), testConfig("r1"))
	rn := newRun(r, e.parts)
	stop, done := make(chan struct{}), make(chan struct{})
	go func() { defer close(done); rn.marks.Run(stop) }()
	defer func() { g.open(); close(stop); <-done }()
	g.close()
	rn.marks.Push(&marker.Job{Seqs: []int64{1}, Ctx: context.Background()}, 10)
	g.waitEntered(t)
	applied := make(chan struct{})
	go func() {
		rn.apply(ownUpdate{active: []int{}, token: "s2", done: make(chan struct{})})
		close(applied)
	}()
	select {
	case <-applied:
		t.Fatal("the ownership change applied while a mark was still being written")
	case <-time.After(100 * time.Millisecond):
	}
	g.open()
	select {
	case <-applied:
	case <-time.After(10 * time.Second):
		t.Fatal("the ownership change did not apply after the mark")
	}
}
