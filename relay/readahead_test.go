package relay

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/txoutbox"
)

// stepPublisher holds the first Publish call that carries an event of each
// aggregate in gates until that gate's channel is closed, signalling
// entered[agg] when the call starts; events of aggregates in fail get that
// error on their first call instead of reaching next.
type stepPublisher struct {
	next    Publisher
	entered map[string]chan struct{}
	gates   map[string]chan struct{}
	fail    map[string]error

	mu   sync.Mutex
	seen map[string]bool // aggregates published before
}

func newStepPublisher(next Publisher) *stepPublisher {
	return &stepPublisher{next: next, entered: map[string]chan struct{}{}, gates: map[string]chan struct{}{},
		fail: map[string]error{}, seen: map[string]bool{}}
}

// gate holds agg's first Publish call until the returned channel is
// closed (never: until the call's context ends, which fails it). Tests gate
// while the relay runs: the maps are guarded.
func (p *stepPublisher) gate(agg string) chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.entered[agg] = make(chan struct{}, 1)
	p.gates[agg] = make(chan struct{})
	return p.gates[agg]
}

func (p *stepPublisher) waitEntered(t *testing.T, agg string) {
	t.Helper()
	p.mu.Lock()
	entered := p.entered[agg]
	p.mu.Unlock()
	select {
	case <-entered:
	case <-time.After(10 * time.Second):
		t.Fatalf("no Publish of %s started", agg)
	}
}

func (p *stepPublisher) Publish(ctx context.Context, batch []Message, errs []error) {
	var failed []int
	for i, m := range batch {
		p.mu.Lock()
		first := !p.seen[m.AggregateID]
		p.seen[m.AggregateID] = true
		gate, entered := p.gates[m.AggregateID], p.entered[m.AggregateID]
		fail := p.fail[m.AggregateID]
		p.mu.Unlock()
		if !first {
			continue
		}
		if gate != nil {
			entered <- struct{}{}
			select {
			case <-gate:
			case <-ctx.Done():
				for j := range errs {
					errs[j] = ctx.Err()
				}
				return
			}
		}
		if fail != nil {
			errs[i] = fail
			failed = append(failed, i)
		}
	}
	if len(failed) == 0 {
		p.next.Publish(ctx, batch, errs)
		return
	}
	var rest []Message
	var at []int
	for i, m := range batch {
		if errs[i] == nil {
			rest = append(rest, m)
			at = append(at, i)
		}
	}
	if len(rest) > 0 {
		restErrs := make([]error, len(rest))
		p.next.Publish(ctx, rest, restErrs)
		for k, i := range at {
			errs[i] = restErrs[k]
		}
	}
}

// waitDeliveredInOrder waits until rec accepted n events and nothing is
// pending in e, then checks rec's per-aggregate contract.
func waitDeliveredInOrder(t *testing.T, e env, rec *recorder, n int) {
	t.Helper()
	waitFor(t, 10*time.Second, "all published", func() bool { return rec.published() == n })
	waitFor(t, 10*time.Second, "all marked", func() bool { return e.stats(t).Pending == 0 })
	rec.check(t)
}

// batchOf returns the test configuration with batches of n rows.
func batchOf(n int) Config {
	cfg := testConfig("r1")
	cfg.BatchSize = n
	return cfg
}

// While the hand-over lane publishes an aggregate's event, the read lane
// leaves that aggregate's rows alone, publishes the rest, and then waits
// to be woken instead of reading the same rows again and again (it used
// to spin on the database until the lane was done).
func TestReadLaneWaitsForTheHandOver(t *testing.T) {
	forEachTarget(t, func(t *testing.T, e env) {
		rc := &flaky{Dialect: e.d}
		e.d = rc
		rec := newRecorder(nil)
		p := newStepPublisher(rec)
		release := p.gate("x")
		r, ob, _ := startHandingOver(t, e, p, batchOf(2))

		commit(t, ob, "x", 0, 1, false, txoutbox.TimeCritical())
		p.waitEntered(t, "x")
		// x has a pending row now: these commits go through reads.
		commit(t, ob, "a", 0, 1, false)
		commit(t, ob, "x", 1, 2, false)
		commit(t, ob, "b", 0, 1, false)
		r.hand.commit(txoutbox.Commit{Critical: true, Read: true})
		waitFor(t, 10*time.Second, "a and b published", func() bool { return rec.published() == 2 })
		before := rc.readCount()
		time.Sleep(200 * time.Millisecond)
		if n := rc.readCount() - before; n > 5 {
			t.Errorf("%d reads in 200 ms while x is held by the hand-over lane, want at most 5 (no spin)", n)
		}
		if n := rec.published(); n != 2 {
			t.Fatalf("%d published while x/0 is held, want 2", n)
		}
		close(release)
		waitDeliveredInOrder(t, e, rec, 5)
	})
}

// A read ahead no longer asks the database whether an earlier row of each
// aggregate is pending (not for rows under the read from the start's
// horizon): the relay holds back the aggregates whose rows a read left to
// the hand-over lane, for the rest of its chain of reads. Here the lane's
// publish of x/0 fails after the read from the start left it alone and
// before the read ahead's rows (b, x/1) are kept: x/1 must still wait for
// x/0's retry.
func TestReadAheadHoldsAggregatesOfTheHandOver(t *testing.T) {
	forEachTarget(t, func(t *testing.T, e env) {
		rec := newRecorder(nil)
		p := newStepPublisher(rec)
		releaseX := p.gate("x")
		p.fail["x"] = errors.New("broker hiccup")
		releaseA := p.gate("a")
		r, ob, _ := startHandingOver(t, e, p, batchOf(2))

		commit(t, ob, "x", 0, 1, false, txoutbox.TimeCritical())
		p.waitEntered(t, "x")
		// The read from the start (limit 2) finds x/0, left to the lane,
		// and a; the read ahead past a finds b and x/1.
		commit(t, ob, "a", 0, 1, false)
		commit(t, ob, "b", 0, 1, false)
		commit(t, ob, "x", 1, 1, false)
		r.hand.commit(txoutbox.Commit{Critical: true, Read: true})
		p.waitEntered(t, "a")
		// The read lane publishes a (held); now x/0 fails and the lane
		// lets go of x.
		close(releaseX)
		waitFor(t, 10*time.Second, "x/0's failure written", func() bool { return e.maxAttempts(t) == 1 })
		time.Sleep(50 * time.Millisecond) // the lane lets go of x after writing the failure
		close(releaseA)
		waitDeliveredInOrder(t, e, rec, 4)
	})
}

// A chain of reads ahead reads only the partitions its read from the start
// read: the horizon vouches for the earlier rows of those partitions only.
// Here r1 gains r2's partitions in the middle of its chain; y/0 (pending in
// one of them, below the chain's bound) must still go before y/1 (above
// the bound, under the horizon).
func TestReadAheadKeepsToItsPartitions(t *testing.T) {
	forEachTarget(t, func(t *testing.T, e env) {
		rec := newRecorder(nil)
		p1 := newStepPublisher(rec)
		cfg1 := batchOf(2)
		cfg1.PollInterval = 50 * time.Millisecond
		r1 := newRelay(t, e, p1, cfg1)
		start(t, r1)
		waitOwnsAll(t, e, r1)
		p2 := newStepPublisher(rec)
		cfg2 := testConfig("r2")
		cfg2.PollInterval = 50 * time.Millisecond
		cfg2.PublishTimeout = 300 * time.Millisecond
		r2 := newRelay(t, e, p2, cfg2)
		stop2 := start(t, r2)
		waitFor(t, 30*time.Second, "two relays share the partitions", func() bool {
			n1, n2 := ownedBy(e, r1), ownedBy(e, r2)
			return n1 > 0 && n2 > 0 && n1+n2 == e.parts
		})
		// y in a partition of r2's; the backlog's aggregates in r1's.
		ownedAgg := func(r *Relay, prefix string) func() string {
			i := 0
			return func() string {
				for ; ; i++ {
					agg := prefix + strconv.Itoa(i)
					if r.Owns(dialects.PartitionOf("order", agg, e.parts)) {
						i++
						return agg
					}
				}
			}
		}
		y := ownedAgg(r2, "y")()
		p2.gate(y) // r2's publish of y/0 waits until r2 stops, and fails
		nextB := ownedAgg(r1, "b")
		var backlog []dialects.Event
		for i := range 12 {
			agg := nextB()
			if i == 2 {
				p1.gate(agg) // r1's second batch waits
			}
			backlog = append(backlog, e.events(agg, 0, 1)...)
		}
		e.insert(t, e.events(y, 0, 1))
		p2.waitEntered(t, y)
		// One transaction: the read from the start of r1's chain sees y/1
		// too, so y/1 is under its horizon.
		e.insert(t, append(backlog, e.events(y, 1, 1)...))
		p1.waitEntered(t, backlog[2].AggregateID)
		stop2()                                // y/0 fails (cut off at r2's PublishTimeout), r2 lets go
		time.Sleep(5 * cfg1.RebalanceInterval) // r1 takes r2's partitions: applied after the held batch
		close(p1.gates[backlog[2].AggregateID])
		waitDeliveredInOrder(t, e, rec, 14)
	})
}

// startChainOverY starts a relay (batches of 2) that publishes through p,
// commits y/0 and waits until its first attempt is written, commits y/1 ...
// y/behind (held behind y/0), then commits a backlog of 12 events and the
// next y in one transaction (so that y is under the horizon of the next
// read from the start, were there one) and holds the relay's second batch
// of that backlog. It returns the release of that batch.
func startChainOverY(t *testing.T, e env, p *stepPublisher, cfg Config, firstAttemptDone func() bool, behind int) (release func()) {
	t.Helper()
	sig, _ := startWoken(t, e, p, cfg)
	e.insert(t, e.events("y", 0, 1))
	sig.Notify(nil)
	waitFor(t, 10*time.Second, "y/0's first attempt written", firstAttemptDone)
	if behind > 0 {
		e.insert(t, e.events("y", 1, behind))
	}
	var backlog []dialects.Event
	for i := range 12 {
		backlog = append(backlog, e.events("b"+strconv.Itoa(i), 0, 1)...)
	}
	gate := p.gate(backlog[2].AggregateID)
	e.insert(t, append(backlog, e.events("y", behind+1, 1)...))
	sig.Notify(nil)
	p.waitEntered(t, backlog[2].AggregateID)
	return func() { close(gate) }
}

// A retry block that expires while a chain of reads runs does not let the
// chain's reads ahead, which skip the look for an earlier pending row below
// their horizon, publish the later rows of its aggregate first: a read
// from the start that saw a block gives no horizon, and reads ahead keep
// to its clock. Here y/0 backs off for 300 ms; the chain (its second batch
// held) outlives the block; y/1 must still wait for y/0's retry.
func TestReadAheadKeepsItsClock(t *testing.T) {
	forEachTarget(t, func(t *testing.T, e env) {
		rec := newRecorder(nil)
		p := newStepPublisher(rec)
		p.fail["y"] = errors.New("broker hiccup")
		cfg := batchOf(2)
		cfg.Backoff = func(int) time.Duration { return 300 * time.Millisecond }
		release := startChainOverY(t, e, p, cfg, func() bool { return e.maxAttempts(t) == 1 }, 0)
		time.Sleep(400 * time.Millisecond) // y/0's block expires, the chain goes on
		release()
		waitDeliveredInOrder(t, e, rec, 14)
	})
}

// A dead row requeued while a chain of reads runs is published before the
// later rows of its aggregate: the chain's read from the start saw its
// block, so its reads ahead look for earlier pending rows.
func TestReadAheadAfterRequeue(t *testing.T) {
	forEachTarget(t, func(t *testing.T, e env) {
		rec := newRecorder(nil)
		p := newStepPublisher(rec)
		p.fail["y"] = Permanent(errors.New("poison"))
		release := startChainOverY(t, e, p, batchOf(2), func() bool { return e.stats(t).Dead == 1 }, 0)
		n, err := e.d.Requeue(context.Background(), e.db, dialects.RequeueFilter{AggregateType: "order", AggregateID: "y"}, time.Now())
		if err != nil || n != 1 {
			t.Fatalf("requeue y/0: %d, %v", n, err)
		}
		release()
		waitDeliveredInOrder(t, e, rec, 14)
	})
}

// A dead row skipped while a chain of reads runs lets the later rows of its
// aggregate flow in order: y/1, held behind y/0 when the chain's read from
// the start looked, goes before y/2, which a read ahead finds.
func TestReadAheadAfterSkip(t *testing.T) {
	forEachTarget(t, func(t *testing.T, e env) {
		rec := newRecorder(nil)
		p := newStepPublisher(rec)
		p.fail["y"] = Permanent(errors.New("poison"))
		release := startChainOverY(t, e, p, batchOf(2), func() bool { return e.stats(t).Dead == 1 }, 1)
		n, err := e.d.Skip(context.Background(), e.db, dialects.RequeueFilter{AggregateType: "order", AggregateID: "y"})
		if err != nil || n != 1 {
			t.Fatalf("skip y/0: %d, %v", n, err)
		}
		release()
		waitDeliveredInOrder(t, e, rec, 14)
	})
}
