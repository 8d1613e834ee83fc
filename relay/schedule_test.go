package relay

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/jitoutbox/jitoutbox/txoutbox"
)

// clockedPublisher records, for each message it accepts, the database's
// time at that moment: a scheduled event must not reach it before its due
// time by that clock.
type clockedPublisher struct {
	*recorder
	e  env
	mu sync.Mutex
	at map[string]time.Time // event id -> database time at publish
}

func newClockedPublisher(e env) *clockedPublisher {
	return &clockedPublisher{recorder: newRecorder(nil), e: e, at: map[string]time.Time{}}
}

func (p *clockedPublisher) Publish(ctx context.Context, batch []Message, errs []error) {
	now, err := p.e.d.Now(ctx, p.e.db)
	p.recorder.Publish(ctx, batch, errs)
	if err != nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, m := range batch {
		p.at[m.ID] = now
	}
}

func (p *clockedPublisher) publishedAt(id string) (time.Time, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	t, ok := p.at[id]
	return t, ok
}

// addCommit commits the events in one transaction of ob and returns their ids.
func addCommit(t *testing.T, ob *txoutbox.Outbox, evs ...txoutbox.Event) []string {
	t.Helper()
	tx, err := ob.Begin(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, ev := range evs {
		id, err := tx.Add(ev)
		if err != nil {
			_ = tx.Rollback()
			t.Fatalf("add: %v", err)
		}
		ids = append(ids, id)
	}
	if err := tx.Commit(); err != nil {
		t.Fatalf("commit: %v", err)
	}
	return ids
}

func orderEvent(agg string, i int) txoutbox.Event {
	return txoutbox.Event{AggregateType: "order", AggregateID: agg, EventType: "order.changed",
		Payload: []byte(agg + "/" + string(rune('0'+i))), ContentType: "text/plain"}
}

// TestScheduledByTheDatabaseClock: a scheduled event is published once due
// by the database's clock, whatever the relay's own clock says. With the
// relay's clock an hour ahead, an uncorrected relay publishes at once
// (the database's time at publish is then before the due time); an hour
// behind, it never publishes within the test (its poll is an hour away).
// A plain event beside it is published at once.
func TestScheduledByTheDatabaseClock(t *testing.T) {
	for _, skew := range []time.Duration{0, time.Hour, -time.Hour} {
		t.Run(skew.String(), func(t *testing.T) {
			forEachTarget(t, func(t *testing.T, e env) {
				pub := newClockedPublisher(e)
				cfg := testConfig("r1")
				cfg.Clock = func() time.Time { return time.Now().Add(skew) }
				r := newRelay(t, e, pub, cfg)
				ob := relayOutbox(t, e, r)
				start(t, r)
				waitOwnsAll(t, e, r)
				d := orderEvent("d", 0)
				d.Delay = 300 * time.Millisecond
				ids := addCommit(t, ob, d, orderEvent("p", 0))
				waitFor(t, 15*time.Second, "both events published", func() bool { return pub.published() == 2 })
				pub.check(t)
				row, err := e.d.Get(context.Background(), e.db, ids[0])
				if err != nil {
					t.Fatal(err)
				}
				at, _ := pub.publishedAt(ids[0])
				if row.DeliverAt.IsZero() || at.Before(row.DeliverAt) {
					t.Fatalf("scheduled event published at %v by the database's clock, due %v", at, row.DeliverAt)
				}
			})
		})
	}
}

// TestScheduledHoldsItsAggregate: by default the later events of a
// scheduled event's aggregate wait for it (order kept), while other
// aggregates flow; an Unordered one lets them pass.
func TestScheduledHoldsItsAggregate(t *testing.T) {
	forEachTarget(t, func(t *testing.T, e env) {
		for _, unordered := range []bool{false, true} {
			pub := newClockedPublisher(e)
			r := newRelay(t, e, pub, testConfig("r1"))
			ob := relayOutbox(t, e, r)
			stop := start(t, r)
			waitOwnsAll(t, e, r)
			agg := "held"
			if unordered {
				agg = "free"
			}
			d := orderEvent(agg, 0)
			// Well past the other events' lazy wake (DefaultLazyDelay) and
			// a loaded machine's delays: they are published first.
			d.Delay = 1500 * time.Millisecond
			d.Unordered = unordered
			dID := addCommit(t, ob, d)[0]
			later := addCommit(t, ob, orderEvent(agg, 1))[0]
			other := addCommit(t, ob, orderEvent("other-"+agg, 0))[0]
			waitFor(t, 15*time.Second, "every event published", func() bool { return pub.published() == 3 })
			pos := map[string]int{}
			for i, m := range pub.snapshot() {
				pos[m.ID] = i
			}
			if unordered {
				if pos[later] > pos[dID] {
					t.Errorf("unordered: the later event waited for the scheduled one")
				}
			} else {
				pub.check(t) // the scheduled event before the later one
				if pos[other] > pos[dID] {
					t.Errorf("ordered: another aggregate waited for the scheduled event")
				}
			}
			stop()
		}
	})
}

// TestCancelScheduled: a cancelled scheduled event is never published, and
// the event of its aggregate that waited for it goes at once.
func TestCancelScheduled(t *testing.T) {
	forEachTarget(t, func(t *testing.T, e env) {
		pub := newClockedPublisher(e)
		r := newRelay(t, e, pub, testConfig("r1"))
		ob := relayOutbox(t, e, r)
		start(t, r)
		waitOwnsAll(t, e, r)
		d := orderEvent("c", 0)
		d.Delay = time.Hour
		ids := addCommit(t, ob, d)
		later := addCommit(t, ob, orderEvent("c", 1))
		got, err := ob.Cancel(context.Background(), ids[0])
		if err != nil || len(got) != 1 || got[0] != ids[0] {
			t.Fatalf("cancel: %v, %v", got, err)
		}
		// The relay's poll is an hour away: the cancel's own commit
		// does not wake it, the next commit does.
		addCommit(t, ob, orderEvent("wake", 0))
		waitFor(t, 15*time.Second, "the waiting event published", func() bool {
			_, ok := pub.publishedAt(later[0])
			return ok
		})
		if _, ok := pub.publishedAt(ids[0]); ok {
			t.Fatal("the cancelled event was published")
		}
		if st := e.stats(t); st.Scheduled != 0 {
			t.Fatalf("stats after cancel: %+v", st)
		}
	})
}

// TestCleanupReleasesHoldsWhateverRetention: the hold of a scheduled event
// published and due goes with the next cleanup, also for a relay that keeps
// published rows for good (negative Retention): otherwise the holds table
// would grow by one row per aggregate ever scheduled.
func TestCleanupReleasesHoldsWhateverRetention(t *testing.T) {
	forEachTarget(t, func(t *testing.T, e env) {
		pub := newClockedPublisher(e)
		cfg := testConfig("r1")
		cfg.Retention = -1
		r := newRelay(t, e, pub, cfg)
		ob := relayOutbox(t, e, r)
		start(t, r)
		waitOwnsAll(t, e, r)
		d := orderEvent("h", 0)
		d.Delay = 100 * time.Millisecond
		addCommit(t, ob, d)
		// Marked, not only published: a row waiting for its mark is still
		// pending, and its aggregate not drained.
		waitFor(t, 15*time.Second, "the scheduled event published and marked", func() bool {
			return pub.published() == 1 && e.stats(t).Pending == 0
		})
		holds := func() int {
			t.Helper()
			var n int
			if err := e.db.QueryRow("SELECT count(*) FROM " + e.d.Table() + "_held").Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		}
		if n := holds(); n != 1 {
			t.Fatalf("%d holds after the scheduled event, want 1", n)
		}
		if _, err := r.cleanup(context.Background()); err != nil {
			t.Fatal(err)
		}
		if n := holds(); n != 0 {
			t.Fatalf("%d holds after cleanup with a negative Retention, want 0", n)
		}
		if st := e.stats(t); st.Published != 1 {
			t.Fatalf("cleanup with a negative Retention deleted published rows: %+v", st)
		}
	})
}
