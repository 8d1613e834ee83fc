package relay

import (
	"context"
	"database/sql"
	"errors"
	"sync"
	"sync/atomic"
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

// gate holds agg's first Publish call until the returned channel is closed.
func (p *stepPublisher) gate(agg string) chan struct{} {
	p.entered[agg] = make(chan struct{}, 1)
	p.gates[agg] = make(chan struct{})
	return p.gates[agg]
}

func (p *stepPublisher) waitEntered(t *testing.T, agg string) {
	t.Helper()
	select {
	case <-p.entered[agg]:
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

// batchOf returns the test configuration with batches of n rows.
func batchOf(n int) Config {
	cfg := testConfig("r1")
	cfg.BatchSize = n
	return cfg
}

// readCounter counts the relay's reads.
type readCounter struct {
	dialects.Dialect
	n atomic.Int64
}

func (c *readCounter) Read(ctx context.Context, db *sql.DB, req dialects.ReadRequest) (dialects.ReadResult, error) {
	c.n.Add(1)
	return c.Dialect.Read(ctx, db, req)
}

// While the hand-over lane publishes an aggregate's event, the read lane
// leaves that aggregate's rows alone, publishes the rest, and then waits
// to be woken instead of reading the same rows again and again (it used
// to spin on the database until the lane was done).
func TestReadLaneWaitsForTheHandOver(t *testing.T) {
	forEachTarget(t, func(t *testing.T, e env) {
		rc := &readCounter{Dialect: e.d}
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
		before := rc.n.Load()
		time.Sleep(200 * time.Millisecond)
		if n := rc.n.Load() - before; n > 5 {
			t.Errorf("%d reads in 200 ms while x is held by the hand-over lane, want at most 5 (no spin)", n)
		}
		if n := rec.published(); n != 2 {
			t.Fatalf("%d published while x/0 is held, want 2", n)
		}
		close(release)
		waitFor(t, 10*time.Second, "all published", func() bool { return rec.published() == 5 })
		waitFor(t, 10*time.Second, "all marked", func() bool { return e.stats(t).Pending == 0 })
		rec.check(t)
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
		waitFor(t, 10*time.Second, "all published", func() bool { return rec.published() == 4 })
		waitFor(t, 10*time.Second, "all marked", func() bool { return e.stats(t).Pending == 0 })
		rec.check(t)
	})
}
