package relay

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/relay/internal/marker"
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
		// critical asks the hand-over lane for a critical read (lanes.go):
		// an urgent wake from a Source, or a hand-over that asks for a
		// read. Buffer of one: at most one read in flight and one queued.
		critical chan struct{}
	}
	own   *owner
	marks *marker.Marker
	// fastRetries carries the retry times of the hand-over lane's failures
	// to the read lane, which owns the retry schedule.
	fastRetries *retries.Box
	updates     chan ownUpdate
	loopDone    chan struct{}

	// Read lane state, touched only by the publish loop's goroutine.
	active     []int     // partitions published now, sorted
	readNow    time.Time // the clock of the last read from the start (the database's)
	readTicket uint64    // the mark queue's ticket of the read lane's last batch
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

	// Shared by the read lane (the publish loop) and the hand-over lane.
	mu        sync.Mutex
	token     string        // the session's fencing token
	trouble   time.Duration // current outage/db-error back-off, 0 when healthy
	inOutage  bool
	lastAckAt time.Time // when the broker last acknowledged a message

	// outageSince and outageProbes describe the broker outage in progress
	// (outage.go); dlUnavailable: the dead-letter publisher was unavailable.
	outageSince   time.Time
	outageProbes  int
	dlUnavailable bool
}

func newRun(r *Relay, parts int) *run {
	rn := &run{r: r, updates: make(chan ownUpdate), loopDone: make(chan struct{}), seq: sequencer.New()}
	rn.wakes.urgent = make(chan struct{}, 1)
	rn.wakes.lazy = make(chan struct{}, 1)
	rn.wakes.handoff = make(chan struct{}, 1)
	rn.wakes.critical = make(chan struct{}, 1)
	rn.wakes.scheduled = make(chan struct{}, 1)
	rn.clock.clock = r.cfg.Clock
	rn.fastRetries = retries.NewBox()
	rn.marks = marker.New(rn, marker.Linger)
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
	poll := time.NewTimer(jitter(cfg.PollInterval))
	defer poll.Stop()
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
		if err := rn.clock.sync(ctx, rn.r.d, rn.r.db); err != nil {
			if ctx.Err() == nil {
				cfg.Logger.DebugContext(ctx, "jitoutbox relay: database clock", "owner", cfg.Owner, "err", err)
			}
			return // tried again after the next cycle
		}
		lastSync = time.Now()
	}
	syncClock()
	// lookDue looks up the next due time of scheduled events (rate-limited)
	// and sets the retry timer for the earliest of it and the retries.
	lookDue := func() {
		sched.AddAll(due.run(ctx, rn))
		if next, ok := sched.Next(rn.clock.now()); ok {
			retry.Reset(next)
		}
	}

	reason := reasonStart
	for {
		var res cycleResult
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
		poll.Reset(jitter(cfg.PollInterval))
		if !res.retryAt.IsZero() {
			sched.Add(res.retryAt)
		}
		sched.AddAll(rn.fastRetries.Take())
		if next, ok := sched.Next(rn.clock.now()); ok {
			retry.Reset(next)
		}
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
				if next, ok := sched.Next(rn.clock.now()); ok {
					retry.Reset(next)
				}
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

// readResult is one read's outcome.
type readResult struct {
	dialects.ReadResult
	limit int // the rows asked for
	err   error
}

// startRead reads as req asks on a goroutine: a read from the start, or a
// read ahead that overlaps the database's read with the broker's
// acknowledgements of the batch in flight. The channel receives exactly one
// result.
func (rn *run) startRead(ctx context.Context, req dialects.ReadRequest) <-chan readResult {
	ch := make(chan readResult, 1)
	go func() {
		res, err := rn.r.d.Read(ctx, rn.r.db, req)
		ch <- readResult{res, req.Limit, err}
	}()
	return ch
}

// readAhead starts the read ahead of chain past bound.
func (rn *run) readAhead(ctx context.Context, chain dialects.ReadRequest, bound int64) <-chan readResult {
	chain.After, chain.Limit = bound, rn.r.cfg.BatchSize
	return rn.startRead(ctx, chain)
}

// read reads and publishes the owned partitions until a read comes back
// short. While a full batch is published, the next batch (Seq past it) is
// read ahead; its rows of aggregates held in this chain of reads are
// dropped: aggregates that failed in a batch before (their blocks were
// written after the read) and aggregates whose rows a read skipped for the
// hand-over lane (their earlier rows are not published yet); so are rows
// of partitions given up meanwhile. Rows up to the read from the start's
// horizon need nothing more (dialects.ReadResult.Horizon says why); the
// dialect checks those above it. A read ahead that comes back short is
// followed by a read from the start, which finds a lower Seq that committed
// late. It reports the rows read and whether the cycle may go on.
func (rn *run) read(ctx context.Context, res *cycleResult) (int, bool) {
	total := 0
	var ahead <-chan readResult
	// chain is the read from the start of the current chain of reads: its
	// reads ahead read its partitions only, as of its clock, with its
	// horizon. A partition gained since was not read below the bound, so
	// the horizon says nothing of its earlier rows; a row due or a block
	// expired since was not due or blocked when it read, so its earlier
	// rows may not be known either. The next read from the start covers
	// both.
	var chain dialects.ReadRequest
	held := make(map[string]bool)
	// aheadOff stops reading ahead for the rest of the chain once a read
	// ahead came back less than half full: when the batch in flight holds
	// most of the relay's aggregates (few aggregates, or several relays
	// splitting them), reads ahead find little and only cost the database.
	aheadOff := false
	kept := 0 // rows kept since the read from the start
	for len(rn.active) > 0 {
		var rr readResult
		prefetched := ahead != nil
		if prefetched {
			rr = <-ahead
			ahead = nil
		} else {
			// A read from the start also returns the rows published and
			// still waiting for their marks (kept out by KeepRead): it reads
			// that many more, rather than wait for the marks.
			chain = dialects.ReadRequest{Partitions: rn.active, Now: rn.clock.now(),
				Limit: rn.r.cfg.BatchSize + min(rn.marks.Unmarked(), markAhead*rn.r.cfg.BatchSize)}
			rr = <-rn.startRead(ctx, chain)
			if rr.err == nil {
				rn.readNow = chain.Now
			}
			chain.Horizon = rr.Horizon
			clear(held)
			kept = 0
		}
		if rr.err != nil {
			if ctx.Err() == nil {
				res.dbErr = rr.err
			}
			return total, false
		}
		full := len(rr.Records) >= rr.limit
		if prefetched && 2*len(rr.Records) < rn.r.cfg.BatchSize {
			aheadOff = true
		}
		recs, bound, cut := rn.seq.KeepRead(rr.Records, held, rn.r.cfg.BatchSize, rn.owns)
		kept += len(recs)
		if cut {
			full = true // rows past the batch were left for the next read
		}
		if len(rr.Records) == 0 && !prefetched {
			return total, true
		}
		if len(recs) > 0 {
			rn.r.c.claims.Add(1)
			res.claimed += len(recs)
			total += len(recs)
			if full && !aheadOff {
				ahead = rn.readAhead(ctx, chain, bound)
			}
			// Aggregates held in any batch of this chain of reads ahead
			// stay held until a read from the start: their skipped rows
			// come before the rows read ahead.
			failed := rn.publishBatch(ctx, recs, false, res)
			rn.seq.EndRead()
			for k := range failed {
				held[k] = true
			}
			if res.dbErr != nil || res.outage || ctx.Err() != nil {
				if ahead != nil {
					<-ahead // its goroutine ends with its read
				}
				return total, false
			}
		}
		if rn.applyPending() {
			// Partitions gained mid-chain: this chain's reads did not
			// cover them; the next cycle reads them at once.
			res.more = true
		}
		if !full && !prefetched {
			return total, true
		}
		if ahead == nil && (!full || aheadOff) {
			// A short read ahead, or none: read from the start, unless
			// the chain kept nothing since the last one, which would
			// then find the same rows (and spin while a slow broker holds
			// the hand-over lane's aggregates). Rows left to the
			// hand-over lane wake this lane when the lane is done with
			// them; rows waiting for their marks are read past once
			// marked.
			if kept == 0 {
				if rn.seq.ReadWaiting() || rn.marks.Unmarked() == 0 {
					return total, true
				}
				rn.marks.Idle()
			}
			continue
		}
		if ahead == nil {
			ahead = rn.readAhead(ctx, chain, bound)
		}
	}
	if ahead != nil {
		<-ahead
	}
	return total, true
}

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
	rn.mu.Lock()
	if !res.trouble && (res.published > 0 || !rn.inOutage) {
		rn.trouble = 0
	}
	rn.mu.Unlock()
}
