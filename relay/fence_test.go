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
)

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
// run's session changes (a new session after losing the old one): then its
// reads publish them, instead of leaving them pending for the rest of the
// run. Within one session they stay remembered.
func TestNewSessionForgetsPublishedRows(t *testing.T) {
	e := sqliteEnv(t)
	r := newRelay(t, e, newRecorder(nil), testConfig("r1"))
	rn := newRun(r, e.parts)
	rn.active, rn.token = []int{0, 1}, "s1"
	rn.remember([]int64{10, 11})
	recs := make([]dialects.Record, 2)
	for i := range recs {
		recs[i].Seq, recs[i].Partition = int64(10+i), i
		recs[i].AggregateType, recs[i].AggregateID = "t", strconv.Itoa(i)
	}
	var res cycleResult
	keep := func() []dialects.Record {
		defer rn.endRead()
		return rn.keep(slices.Clone(recs), nil, &res)
	}
	if got := keep(); len(got) != 0 {
		t.Fatalf("kept %v, want none: both were published", got)
	}
	rn.apply(ownUpdate{active: []int{1}, token: "s1", done: make(chan struct{})})    // partition 0 given away
	rn.apply(ownUpdate{active: []int{0, 1}, token: "s1", done: make(chan struct{})}) // and taken again
	if got := keep(); len(got) != 0 {
		t.Fatalf("kept %v in the same session, want none", got)
	}
	rn.apply(ownUpdate{active: []int{}, token: "", done: make(chan struct{})})       // the session is lost
	rn.apply(ownUpdate{active: []int{0, 1}, token: "s2", done: make(chan struct{})}) // a new one owns both
	if got := keep(); len(got) != 2 {
		t.Fatalf("kept %v after a new session took the partitions, want both", got)
	}
}
