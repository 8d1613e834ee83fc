package relay

import (
	"context"
	"database/sql"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
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
		sig, _ := startWoken(t, e, rec, testConfig("r1"))
		e.insert(t, e.events("a", 0, 3))
		sig.Notify(nil)
		waitFor(t, 10*time.Second, "the first publish", func() bool { return rec.published() >= 3 })
		for range 5 {
			sig.Notify(nil)
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
	rn.seq.Published([]int64{10, 11})
	recs := make([]dialects.Record, 2)
	for i := range recs {
		recs[i].Seq, recs[i].Partition = int64(10+i), i
		recs[i].AggregateType, recs[i].AggregateID = "t", strconv.Itoa(i)
	}
	keep := func() []dialects.Record {
		defer rn.seq.EndRead()
		out, _, _ := rn.seq.KeepRead(slices.Clone(recs), map[string]bool{}, len(recs), rn.owns)
		return out
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

// gatedBroker is a Publisher whose broker receives every message the
// moment Publish is called, and acknowledges only once open is closed; a
// Publish whose context ends first reports the context's error, as a real
// client does when it stops waiting for acknowledgements the broker may
// still send.
type gatedBroker struct {
	open    chan struct{}
	entered chan struct{} // receives once per Publish call, when it starts
	mu      sync.Mutex
	got     map[string]int
}

func (g *gatedBroker) Publish(ctx context.Context, batch []Message, errs []error) {
	g.mu.Lock()
	for _, m := range batch {
		g.got[m.ID]++
	}
	g.mu.Unlock()
	select {
	case g.entered <- struct{}{}:
	default:
	}
	select {
	case <-g.open:
	case <-ctx.Done():
		for i := range errs {
			errs[i] = ctx.Err()
		}
	}
}

// A relay stopped while a Publish is in flight lets it finish and marks
// what the broker acknowledged, so that the relay taking its partitions
// does not publish those events a second time. Relays that leave cleanly
// (a rebalance down, a deploy) must not duplicate what they already sent.
func TestStopFinishesThePublishInFlight(t *testing.T) {
	forEachTarget(t, func(t *testing.T, e env) {
		g := &gatedBroker{open: make(chan struct{}), entered: make(chan struct{}, 1), got: map[string]int{}}
		sig, stop1 := startWoken(t, e, g, testConfig("r1"))
		e.insert(t, e.events("a", 0, 3))
		sig.Notify(nil)
		select {
		case <-g.entered:
		case <-time.After(10 * time.Second):
			t.Fatal("the relay did not publish")
		}
		stopped := make(chan struct{})
		go func() { stop1(); close(stopped) }()
		time.Sleep(50 * time.Millisecond) // the stop reaches the relay mid-Publish
		close(g.open)                     // then the broker acknowledges
		<-stopped

		rec := newRecorder(nil)
		cfg2 := testConfig("r2")
		cfg2.PollInterval = 20 * time.Millisecond
		r2 := newRelay(t, e, rec, cfg2)
		start(t, r2)
		waitOwnsAll(t, e, r2)
		waitFor(t, 10*time.Second, "no pending rows", func() bool { return e.stats(t).Pending == 0 })
		time.Sleep(100 * time.Millisecond) // a second relay's read would have published by now
		g.mu.Lock()
		defer g.mu.Unlock()
		if len(g.got) != 1 {
			t.Fatalf("the stopped relay sent %d events, want 1 (the first wave)", len(g.got))
		}
		for _, m := range rec.snapshot() {
			g.got[m.ID]++
		}
		if len(g.got) != 3 {
			t.Errorf("%d events delivered, want 3", len(g.got))
		}
		for id, n := range g.got {
			if n != 1 {
				t.Errorf("event %s delivered %d times, want once: the next relay published what the stopped relay had sent and the broker acknowledged", id, n)
			}
		}
		rec.check(t)
	})
}

// A partition given up and taken back within one chain of reads: the rows
// of it that a read ahead returned while it was given up were dropped, so
// their aggregates stay held for the rest of the chain; a later row of such
// an aggregate, read ahead once the partition is back, must wait for the
// next read from the start (found by the Kafka chaos run, where a relay
// released surplus partitions and took them back 15 ms later, mid-chain).
func TestKeepHoldsAggregatesOfAPartitionGivenUpMidChain(t *testing.T) {
	e := sqliteEnv(t)
	r := newRelay(t, e, newRecorder(nil), testConfig("r1"))
	rn := newRun(r, e.parts)
	rn.active, rn.token = []int{0, 1}, "s1"
	rec := func(seq int64, part int, agg string) dialects.Record {
		var r dialects.Record
		r.Seq, r.Partition, r.AggregateType, r.AggregateID = seq, part, "t", agg
		return r
	}
	held := map[string]bool{}
	keep := func(recs ...dialects.Record) []int64 {
		defer rn.seq.EndRead()
		out, _, _ := rn.seq.KeepRead(recs, held, 10, rn.owns)
		var seqs []int64
		for _, r := range out {
			seqs = append(seqs, r.Seq)
		}
		return seqs
	}
	rn.apply(ownUpdate{active: []int{1}, token: "s1", done: make(chan struct{})}) // partition 0 given up
	if got := keep(rec(10, 0, "a"), rec(11, 1, "b")); !slices.Equal(got, []int64{11}) {
		t.Fatalf("kept %v, want [11]: partition 0 is not owned", got)
	}
	rn.apply(ownUpdate{active: []int{0, 1}, token: "s1", done: make(chan struct{})}) // and taken back
	if got := keep(rec(20, 0, "a"), rec(21, 0, "c")); !slices.Equal(got, []int64{21}) {
		t.Fatalf("kept %v, want [21]: seq 20 of aggregate a would pass seq 10, dropped earlier in the chain", got)
	}
}

// heldView is a dialect whose sessions' View, once armed, waits until go
// is closed, as a statement the database is slow to answer, and then
// records whether the call's context had ended meanwhile.
type heldView struct {
	dialects.Dialect
	armed   atomic.Bool
	entered chan struct{}
	goOn    chan struct{}
	cut     atomic.Bool
}

func (h *heldView) OpenSession(ctx context.Context, db *sql.DB, relay string, lease time.Duration) (dialects.Session, error) {
	s, err := h.Dialect.OpenSession(ctx, db, relay, lease)
	if err != nil {
		return nil, err
	}
	return heldViewSession{Session: s, h: h}, nil
}

type heldViewSession struct {
	dialects.Session
	h *heldView
}

func (s heldViewSession) View(ctx context.Context, now time.Time) (dialects.View, error) {
	if s.h.armed.CompareAndSwap(true, false) {
		close(s.h.entered)
		<-s.h.goOn
		s.h.cut.Store(ctx.Err() != nil)
	}
	return s.Session.View(ctx, now)
}

// A relay stopped while its owner waits for a session statement does not
// cut that statement short: go-sql-driver/mysql and pgx close a connection
// whose statement's context ends, and the partition locks on it end with
// it, at once, while the batch in flight and the marks queued are still to
// be written. Another relay then takes the partitions, finds those rows
// pending and publishes them again, and the stopping relay's marks are
// fenced off (TestManyRelays/mysql saw events published twice and rows
// left pending so). The stop must wait for the call and end the session
// only once the publish loop marked what it published.
func TestStopDoesNotCutASessionCall(t *testing.T) {
	forEachTarget(t, func(t *testing.T, e env) {
		h := &heldView{Dialect: e.d, entered: make(chan struct{}), goOn: make(chan struct{})}
		e.d = h
		r := newRelay(t, e, newRecorder(nil), testConfig("r1"))
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		done := make(chan error, 1)
		go func() { done <- r.Run(ctx) }()
		waitOwnsAll(t, e, r)
		h.armed.Store(true) // the next rebalance's View
		select {
		case <-h.entered:
		case <-time.After(10 * time.Second):
			t.Fatal("no rebalance read the ownership view")
		}
		cancel() // the relay stops while the View is in flight
		close(h.goOn)
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
		if h.cut.Load() {
			t.Error("the stop ended the context of a session call in flight: a driver drops the connection, and the partitions' locks with it, before the relay's last marks are written")
		}
	})
}

// The same on MariaDB, end to end: relay a is stopped while its Release
// statement waits on a row lock the test holds and a batch of a's is in
// flight. Cut by the stop, the statement's connection is closed by the
// driver, and the server ends it, with a's locks, as soon as the statement
// is over: b takes the partitions, finds the row pending and publishes it
// a second time, and a's mark is fenced off.
func TestStopMidReleaseKeepsThePartitionsMySQL(t *testing.T) {
	forEachTarget(t, func(t *testing.T, e env) {
		if e.d.Name() != "mysql" {
			t.Skip("holds a row lock of the MariaDB partitions table")
		}
		rec := newRecorder(nil)
		g := &gatedPublisher{recorder: rec, entered: make(chan struct{}), open: make(chan struct{})}
		sigA := notify.NewLocal()
		cfgA := testConfig("a")
		cfgA.Sources = []notify.Source{sigA}
		ra := newRelay(t, e, g, cfgA)
		ctxA, cancelA := context.WithCancel(context.Background())
		defer cancelA()
		doneA := make(chan error, 1)
		go func() { doneA <- ra.Run(ctxA) }()
		waitOwnsAll(t, e, ra)
		// a releases the upper half when b joins; the lock on the last
		// partition's row holds that Release.
		tx, err := e.db.Begin()
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback() //nolint:errcheck // no-op after Commit
		if _, err := tx.Exec("SELECT part FROM "+e.d.Table()+"_partitions WHERE part = ? FOR UPDATE", e.parts-1); err != nil {
			t.Fatal(err)
		}
		sigB := notify.NewLocal()
		cfgB := testConfig("b")
		cfgB.Sources = []notify.Source{sigB}
		rb := newRelay(t, e, rec.as("b"), cfgB)
		start(t, rb)
		waitFor(t, 10*time.Second, "a's Release waits on the row lock", func() bool {
			var n int
			err := e.db.QueryRow("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE DB = DATABASE() AND INFO LIKE '%SET owner = NULL%' AND ID <> CONNECTION_ID()").Scan(&n)
			return err == nil && n > 0
		})
		var ev []dialects.Event
		for i := 0; len(ev) == 0 || !ra.Owns(ev[0].Partition); i++ {
			ev = e.events("x"+strconv.Itoa(i), 0, 1)
		}
		e.insert(t, ev)
		sigA.Notify(nil)
		select {
		case <-g.entered: // a's batch is in flight
		case <-time.After(10 * time.Second):
			t.Fatal("a did not publish")
		}
		cancelA()
		time.Sleep(100 * time.Millisecond) // a driver closes a cut statement's connection on a goroutine of its own
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		// Only a's end frees the row's partition, which waits for a's mark;
		// a cut Release frees it now.
		deadline := time.Now().Add(2 * time.Second)
		for !rb.Owns(ev[0].Partition) && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		if rb.Owns(ev[0].Partition) {
			t.Error("b took the partition of a's batch in flight")
			sigB.Notify(nil)
			waitFor(t, 10*time.Second, "b publishes the row", func() bool { return rec.published() > 0 })
		}
		close(g.open)
		if err := <-doneA; err != nil {
			t.Errorf("Run: %v", err)
		}
		waitOwnsAll(t, e, rb)
		sigB.Notify(nil)
		waitFor(t, 10*time.Second, "no row pending", func() bool { return e.stats(t).Pending == 0 })
		rec.check(t)
		if n := rec.published(); n != 1 {
			t.Errorf("published %d times, want once", n)
		}
	})
}
