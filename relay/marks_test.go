package relay

import (
	"context"
	"database/sql"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/notify"
	"github.com/jitoutbox/jitoutbox/txoutbox"
)

// gatedMarks is a dialect whose Mark waits at a gate while the gate is
// closed, and counts the Mark calls and the rows they carried.
type gatedMarks struct {
	dialects.Dialect

	mu      sync.Mutex
	gate    chan struct{} // nil: open
	calls   int
	rows    int
	entered chan struct{} // receives when a Mark waits at the gate
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

func (g *gatedMarks) Mark(ctx context.Context, db *sql.DB, m dialects.Mark) (int64, error) {
	g.mu.Lock()
	gate := g.gate
	g.calls++
	g.rows += len(m.Seqs)
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
	return g.Dialect.Mark(ctx, db, m)
}

// The hand-over lane publishes a time-critical commit while the mark of
// the batch before it is still being written, marks the batches that
// queued meanwhile with one statement, publishes every event once, and
// the read lane does not publish a row whose mark is pending.
func TestHandOverPublishesWhileMarkIsWritten(t *testing.T) {
	forEachTarget(t, func(t *testing.T, e env) {
		g := &gatedMarks{Dialect: e.d, entered: make(chan struct{}, 1)}
		e.d = g
		rec := newRecorder(nil)
		cfg := testConfig("r1")
		r := newRelay(t, e, rec, cfg)
		ob := relayOutbox(t, e, r)
		cycles := armCycles(r)
		start(t, r)
		waitOwnsAll(t, e, r)
		nextCycle(t, cycles, "partitions taken", func(s cycleSignal) bool { return s.Reason == reasonOwn })

		g.close()
		commit(t, ob, "a", 0, 1, false, txoutbox.TimeCritical())
		select {
		case <-g.entered:
		case <-time.After(10 * time.Second):
			t.Fatal("the first batch's mark never started")
		}
		// The first mark waits at the gate; later commits are published
		// anyway.
		commit(t, ob, "b", 0, 1, false, txoutbox.TimeCritical())
		commit(t, ob, "c", 0, 1, false, txoutbox.TimeCritical())
		waitFor(t, 10*time.Second, "3 published while the first mark waits", func() bool { return rec.published() == 3 })
		// A read now (an ordinary commit, and a wake) publishes that
		// commit's row but leaves alone the rows whose mark is pending.
		commit(t, ob, "d", 0, 1, false)
		r.hand.commit(txoutbox.Commit{Critical: true, Read: true})
		waitFor(t, 10*time.Second, "d published by the read lane", func() bool { return rec.published() == 4 })
		time.Sleep(100 * time.Millisecond) // a read that would publish a pending row again has time to
		rec.check(t)
		if calls, _ := g.counts(); calls != 2 {
			t.Fatalf("%d Mark calls while the first waits, want 2 (the first, the read lane's; the others queue)", calls)
		}
		g.open()
		waitFor(t, 10*time.Second, "all marked", func() bool { return e.stats(t).Pending == 0 })
		calls, rows := g.counts()
		if rows != 4 {
			t.Errorf("Mark calls carried %d rows, want 4 (each once)", rows)
		}
		// The first mark, the read lane's for d, and one for the two that
		// queued behind the first.
		if calls != 3 {
			t.Errorf("%d Mark calls for 4 rows, want 3", calls)
		}
		// The aggregate of the first batch flows on, in order.
		commit(t, ob, "a", 1, 1, false, txoutbox.TimeCritical())
		waitFor(t, 10*time.Second, "a/1 published", func() bool { return rec.published() == 5 })
		rec.check(t)
	})
}

// fencedOnce is a dialect whose first Mark changes nothing and reports
// so, as a fenced mark does when the session lost the partitions.
type fencedOnce struct {
	dialects.Dialect
	mu     sync.Mutex
	fenced bool
}

func (f *fencedOnce) Mark(ctx context.Context, db *sql.DB, m dialects.Mark) (int64, error) {
	f.mu.Lock()
	first := !f.fenced
	f.fenced = true
	f.mu.Unlock()
	if first {
		return 0, nil
	}
	return f.Dialect.Mark(ctx, db, m)
}

// A relay whose mark was fenced off (its session lost the partitions, and
// it has not seen the loss yet) does not publish those rows again on every
// read: they are left to the partitions' new owner.
func TestFencedMarkDoesNotRepublish(t *testing.T) {
	forEachTarget(t, func(t *testing.T, e env) {
		e.d = &fencedOnce{Dialect: e.d}
		rec := newRecorder(nil)
		sig := notify.NewLocal()
		cfg := testConfig("r1")
		cfg.Sources = []notify.Source{sig}
		r := newRelay(t, e, rec, cfg)
		start(t, r)
		waitOwnsAll(t, e, r)
		e.insert(t, e.events("a", 0, 3))
		sig.Notify()
		waitFor(t, 10*time.Second, "the first publish", func() bool { return rec.published() >= 3 })
		for range 5 {
			sig.Notify()
			time.Sleep(40 * time.Millisecond) // reads that would publish the rows again have time to
		}
		if got := rec.published(); got != 3 {
			t.Errorf("%d publishes after the fenced mark, want 3 (no republish by the relay that lost them)", got)
		}
		rec.check(t)
	})
}

// Rows a run published but could not mark are remembered only until the
// run gains their partition again (a new session after losing it): then
// its reads publish them, instead of leaving them pending for the rest of
// the run.
func TestRegainedPartitionForgetsPublishedRows(t *testing.T) {
	e := sqliteEnv(t)
	r := newRelay(t, e, newRecorder(nil), testConfig("r1"))
	rn := newRun(r, e.parts)
	rn.active = []int{0, 1}
	rn.remember([]int64{10, 11}, []int{0, 1})
	recs := make([]dialects.Record, 2)
	for i := range recs {
		recs[i].Seq, recs[i].Partition = int64(10+i), i
		recs[i].AggregateType, recs[i].AggregateID = "t", strconv.Itoa(i)
	}
	var res cycleResult
	if got := rn.keep(slices.Clone(recs), nil, &res); len(got) != 0 {
		t.Fatalf("kept %v, want none: both were published", got)
	}
	rn.endRead()
	rn.apply(ownUpdate{active: []int{1}, token: "s1", done: make(chan struct{})})    // partition 0 lost
	rn.apply(ownUpdate{active: []int{0, 1}, token: "s2", done: make(chan struct{})}) // and taken again
	got := rn.keep(slices.Clone(recs), nil, &res)
	if len(got) != 1 || got[0].Seq != 10 {
		t.Fatalf("kept %v after partition 0 was taken again, want seq 10 only", got)
	}
}
