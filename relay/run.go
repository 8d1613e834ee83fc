package relay

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/notify"
	"github.com/jitoutbox/jitoutbox/relay/internal/broker"
	"github.com/jitoutbox/jitoutbox/relay/internal/marker"
	"github.com/jitoutbox/jitoutbox/relay/internal/reader"
	"github.com/jitoutbox/jitoutbox/relay/internal/retries"
	"github.com/jitoutbox/jitoutbox/relay/internal/sequencer"
)

// retryMargin is added to retry timers so that a row whose NextAttemptAt
// has just come due is read even on databases with coarse timestamps.
const retryMargin = 5 * time.Millisecond

// dbLogEvery rate-limits the logging of a persisting database error.
const dbLogEvery = time.Minute

// run is the state of one Run: everything a run changes lives here, made
// anew by each Run, so that nothing of a stopped run leaks into the next.
type run struct {
	r     *Relay
	clock dbClock // the database's time (schedule.go)
	wakes struct {
		urgent, lazy, handoff chan struct{}
		// scheduled: a commit in this process wrote scheduled events; the
		// read lane looks up the next due time.
		scheduled chan struct{}
		// critical asks the hand-over lane for a critical read (lanes.go)
		// of the partitions it names: an urgent wake from a Source (which
		// names the partitions of the commit's rows), or, for any owned
		// partition, a hand-over that asks for a read or the fleet.
		// Wakes coalesce: at most one read in flight and one queued.
		critical *notify.Wakes
	}
	own    *owner
	marks  *marker.Marker
	reader *reader.Reader // the read lane's chain of reads
	// fastRetries carries the retry times of the hand-over lane's failures
	// to the read lane, which owns the retry schedule.
	fastRetries *retries.Box
	updates     chan ownUpdate
	loopDone    chan struct{}

	// Read lane state, touched only by the publish loop's goroutine.
	active     []int  // partitions published now, sorted
	readTicket uint64 // the mark queue's ticket of the read lane's last batch
	dbFailing  bool
	dbErrCount int
	dbLoggedAt time.Time

	validUntil atomic.Int64 // lease dialects: ownership certain until then (unix ns; 0: no limit)
	lastBatch  atomic.Int64 // when the last batch started (unix ns), for the owner's busy checks

	// fastBatch is held by the hand-over lane while its batch is in flight;
	// apply takes it, so that ownership changes wait for that batch too.
	fastBatch sync.Mutex

	// seq decides which lane publishes a row: the aggregates each lane
	// has queued or in flight, the seqs published recently.
	seq *sequencer.Sequencer

	// broker is the publisher stage: it publishes the lanes' waves and
	// keeps the broker's state (outage, last acknowledgement).
	broker *broker.Stage[Message]

	// Shared by the read lane (the publish loop) and the hand-over lane.
	mu      sync.Mutex
	token   string        // the session's fencing token
	trouble time.Duration // current outage/db-error back-off, 0 when healthy
}

func newRun(r *Relay, parts int) *run {
	rn := &run{r: r, updates: make(chan ownUpdate), loopDone: make(chan struct{}), seq: sequencer.New()}
	rn.wakes.urgent = make(chan struct{}, 1)
	rn.wakes.lazy = make(chan struct{}, 1)
	rn.wakes.handoff = make(chan struct{}, 1)
	rn.wakes.critical = notify.NewWakes()
	rn.wakes.scheduled = make(chan struct{}, 1)
	rn.clock.clock = r.cfg.Clock
	rn.fastRetries = retries.NewBox()
	rn.marks = marker.New(rn, marker.Linger)
	rn.broker = broker.New(broker.Config[Message]{Publish: r.pub.Publish, Gate: r.gate, Clock: r.cfg.Clock,
		PublishTimeout: r.cfg.PublishTimeout, Logger: r.cfg.Logger, Owner: r.cfg.Owner,
		Unavailable: IsUnavailable, Permanent: IsPermanent})
	rn.reader = reader.New(reader.Config{
		Read: func(ctx context.Context, req dialects.ReadRequest) (dialects.ReadResult, error) {
			return r.d.Read(ctx, r.db, req)
		},
		Seq: rn.seq, Marks: rn.marks, Own: readOwnership{rn},
		Now:       func() time.Time { return rn.clock.now() },
		BatchSize: r.cfg.BatchSize, MarkAhead: markAhead,
	})
	rn.own = &owner{r: r, parts: parts, updates: rn.updates, loopDone: rn.loopDone, watchSig: make(chan struct{}, 1),
		changeSig:  make(chan struct{}, 1),
		validUntil: &rn.validUntil, lastBatch: &rn.lastBatch}
	return rn
}

// cycleResult tells the loop what to do after a cycle.
type cycleResult struct {
	claimed   int
	published int
	// outage: a wave found the broker unavailable (outage.go); dbErr: a
	// database call failed. Either sets trouble: back off before the next
	// read.
	outage  bool
	dbErr   error
	trouble bool
	// more asks for another cycle at once (a full batch, or rows held
	// behind a failure that others may follow).
	more bool
	// unavailable: rows the broker could not take (IsUnavailable) in a
	// wave that was not an outage were left pending, due at retryAt.
	unavailable bool
	// retryAt is when rows this cycle scheduled become due (zero if none).
	retryAt time.Time
}

func (res *cycleResult) retryNoLaterThan(t time.Time) {
	t = t.Add(retryMargin)
	if res.retryAt.IsZero() || t.Before(res.retryAt) {
		res.retryAt = t
	}
}

// apply takes an ownership update (between batches) and publishes the set
// to the hand-over. It reports whether partitions were gained.
func (rn *run) apply(u ownUpdate) bool {
	gained := false
	for _, p := range u.active {
		if _, ok := slices.BinarySearch(rn.active, p); !ok {
			gained = true
		}
	}
	rn.fastBatch.Lock() // the hand-over lane's batch in flight ends first
	rn.marks.Idle()     // and every mark is written under the token it was published with
	rn.active = u.active
	rn.mu.Lock()
	if u.token != rn.token {
		rn.seq.NewSession()
	}
	rn.token = u.token
	rn.mu.Unlock()
	rn.r.hand.setOwned(rn.active)
	rn.fastBatch.Unlock()
	close(u.done)
	return gained
}

// owns reports whether the read lane publishes partition p now.
func (rn *run) owns(p int) bool {
	_, ok := slices.BinarySearch(rn.active, p)
	return ok
}

// applyPending applies an update waiting on the channel, if any.
func (rn *run) applyPending() bool {
	select {
	case u := <-rn.updates:
		return rn.apply(u)
	default:
		return false
	}
}

// loop runs cycles until ctx ends.
func (rn *run) loop(ctx context.Context) {
	defer rn.r.hand.setOwned(nil)
	cfg := &rn.r.cfg
	// A fleet table has no poll of its own: the fleet's poll of the
	// database wakes it when it has due rows.
	poll := time.NewTimer(jitter(cfg.PollInterval))
	defer poll.Stop()
	resetPoll := func() {
		if rn.r.fleet == nil {
			poll.Reset(jitter(cfg.PollInterval))
		}
	}
	if rn.r.fleet != nil {
		poll.Stop()
	}
	retry := time.NewTimer(time.Hour)
	retry.Stop()
	defer retry.Stop()
	var sched retries.Schedule
	lazyTimer := time.NewTimer(time.Hour)
	lazyTimer.Stop()
	defer lazyTimer.Stop()
	lazyPending := false
	due := dueCheck{dirty: true, timer: time.NewTimer(time.Hour)}
	due.timer.Stop()
	defer due.timer.Stop()
	var lastSync time.Time
	syncClock := func() {
		if f := rn.r.fleet; f != nil {
			// The fleet measures the database's clock once for its tables.
			rn.clock.offset.Store(f.db.clock.offset.Load())
			lastSync = time.Now()
			return
		}
		if err := rn.clock.sync(ctx, rn.r.d, rn.r.db); err != nil {
			if ctx.Err() == nil {
				cfg.Logger.DebugContext(ctx, "jitoutbox relay: database clock", "owner", cfg.Owner, "err", err)
			}
			return // tried again after the next cycle
		}
		lastSync = time.Now()
	}
	syncClock()
	// armRetry sets the retry timer for the schedule's earliest time.
	armRetry := func() {
		if next, ok := sched.Next(rn.clock.now()); ok {
			retry.Reset(next)
		}
	}
	// lookDue looks up the next due times of scheduled events
	// (rate-limited) and arms the retry timer.
	lookDue := func() {
		sched.AddAll(due.run(ctx, rn))
		armRetry()
	}

	reason := reasonStart
	for {
		var res cycleResult
		rn.r.hand.cycleStarts()
		if len(rn.active) > 0 {
			res = rn.cycle(ctx)
		}
		if rn.r.ts.cycle != nil {
			// Tests read a finished cycle's outcome from the table: the
			// signal waits for the cycle's marks (the relay itself does not).
			rn.marks.WaitWritten(rn.readTicket)
		}
		rn.r.ts.cycleDone(ctx, cycleSignal{Reason: reason, Claimed: res.claimed, Published: res.published, Outage: res.outage, DBError: res.dbErr})
		if ctx.Err() != nil {
			return
		}
		resetPoll()
		if !res.retryAt.IsZero() {
			sched.Add(res.retryAt)
		}
		sched.AddAll(rn.fastRetries.Take())
		armRetry()
		if time.Since(lastSync) >= clockSyncEvery {
			syncClock()
		}
		if res.trouble {
			// Broker outage or database error: back off before the next
			// read, whatever wakes arrive meanwhile (ownership updates are
			// still applied at once).
			rn.mu.Lock()
			t := time.NewTimer(rn.trouble)
			rn.mu.Unlock()
		backoff:
			for {
				select {
				case <-ctx.Done():
					t.Stop()
					return
				case u := <-rn.updates:
					rn.apply(u)
				case <-t.C:
					break backoff
				}
			}
			reason = reasonTrouble
			continue
		}
		if res.more {
			reason = reasonMore
			continue
		}
		// The cycle ran to a short read: scheduled rows may have been
		// written or become due; the next due time bounds the wait.
		due.dirty = true
		lookDue()
	wait:
		for {
			select {
			case <-ctx.Done():
				return
			case u := <-rn.updates:
				if rn.apply(u) {
					reason = reasonOwn
					break wait
				}
			case <-rn.wakes.urgent:
				reason = reasonWake
				break wait
			case <-poll.C:
				reason = reasonPoll
				break wait
			case <-retry.C:
				sched.Due(rn.clock.now())
				reason = reasonRetry
				break wait
			case <-rn.fastRetries.Wake():
				sched.AddAll(rn.fastRetries.Take())
				armRetry()
			case <-rn.wakes.scheduled:
				due.dirty = true
				lookDue()
			case <-due.timer.C:
				lookDue()
			case <-lazyTimer.C:
				lazyPending = false
				reason = reasonLazy
				break wait
			case <-rn.wakes.lazy:
				if !lazyPending {
					lazyPending = true
					lazyTimer.Reset(cfg.LazyDelay)
				}
			}
		}
	}
}

// cycle reads the owned partitions and publishes what it finds, until a
// read comes back short. Handed-over records go through the hand-over lane
// (lanes.go), beside it.
func (rn *run) cycle(ctx context.Context) cycleResult {
	rn.r.c.cycles.Add(1)
	var res cycleResult
	rn.applyPending()
	rn.read(ctx, &res)
	if err := rn.marks.TakeErr(); err != nil && res.dbErr == nil && ctx.Err() == nil {
		res.dbErr = err // a mark failed: back off like any database error
	}
	rn.afterCycle(ctx, &res)
	return res
}

// read reads the owned partitions through the run's chain of reads
// (relay/internal/reader) and publishes each batch it returns, until a
// read comes back short. A batch whose publish met an outage or a database
// error, or the run's end, stops the reads.
func (rn *run) read(ctx context.Context, res *cycleResult) {
	var exit reader.Exit
	for {
		recs, end := rn.reader.Next(ctx)
		if len(recs) == 0 {
			exit = end
			break
		}
		rn.r.c.claims.Add(1)
		res.claimed += len(recs)
		failed := rn.publishBatch(ctx, recs, false, res)
		rn.reader.Ended(failed)
		if res.dbErr != nil || res.outage || ctx.Err() != nil {
			exit = rn.reader.Stop()
			break
		}
	}
	if exit.Err != nil && ctx.Err() == nil {
		res.dbErr = exit.Err
	}
	if exit.Gained {
		res.more = true
	}
}

// readOwnership is the read lane's ownership as its reader sees it: the
// partitions published now, and the updates applied between batches.
type readOwnership struct{ rn *run }

// Owned returns the partitions the read lane publishes now.
func (o readOwnership) Owned() []int { return o.rn.active }

// Owns reports whether the read lane publishes partition p now.
func (o readOwnership) Owns(p int) bool { return o.rn.owns(p) }

// ApplyPending applies an ownership update waiting, if any.
func (o readOwnership) ApplyPending() bool { return o.rn.applyPending() }

// afterCycle updates the trouble state and logs transitions.
func (rn *run) afterCycle(ctx context.Context, res *cycleResult) {
	if ctx.Err() != nil {
		return
	}
	cfg := &rn.r.cfg
	now := cfg.Clock()
	if res.dbErr != nil {
		rn.dbErrCount++
		if !rn.dbFailing || now.Sub(rn.dbLoggedAt) >= dbLogEvery {
			cfg.Logger.ErrorContext(ctx, "jitoutbox relay: database error; backing off",
				"owner", cfg.Owner, "err", res.dbErr, "errors_since_last_log", rn.dbErrCount)
			rn.dbLoggedAt = now
			rn.dbErrCount = 0
		}
		rn.dbFailing = true
		if !res.outage {
			rn.mu.Lock()
			rn.trouble = nextTroubleDelay(rn.trouble, cfg.PollInterval)
			rn.mu.Unlock()
		}
	} else if rn.dbFailing {
		rn.dbFailing = false
		rn.dbErrCount = 0
		cfg.Logger.InfoContext(ctx, "jitoutbox relay: database recovered", "owner", cfg.Owner)
	}
	res.trouble = res.outage || res.dbErr != nil
	inOutage := rn.broker.InOutage()
	rn.mu.Lock()
	if !res.trouble && (res.published > 0 || !inOutage) {
		rn.trouble = 0
	}
	rn.mu.Unlock()
}
