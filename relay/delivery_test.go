package relay

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/notify"
	"github.com/jitoutbox/jitoutbox/txoutbox"
)

// commit writes events for agg through txoutbox and commits (or rolls back).
func commit(t *testing.T, ob *txoutbox.Outbox, agg string, from, n int, rollback bool, opts ...txoutbox.TxOption) {
	t.Helper()
	tx, err := ob.Begin(context.Background(), nil, opts...)
	if err != nil {
		t.Fatalf("begin: %v", err)
	}
	for i := range n {
		if _, err := tx.Add(txoutbox.Event{
			AggregateType: "order", AggregateID: agg, EventType: "order.changed",
			Payload: []byte(agg + "/" + strconv.Itoa(from+i)), ContentType: "text/plain",
		}); err != nil {
			t.Fatalf("add: %v", err)
		}
	}
	if rollback {
		if err := tx.Rollback(); err != nil {
			t.Fatalf("rollback: %v", err)
		}
		return
	}
	if err := tx.Commit(); err != nil {
		t.Fatalf("commit: %v", err)
	}
}

// relayOutbox returns an Outbox wired to r (txoutbox.WithRelay).
func relayOutbox(t *testing.T, e env, r *Relay) *txoutbox.Outbox {
	t.Helper()
	ob, err := txoutbox.New(e.db, e.d, txoutbox.WithRelay(r))
	if err != nil {
		t.Fatal(err)
	}
	return ob
}

// waitOwnsAll waits until r owns every partition of the table.
func waitOwnsAll(t *testing.T, e env, r *Relay) {
	t.Helper()
	waitFor(t, 30*time.Second, "the relay owns every partition", func() bool {
		for p := range e.parts {
			if !r.Owns(p) {
				return false
			}
		}
		return true
	})
}

func TestCommittedPublishedOnceRolledBackNever(t *testing.T) {
	forEachTarget(t, func(t *testing.T, e env) {
		rec := newRecorder(nil)
		cfg := testConfig("r1")
		cfg.BatchSize = 7 // several batches, several waves
		cfg.LazyDelay = 20 * time.Millisecond
		r := newRelay(t, e, rec, cfg)
		ob := relayOutbox(t, e, r)
		stop := start(t, r)
		waitOwnsAll(t, e, r)
		for i := range 10 {
			agg := "o" + strconv.Itoa(i%4)
			commit(t, ob, agg, i*3, 3, false, txoutbox.TimeCritical())
			commit(t, ob, "rolledback", i, 2, true, txoutbox.TimeCritical())
			commit(t, ob, agg+"-ordinary", i*2, 2, false)
		}
		// Ordinary commits are picked up by the reads of the critical ones or
		// a lazy wake.
		waitFor(t, 30*time.Second, "50 events published", func() bool { return rec.published() >= 50 })
		waitFor(t, 10*time.Second, "backlog empty", func() bool { return e.stats(t).Pending == 0 })
		stop()
		rec.check(t)
		if n := rec.published(); n != 50 {
			t.Errorf("published %d events, want 50", n)
		}
		for _, m := range rec.snapshot() {
			if m.AggregateID == "rolledback" {
				t.Errorf("rolled-back event %s published", m.ID)
			}
			if m.Attempt != 1 {
				t.Errorf("event %s attempt %d, want 1", m.ID, m.Attempt)
			}
		}
		st, err := r.Stats(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if st.Published != 50 || st.PublishedRows != 50 || st.Pending != 0 {
			t.Errorf("stats = %+v", st)
		}
		if st.Critical.Count != 30 || st.Ordinary.Count != 20 {
			t.Errorf("latency counts critical=%d ordinary=%d, want 30 and 20", st.Critical.Count, st.Ordinary.Count)
		}
		if st.Critical.Max <= 0 || st.Critical.P50 > st.Critical.Max {
			t.Errorf("critical latency summary %+v", st.Critical)
		}
	})
}

// A time-critical commit in the relay's process is handed over: published
// at once without a read (one fast-path batch).
func TestTimeCriticalCommitHandedOver(t *testing.T) {
	forEachTarget(t, func(t *testing.T, e env) {
		rec := newRecorder(nil)
		cfg := testConfig("r1")
		cfg.PollInterval = time.Hour
		hooks := &hookRecorder{}
		cfg.Hooks = hooks
		_, ob, cycles := startHandingOver(t, e, rec, cfg)
		commit(t, ob, "o1", 0, 3, false, txoutbox.TimeCritical())
		waitFor(t, 10*time.Second, "3 published", func() bool { return rec.published() == 3 })
		select {
		case s := <-cycles:
			t.Errorf("a read cycle ran for a handed-over commit: %+v", s)
		case <-time.After(100 * time.Millisecond):
		}
		rec.check(t)
		if rec.published() != 3 {
			t.Errorf("published %d, want 3", rec.published())
		}
		hooks.mu.Lock()
		defer hooks.mu.Unlock()
		if hooks.fast != 1 || hooks.starts != 1 {
			t.Errorf("%d batches, %d fast-path, want 1 handed over and no read", hooks.starts, hooks.fast)
		}
	})
}

func TestLazyWakeDeliversOrdinaryCommit(t *testing.T) {
	forEachTarget(t, func(t *testing.T, e env) {
		rec := newRecorder(nil)
		cfg := testConfig("r1")
		cfg.LazyDelay = 20 * time.Millisecond
		_, ob, cycles := startHandingOver(t, e, rec, cfg)
		commit(t, ob, "o1", 0, 2, false)
		s := nextCycle(t, cycles, "publishing cycle", func(s cycleSignal) bool { return s.Published > 0 })
		if s.Reason != reasonLazy || s.Published != 2 {
			t.Errorf("cycle = %+v, want reason lazy publishing 2", s)
		}
		if rec.published() != 2 {
			t.Errorf("published %d, want 2", rec.published())
		}
	})
}

func TestManyRelays(t *testing.T) {
	n := 2000
	if *bigFlag {
		n = 100_000
	}
	if testing.Short() {
		n = 1000
	}
	const aggs = 1000
	forEachTarget(t, func(t *testing.T, e env) {
		e.insert(t, e.interleaved(aggs, n/aggs))
		rec := newRecorder(nil)
		sig := notify.NewLocal()
		var stops []func()
		for i := range 4 {
			cfg := testConfig("relay-" + strconv.Itoa(i))
			cfg.Sources = []notify.Source{sig}
			cfg.BatchSize = 100 + 50*i
			stops = append(stops, start(t, newRelay(t, e, rec.as(cfg.Owner), cfg)))
		}
		// Commit more while the relays run.
		more := e.interleaved(aggs/10, 2)
		for i := range more {
			more[i].Payload = []byte(more[i].AggregateID + "/" + strconv.Itoa(1_000_000+i))
		}
		e.insert(t, more)
		sig.Notify(nil)
		total := n + len(more)
		waitFor(t, 10*time.Minute, "all events published", func() bool { return rec.published() >= total })
		for _, stop := range stops {
			stop()
		}
		rec.check(t)
		if got := rec.published(); got != total {
			t.Errorf("published %d, want %d", got, total)
		}
		if st := e.stats(t); st.Pending != 0 || st.Published != int64(total) {
			t.Errorf("table stats %+v, want 0 pending, %d published", st, total)
			e.logPending(t)
		}
	})
}

// TestRebalance: 1 relay, then 4, then 1 again while events are committed.
// Each relay comes to own its share of the partitions; every event is
// published exactly once (joins and clean leaves release a partition only
// after its batch in flight is marked), in order per aggregate.
func TestRebalance(t *testing.T) {
	forEachTarget(t, func(t *testing.T, e env) {
		rec := newRecorder(nil)
		relayCfg := func(name string) Config {
			cfg := testConfig(name)
			cfg.PollInterval = 50 * time.Millisecond
			cfg.BatchSize = 20
			return cfg
		}
		r0 := newRelay(t, e, rec, relayCfg("r0"))
		start(t, r0)
		waitOwnsAll(t, e, r0)
		produced := 0
		produce := func(n int) {
			for range n {
				agg := "a" + strconv.Itoa(produced%40)
				e.insert(t, e.events(agg, produced, 1))
				produced++
			}
		}
		owned := func(r *Relay) int { return ownedBy(e, r) }
		produce(100)
		var others []*Relay
		var stops []func()
		for i := 1; i <= 3; i++ {
			r := newRelay(t, e, rec, relayCfg("r"+strconv.Itoa(i)))
			others = append(others, r)
			stops = append(stops, start(t, r))
			produce(50)
		}
		share := e.parts / 4
		waitFor(t, 30*time.Second, "four relays share the partitions", func() bool {
			if owned(r0) < share {
				return false
			}
			for _, r := range others {
				if owned(r) < share {
					return false
				}
			}
			return true
		})
		produce(100)
		for _, stop := range stops {
			stop()
			produce(30)
		}
		waitOwnsAll(t, e, r0)
		produce(50)
		waitFor(t, 30*time.Second, "every event published", func() bool { return rec.published() >= produced })
		time.Sleep(200 * time.Millisecond) // a duplicate would come within a few polls
		rec.check(t)
		if got := rec.published(); got != produced {
			t.Errorf("published %d, want %d", got, produced)
		}
		if st := e.stats(t); st.Pending != 0 {
			t.Errorf("%d pending after the rebalance", st.Pending)
		}
	})
}

// gatedPublisher holds its first Publish call until open is closed.
type gatedPublisher struct {
	*recorder
	entered chan struct{}
	open    chan struct{}
	once    sync.Once
}

func (g *gatedPublisher) Publish(ctx context.Context, batch []Message, errs []error) {
	first := false
	g.once.Do(func() { first = true })
	if first {
		close(g.entered)
		<-g.open
	}
	g.recorder.Publish(ctx, batch, errs)
}

// Partitions a relay gains while it publishes a batch are read as soon as
// the batch ends, not at the next poll: r1 is in the middle of a cycle
// when r2 leaves and r1 takes r2's partitions, whose rows wait there.
func TestPartitionsGainedMidCycleAreReadAtOnce(t *testing.T) {
	forEachTarget(t, func(t *testing.T, e env) {
		rec := newRecorder(nil)
		g := &gatedPublisher{recorder: rec, entered: make(chan struct{}), open: make(chan struct{})}
		sig := notify.NewLocal()
		cfg1 := testConfig("r1") // polls once an hour: only a wake or a gain makes it read
		cfg1.Sources = []notify.Source{sig}
		r1 := newRelay(t, e, g, cfg1)
		r2 := newRelay(t, e, rec, testConfig("r2"))
		start(t, r1)
		stop2 := start(t, r2)
		half := e.parts / 2
		waitFor(t, 30*time.Second, "two relays share the partitions", func() bool {
			n1, n2 := ownedBy(e, r1), ownedBy(e, r2)
			return n1 >= half && n2 >= half
		})
		// One event in a partition of r1's, one in each partition of r2's.
		var mine, theirs []dialects.Event
		for i := 0; len(mine) == 0 || len(theirs) < e.parts-half; i++ {
			ev := e.events("a"+strconv.Itoa(i), 0, 1)
			switch p := ev[0].Partition; {
			case r1.Owns(p) && len(mine) == 0:
				mine = ev
			case r2.Owns(p) && !slices.ContainsFunc(theirs, func(x dialects.Event) bool { return x.Partition == p }):
				theirs = append(theirs, ev...)
			}
		}
		e.insert(t, theirs) // no wake: r2 polls once an hour
		e.insert(t, mine)
		sig.Notify(nil)
		select {
		case <-g.entered:
		case <-time.After(10 * time.Second):
			t.Fatal("r1 never published its event")
		}
		stop2() // r2 leaves; r1 takes its partitions while its batch is in flight
		waitFor(t, 30*time.Second, "r1's owner took r2's partitions", func() bool {
			own, err := e.d.Ownership(context.Background(), e.db, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, p := range own.Partitions {
				if p.Live {
					n++
				}
			}
			return n == e.parts
		})
		close(g.open)
		waitFor(t, 10*time.Second, "r2's rows published by r1 without a poll", func() bool {
			return rec.published() == 1+len(theirs)
		})
		rec.check(t)
	})
}
