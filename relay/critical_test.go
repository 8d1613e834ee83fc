package relay

import (
	"context"
	"database/sql"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/notify"
	"github.com/jitoutbox/jitoutbox/txoutbox"
)

// holdPublisher holds the Publish call that carries the event with payload
// at until release is closed (or the call's context ends, which fails it),
// signalling entered when it starts: a backlog's drain stops there.
type holdPublisher struct {
	next    Publisher
	at      string
	entered chan struct{}
	release chan struct{}
	once    sync.Once
}

// open releases the held call (once).
func (p *holdPublisher) open() { p.once.Do(func() { close(p.release) }) }

func newHoldPublisher(next Publisher, at string) *holdPublisher {
	return &holdPublisher{next: next, at: at, entered: make(chan struct{}, 1), release: make(chan struct{})}
}

func (p *holdPublisher) Publish(ctx context.Context, batch []Message, errs []error) {
	for _, m := range batch {
		if string(m.Payload) != p.at {
			continue
		}
		select {
		case p.entered <- struct{}{}:
		default:
		}
		select {
		case <-p.release:
		case <-ctx.Done():
			for i := range errs {
				errs[i] = ctx.Err()
			}
			return
		}
	}
	p.next.Publish(ctx, batch, errs)
}

func (p *holdPublisher) waitEntered(t *testing.T) {
	t.Helper()
	select {
	case <-p.entered:
	case <-time.After(10 * time.Second):
		t.Fatalf("the drain never reached %s", p.at)
	}
}

// publishedPayload reports whether rec accepted an event with payload pl.
func (r *recorder) publishedPayload(pl string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, m := range r.got {
		if string(m.Payload) == pl {
			return true
		}
	}
	return false
}

// startDraining starts a relay (batches of 10, woken by a notify.Local)
// on a backlog of 50 events of aggregate "hot" and 10 of others, held
// (hold) at hot/20 until the test opens it: the read lane is deep in its chain of reads. It
// returns an Outbox of "another process": no relay wired to it
// (txoutbox.WithRelay), its commits only wake the relay through the Local,
// as pgnotify or natsnotify would.
func startDraining(t *testing.T, e env, rec *recorder, hold *holdPublisher) *txoutbox.Outbox {
	t.Helper()
	backlog := e.events("hot", 0, 50)
	for i := range 10 {
		backlog = append(backlog, e.events("other"+strconv.Itoa(i), 0, 1)...)
	}
	e.insert(t, backlog)
	cfg := batchOf(10)
	cfg.PublishTimeout = time.Minute // the hold outlasts the test's waits
	cfg.LeaseDuration = 2 * time.Minute
	sig, _ := startWoken(t, e, hold, cfg)
	t.Cleanup(hold.open) // before the relay stops (cleanups run last first)
	hold.waitEntered(t)
	ob, err := txoutbox.New(e.db, e.d, txoutbox.WithNotifier(sig))
	if err != nil {
		t.Fatal(err)
	}
	return ob
}

// (a) A relay draining a large backlog of one aggregate publishes a
// time-critical event committed by another process (not handed over: a
// separate Outbox, a Source's wake) before the backlog is done. It used to
// publish it only after every older row of its partitions.
func TestCriticalFirstBehindABacklog(t *testing.T) {
	forEachTarget(t, criticalFirstBehindABacklog)
}

// criticalFirstBehindABacklog commits a time-critical event of another
// process while a relay's backlog on e is held, and checks that it is
// published meanwhile, and the backlog only once opened.
func criticalFirstBehindABacklog(t *testing.T, e env) {
	rec := newRecorder(nil)
	hold := newHoldPublisher(rec, "hot/20")
	ob := startDraining(t, e, rec, hold)
	commit(t, ob, "urgent", 0, 1, false, txoutbox.TimeCritical())
	waitFor(t, 10*time.Second, "the time-critical event published while the backlog is held", func() bool {
		return rec.publishedPayload("urgent/0")
	})
	if rec.publishedPayload("hot/20") || rec.publishedPayload("other0/0") {
		t.Fatal("the backlog went on while it was held")
	}
	hold.open()
	waitDeliveredInOrder(t, e, rec, 61)
}

// (b) A time-critical event of an aggregate with an earlier pending event
// is not published before it: not "hot"'s (the backlog's own aggregate,
// held), nor y's behind y's ordinary event in the backlog; only that
// aggregate waits (z, free, goes at once).
func TestCriticalKeepsOrderBehindPending(t *testing.T) {
	forEachTarget(t, func(t *testing.T, e env) {
		rec := newRecorder(nil)
		hold := newHoldPublisher(rec, "hot/20")
		ob := startDraining(t, e, rec, hold)
		commit(t, ob, "y", 0, 1, false) // ordinary: behind the backlog
		commit(t, ob, "y", 1, 1, false, txoutbox.TimeCritical())
		commit(t, ob, "hot", 50, 1, false, txoutbox.TimeCritical())
		commit(t, ob, "z", 0, 1, false, txoutbox.TimeCritical())
		waitFor(t, 10*time.Second, "z published while the backlog is held", func() bool {
			return rec.publishedPayload("z/0")
		})
		for _, pl := range []string{"y/0", "y/1", "hot/50"} {
			if rec.publishedPayload(pl) {
				t.Fatalf("%s published while the backlog ahead of it is held", pl)
			}
		}
		hold.open()
		waitDeliveredInOrder(t, e, rec, 64) // the recorder checks each aggregate's order
	})
}

// criticalSpy counts the rows ReadCritical returned, by payload.
type criticalSpy struct {
	dialects.Dialect
	mu   sync.Mutex
	seen map[string]int
}

func (s *criticalSpy) ReadCritical(ctx context.Context, db *sql.DB, req dialects.CriticalRequest) (dialects.CriticalResult, error) {
	res, err := s.Dialect.ReadCritical(ctx, db, req)
	s.mu.Lock()
	for _, r := range res.Records {
		s.seen[string(r.Payload)]++
	}
	s.mu.Unlock()
	return res, err
}

func (s *criticalSpy) returned(pl string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seen[pl]
}

// (c) A row both lanes see is published once: c/0, read and held in
// flight by the read lane (its poll), is returned by a critical read
// meanwhile and left to the read lane; d/0, held in flight by the
// hand-over lane after a critical read, is read by the read lane meanwhile
// and left alone; both are returned again by critical reads while their
// marks may still be queued.
func TestCriticalReadNoDuplicates(t *testing.T) {
	forEachTarget(t, func(t *testing.T, e env) {
		spy := &criticalSpy{Dialect: e.d, seen: map[string]int{}}
		e.d = spy
		rec := newRecorder(nil)
		p := newStepPublisher(rec)
		releaseC, releaseD := p.gate("c"), p.gate("d")
		cfg := testConfig("r1")
		cfg.PollInterval = 20 * time.Millisecond
		sig, _ := startWoken(t, e, p, cfg)
		ob, err := txoutbox.New(e.db, e.d)
		if err != nil {
			t.Fatal(err)
		}

		// c: the read lane's poll takes it first.
		commit(t, ob, "c", 0, 1, false, txoutbox.TimeCritical())
		p.waitEntered(t, "c")
		sig.Notify(nil)
		waitFor(t, 10*time.Second, "a critical read returns c/0", func() bool { return spy.returned("c/0") > 0 })
		close(releaseC)
		waitFor(t, 10*time.Second, "c/0 published", func() bool { return rec.publishedPayload("c/0") })

		// d: the hand-over lane takes it first (the wake beats the poll
		// most of the time; either way both lanes see it).
		commit(t, ob, "d", 0, 1, false, txoutbox.TimeCritical())
		sig.Notify(nil)
		p.waitEntered(t, "d")
		time.Sleep(5 * cfg.PollInterval) // polls read d/0, in flight
		close(releaseD)
		for range 20 {
			sig.Notify(nil)
			time.Sleep(time.Millisecond)
		}
		waitFor(t, 10*time.Second, "d/0 published", func() bool { return rec.publishedPayload("d/0") })
		if spy.returned("d/0") == 0 {
			t.Fatal("no critical read returned d/0")
		}
		waitDeliveredInOrder(t, e, rec, 2) // the recorder fails on a second publish of an event
		if n := rec.published(); n != 2 {
			t.Fatalf("%d published, want 2", n)
		}
	})
}

// slowClockRead is a dialect whose clock reads (Dialect.Now) take rtt to
// come back, as under load: the relay's idea of the database's time is
// then up to rtt behind it (dbClock.sync), so a row committed just before
// a wake is not due yet by the relay's clock.
type slowClockRead struct {
	dialects.Dialect
	rtt time.Duration
}

func (d slowClockRead) Now(ctx context.Context, q dialects.Querier) (time.Time, error) {
	at, err := d.Dialect.Now(ctx, q)
	t := time.NewTimer(d.rtt)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
	return at, err
}

// (d) A relay whose clock reads were slow (it takes the database's time
// to be up to a round trip behind what it read) still publishes a
// time-critical event committed by another process while its backlog is
// held: the event is not due yet by the relay's clock when the wake's
// critical read runs, but a row never tried is due once committed
// (dialects.CriticalRequest). Without that the event waited for the
// backlog.
func TestCriticalReadBehindASlowClock(t *testing.T) {
	forEachTarget(t, func(t *testing.T, e env) {
		e.d = slowClockRead{Dialect: e.d, rtt: 300 * time.Millisecond}
		criticalFirstBehindABacklog(t, e)
	})
}

// readCounter counts a relay's reads: critical reads and the read lane's.
type readCounter struct {
	dialects.Dialect
	critical, reads atomic.Int64
}

func (c *readCounter) ReadCritical(ctx context.Context, db *sql.DB, req dialects.CriticalRequest) (dialects.CriticalResult, error) {
	c.critical.Add(1)
	return c.Dialect.ReadCritical(ctx, db, req)
}

func (c *readCounter) Read(ctx context.Context, db *sql.DB, req dialects.ReadRequest) (dialects.ReadResult, error) {
	c.reads.Add(1)
	return c.Dialect.Read(ctx, db, req)
}

func (c *readCounter) counts() [2]int64 { return [2]int64{c.critical.Load(), c.reads.Load()} }

// (e) A wake names the partitions of its commit, and only their owner
// reads. Two relays share a table and a wake source; time-critical commits
// of another process (an Outbox whose Notifier is that source, with no
// relay of its own) are published by the owner of their partition, while
// the other relay runs neither a critical read nor a read of its read lane
// for them. The owner's critical read takes every row of these commits
// (each of a fresh aggregate), so its read lane does not read either; a
// commit behind a pending row of its aggregate is published by the read
// lane. A wake for any partition still makes both look.
func TestWakeReachesOnlyTheOwner(t *testing.T) {
	forEachTarget(t, func(t *testing.T, e env) {
		sig := notify.NewLocal()
		rec := newRecorder(nil)
		names := []string{"a", "b"}
		relays, counters := map[string]*Relay{}, map[string]*readCounter{}
		for _, name := range names {
			counters[name] = &readCounter{Dialect: e.d}
			cfg := testConfig(name)
			cfg.Sources = []notify.Source{sig}
			cfg.RebalanceInterval = time.Minute // b joining is seen at once; nothing moves after
			ce := e
			ce.d = counters[name]
			relays[name] = newRelay(t, ce, rec.as(name), cfg)
			start(t, relays[name])
		}
		waitFor(t, 30*time.Second, "a and b split the partitions", func() bool {
			a, b := ownedBy(e, relays["a"]), ownedBy(e, relays["b"])
			return a > 0 && b > 0 && a+b == e.parts
		})
		// Let the reads of the partitions taken end.
		quiet := func() {
			t.Helper()
			last := [2][2]int64{}
			waitFor(t, 10*time.Second, "the relays stop reading", func() bool {
				now := [2][2]int64{counters["a"].counts(), counters["b"].counts()}
				same := now == last
				last = now
				time.Sleep(100 * time.Millisecond)
				return same
			})
		}
		quiet()

		ob, err := txoutbox.New(e.db, e.d, txoutbox.WithNotifier(sig))
		if err != nil {
			t.Fatal(err)
		}
		quietOB, err := txoutbox.New(e.db, e.d, txoutbox.WithNotifier(sig), txoutbox.WithoutLazyWake())
		if err != nil {
			t.Fatal(err)
		}
		for _, owner := range names {
			other := names[0]
			if owner == other {
				other = names[1]
			}
			before := counters[other].counts()
			ownerBefore := counters[owner].counts()
			k := 0
			ownedAgg := func() string {
				for {
					k++
					if agg := owner + "-" + strconv.Itoa(k); relays[owner].Owns(dialects.PartitionOf("order", agg, e.parts)) {
						return agg
					}
				}
			}
			for range 5 {
				agg := ownedAgg()
				commit(t, ob, agg, 0, 1, false, txoutbox.TimeCritical())
				pl := agg + "/0"
				waitFor(t, 10*time.Second, pl+" published", func() bool { return rec.publishedPayload(pl) })
			}
			quiet()
			if got := counters[owner].counts(); got[0] == ownerBefore[0] || got[1] != ownerBefore[1] {
				t.Errorf("%s, the owner: critical reads %d → %d (want more), reads %d → %d (want none: the critical reads took every row)",
					owner, ownerBefore[0], got[0], ownerBefore[1], got[1])
			}
			if got := counters[other].counts(); got != before {
				t.Errorf("%s read for wakes of %s's partition: critical reads %d → %d, reads %d → %d",
					other, owner, before[0], got[0], before[1], got[1])
			}
			// Behind an ordinary pending row of its aggregate (with no lazy
			// wake: left to the hour's poll), a time-critical row is held
			// back while the critical read takes the commit's other row:
			// the read lane publishes the held one, after its aggregate's.
			held, free := ownedAgg(), ownedAgg()
			commit(t, quietOB, held, 0, 1, false)
			tx, err := ob.Begin(context.Background(), nil, txoutbox.TimeCritical())
			if err != nil {
				t.Fatal(err)
			}
			for _, agg := range []string{free, held} {
				if _, err := tx.Add(txoutbox.Event{AggregateType: "order", AggregateID: agg, EventType: "order.changed",
					Payload: []byte(agg + "/1"), ContentType: "text/plain"}); err != nil {
					t.Fatal(err)
				}
			}
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
			waitFor(t, 10*time.Second, held+"/1 published behind "+held+"/0", func() bool {
				return rec.publishedPayload(free+"/1") && rec.publishedPayload(held+"/0") && rec.publishedPayload(held+"/1")
			})
			quiet()
		}

		// A wake for any partition: both look.
		before := [2]int64{counters["a"].critical.Load(), counters["b"].critical.Load()}
		sig.Notify(nil)
		waitFor(t, 10*time.Second, "both relays read after a wake for any partition", func() bool {
			return counters["a"].critical.Load() > before[0] && counters["b"].critical.Load() > before[1]
		})
		rec.check(t)
	})
}
