package relay

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/notify"
)

// ErrRunning is returned by Run when the relay is already running.
var ErrRunning = errors.New("relay: already running")

// Relay publishes committed outbox rows. Create it with New and start it with
// Run. Any number of relays, in any number of processes, may share a table.
type Relay struct {
	db  *sql.DB
	d   dialects.Dialect
	pub Publisher
	cfg Config

	running atomic.Bool
	c       counters
	ts      testSignals

	// Loop state, touched only by Run's goroutine.
	trouble    time.Duration // current outage/db-error back-off, 0 when healthy
	inOutage   bool
	lastAckAt  time.Time // when the broker last acknowledged a message
	dbFailing  bool
	dbErrCount int
	dbLoggedAt time.Time
	leaseSrc   []notify.LeaseSource // sources handing over leased rows
	prefetch   chan claimed         // the next scan batch, being claimed (nil if none)
}

// New returns a relay that claims rows of d's table through db and publishes
// them with pub. It returns an error matching ErrInvalidConfig when an
// argument or Config field is invalid.
func New(db *sql.DB, d dialects.Dialect, pub Publisher, cfg Config) (*Relay, error) {
	switch {
	case db == nil:
		return nil, fmt.Errorf("%w: nil *sql.DB", ErrInvalidConfig)
	case d == nil:
		return nil, fmt.Errorf("%w: nil Dialect; use e.g. sqlite.New()", ErrInvalidConfig)
	case pub == nil:
		return nil, fmt.Errorf("%w: nil Publisher", ErrInvalidConfig)
	}
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return &Relay{db: db, d: d, pub: pub, cfg: cfg}, nil
}

// Owner returns the relay's owner id (Config.Owner or the generated default).
func (r *Relay) Owner() string { return r.cfg.Owner }

// Run publishes until ctx ends, then returns nil. It returns an error at once
// if the relay is already running (ErrRunning) or a Source cannot be listened
// to. On stop, the batch in flight is finished: events the broker confirmed
// are marked, the rest are released so that another relay can claim them at
// once. No goroutine started by Run outlives it.
func (r *Relay) Run(ctx context.Context) error {
	if !r.running.CompareAndSwap(false, true) {
		return ErrRunning
	}
	defer r.running.Store(false)

	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()

	// Wakes from sources that also hand over event ids (an in-process
	// notify.Local) arrive on their own channel: a cycle they cause can end
	// after claiming exactly those ids, without a scan.
	w := wakes{urgent: make(chan struct{}, 1), urgentIDs: make(chan struct{}, 1), lazy: make(chan struct{}, 1)}
	var idSources []notify.IDSource
	for i, s := range r.cfg.Sources {
		ch, err := s.Listen(ctx)
		if err != nil {
			return fmt.Errorf("relay: listen on Sources[%d]: %w", i, err)
		}
		if _, ok := s.(notify.IDSource); ok {
			forward(ctx, &wg, ch, w.urgentIDs)
		} else {
			forward(ctx, &wg, ch, w.urgent)
		}
		if ls, ok := s.(notify.LazySource); ok {
			lch, err := ls.ListenLazy(ctx)
			if err != nil {
				return fmt.Errorf("relay: lazy listen on Sources[%d]: %w", i, err)
			}
			forward(ctx, &wg, lch, w.lazy)
		}
		if ids, ok := s.(notify.IDSource); ok {
			idSources = append(idSources, ids)
		}
	}
	// An in-process signal that hands over rows leased at commit (the
	// just-in-time path without a claim) gets this relay as its taker.
	for _, s := range r.cfg.Sources {
		ls, ok := s.(notify.LeaseSource)
		if !ok {
			continue
		}
		if unregister, ok := ls.ServeLeases(r.cfg.Owner, r.cfg.LeaseDuration); ok {
			r.leaseSrc = append(r.leaseSrc, ls)
			defer r.releaseHandedOver(ctx, unregister)
		}
	}
	r.startPreflight(ctx, &wg)
	if r.cfg.Retention > 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.cleanupLoop(ctx)
		}()
	}
	r.loop(ctx, w, idSources)
	return nil
}

// releaseHandedOver stops a lease hand-over and releases the rows it still
// held, so that any relay can claim them at once instead of after their
// lease.
func (r *Relay) releaseHandedOver(ctx context.Context, unregister func() []dialects.Record) {
	r.releaseUnpublished(ctx, unregister(), "handed-over events")
}

// releaseUnpublished gives back the leases of rows this relay holds but
// never published, so that any relay can claim them at once, on a context
// detached from ctx (a stopping relay leaves nothing to wait for its lease).
// what names the rows in the warning logged when that fails.
func (r *Relay) releaseUnpublished(ctx context.Context, recs []dialects.Record, what string) {
	if len(recs) == 0 {
		return
	}
	seqs := make([]int64, len(recs))
	for i := range recs {
		seqs[i] = recs[i].Seq
	}
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), finishTimeout)
	defer cancel()
	if err := r.d.Release(wctx, r.db, r.cfg.Owner, seqs, time.Time{}); err != nil {
		r.cfg.Logger.WarnContext(ctx, "jitoutbox relay: releasing "+what+" failed; they are claimable when their lease expires",
			"owner", r.cfg.Owner, "events", len(seqs), "err", err)
		return
	}
	r.c.released.Add(uint64(len(seqs)))
}

// forward copies wakes from in to out (buffer of one: wakes coalesce) until
// ctx ends or in is closed.
func forward(ctx context.Context, wg *sync.WaitGroup, in <-chan struct{}, out chan struct{}) {
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-ctx.Done():
				return
			case _, ok := <-in:
				if !ok {
					return
				}
				select {
				case out <- struct{}{}:
				default:
				}
			}
		}
	}()
}

// wakes are the channels the loop waits on.
type wakes struct {
	urgent    chan struct{} // wakes from sources without ids
	urgentIDs chan struct{} // wakes from notify.IDSource sources
	lazy      chan struct{}
}

// loop runs cycles until ctx ends.
func (r *Relay) loop(ctx context.Context, w wakes, idSources []notify.IDSource) {
	poll := time.NewTimer(jitter(r.cfg.PollInterval))
	defer poll.Stop()
	retry := time.NewTimer(time.Hour)
	retry.Stop()
	defer retry.Stop()
	var retries retrySchedule
	lazyTimer := time.NewTimer(time.Hour)
	lazyTimer.Stop()
	defer lazyTimer.Stop()
	lazyPending := false

	reason := reasonStart
	idsOnly := false // the cycle was caused only by an id-carrying wake
	defer r.dropPrefetch(ctx)
	for {
		res := r.cycle(ctx, idSources, idsOnly)
		idsOnly = false
		r.ts.cycleDone(ctx, cycleSignal{Reason: reason, Claimed: res.claimed, Published: res.published, Outage: res.outage, DBError: res.dbErr})
		if ctx.Err() != nil {
			return
		}
		poll.Reset(jitter(r.cfg.PollInterval))
		if !res.retryAt.IsZero() {
			retries.add(res.retryAt)
		}
		if next, ok := retries.next(r.cfg.Clock()); ok {
			retry.Reset(next)
		}
		if res.trouble {
			// Broker outage or database error: back off before the next
			// claim, whatever wakes arrive meanwhile.
			t := time.NewTimer(r.trouble)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
			reason = reasonTrouble
			continue
		}
		if res.more {
			reason = reasonMore
			continue
		}
	wait:
		for {
			select {
			case <-ctx.Done():
				return
			case <-w.urgent:
				reason = reasonWake
				break wait
			case <-w.urgentIDs:
				reason = reasonWake
				idsOnly = true
				break wait
			case <-poll.C:
				reason = reasonPoll
				break wait
			case <-retry.C:
				retries.due(r.cfg.Clock())
				reason = reasonRetry
				break wait
			case <-lazyTimer.C:
				lazyPending = false
				reason = reasonLazy
				break wait
			case <-w.lazy:
				if !lazyPending {
					lazyPending = true
					lazyTimer.Reset(r.cfg.LazyDelay)
				}
			}
		}
	}
}

// maxRetryTimes bounds the distinct retry times a relay remembers.
const maxRetryTimes = 256

// retrySchedule remembers when rows this relay failed become claimable
// again, so that each of those moments gets a cycle, even when a later
// failure is scheduled after an earlier, still pending one. Times are kept
// sorted; beyond maxRetryTimes the second-latest is dropped, so the latest
// time is always kept and nothing waits for the safety-net poll.
type retrySchedule struct {
	times []time.Time
}

func (s *retrySchedule) add(t time.Time) {
	i, found := slices.BinarySearchFunc(s.times, t, func(a, b time.Time) int { return a.Compare(b) })
	if found {
		return
	}
	s.times = slices.Insert(s.times, i, t)
	if n := len(s.times); n > maxRetryTimes {
		s.times = slices.Delete(s.times, n-2, n-1)
	}
}

// due drops the times that have come.
func (s *retrySchedule) due(now time.Time) {
	i := 0
	for i < len(s.times) && !s.times[i].After(now) {
		i++
	}
	s.times = slices.Delete(s.times, 0, i)
}

// next returns how long until the earliest remembered time (0 if it has
// come), and false when nothing is scheduled.
func (s *retrySchedule) next(now time.Time) (time.Duration, bool) {
	if len(s.times) == 0 {
		return 0, false
	}
	return max(s.times[0].Sub(now), 0), true
}
