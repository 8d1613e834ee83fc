package relay

import (
	"context"
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/notify"
	"github.com/jitoutbox/jitoutbox/txoutbox"
)

// leasingTarget skips targets whose dialect cannot write rows leased at
// commit (the hand-over needs dialects.LeasingInserter: PostgreSQL).
func leasingTarget(t *testing.T, e env) {
	t.Helper()
	if _, ok := e.d.(dialects.LeasingInserter); !ok {
		t.Skipf("%s has no dialects.LeasingInserter: time-critical events take the claim-by-id path (tested elsewhere)", e.d.Name())
	}
}

// waitServing waits until a relay has registered with sig for leases.
func waitServing(t *testing.T, sig *notify.Local) {
	t.Helper()
	waitFor(t, 10*time.Second, "relay serving leases", func() bool { _, _, ok := sig.LeaseFor(); return ok })
}

// localOutbox returns an in-process signal and an Outbox that notifies it.
func localOutbox(t *testing.T, e env) (*notify.Local, *txoutbox.Outbox) {
	t.Helper()
	sig := notify.NewLocal()
	ob, err := txoutbox.New(e.db, e.d, txoutbox.WithNotifier(sig))
	if err != nil {
		t.Fatal(err)
	}
	return sig, ob
}

// TestLeasedAtCommitPublishedWithoutClaim: with a relay in the process,
// time-critical commits are written leased to it and published without a
// single claim statement, in order per aggregate; an event behind a pending
// event of its aggregate is not leased and follows it.
func TestLeasedAtCommitPublishedWithoutClaim(t *testing.T) {
	forEachTarget(t, func(t *testing.T, e env) {
		leasingTarget(t, e)
		sig, ob := localOutbox(t, e)
		rec := newRecorder(nil)
		cfg := testConfig("r1")
		cfg.Sources = []notify.Source{sig}
		r := newRelay(t, e, rec, cfg)
		start(t, r)
		waitServing(t, sig)

		for i := range 5 {
			commit(t, ob, "a"+strconv.Itoa(i), 0, 2, false, txoutbox.TimeCritical())
		}
		waitFor(t, 10*time.Second, "10 published", func() bool { return rec.published() == 10 })
		if n := r.c.claims.Load(); n != 0 {
			t.Errorf("%d claims for events leased at commit, want 0", n)
		}
		for _, m := range rec.snapshot() {
			if m.Attempt != 1 || !m.Critical {
				t.Errorf("event %s: attempt %d critical %v", m.ID, m.Attempt, m.Critical)
			}
		}

		// "held" has a pending, unleased event (an ordinary commit; its lazy
		// wake is still pending): the time-critical one behind it is written
		// unleased and must not overtake it.
		commit(t, ob, "held", 0, 1, false)
		commit(t, ob, "held", 1, 1, false, txoutbox.TimeCritical())
		waitFor(t, 10*time.Second, "held published", func() bool { return rec.published() == 12 })
		rec.check(t)
		// The mark follows the publish: wait for it rather than race it.
		waitFor(t, 10*time.Second, "nothing pending", func() bool { return e.stats(t).Pending == 0 })
	})
}

// TestHandedOverRowsReleasedOnStop: rows handed over to a relay that stops
// before taking them are released at once (not left to their lease) and
// another relay publishes them.
func TestHandedOverRowsReleasedOnStop(t *testing.T) {
	forEachTarget(t, func(t *testing.T, e env) {
		leasingTarget(t, e)
		sig, ob := localOutbox(t, e)
		var busy atomic.Int32
		stuck := PublisherFunc(func(ctx context.Context, batch []Message, errs []error) {
			busy.Add(1)
			<-ctx.Done() // a broker that answers nothing: the relay stays in its first batch
			for i := range errs {
				errs[i] = fmt.Errorf("stuck: %w", ctx.Err())
			}
		})
		cfg := testConfig("r1")
		cfg.Sources = []notify.Source{sig}
		cfg.LeaseDuration = time.Minute
		cfg.PublishTimeout = 30 * time.Second
		stop := start(t, newRelay(t, e, stuck, cfg))
		waitServing(t, sig)

		commit(t, ob, "first", 0, 1, false, txoutbox.TimeCritical())
		waitFor(t, 10*time.Second, "relay busy with the first event", func() bool { return busy.Load() == 1 })
		commit(t, ob, "second", 0, 1, false, txoutbox.TimeCritical()) // handed over, not taken
		stop()
		if busy.Load() != 1 {
			t.Fatalf("the stuck relay took the second event")
		}

		rec := newRecorder(nil)
		start(t, newRelay(t, e, rec, testConfig("r2")))
		waitFor(t, 10*time.Second, "both events published by r2 (well before the 1 minute lease)",
			func() bool { return rec.published() == 2 })
		rec.check(t)
	})
}
