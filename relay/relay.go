package relay

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/notify"
	"github.com/jitoutbox/jitoutbox/relay/internal/priority"
)

// ErrRunning is returned by Run when the relay is already running.
var ErrRunning = errors.New("relay: already running")

// Relay publishes committed outbox rows. Create it with New and start it with
// Run. Any number of relays, in any number of processes, may share a table:
// each owns a share of the table's partitions and publishes only those.
type Relay struct {
	db  *sql.DB
	d   dialects.Dialect
	pub Publisher
	cfg Config

	running atomic.Bool
	c       counters
	ts      testSignals

	// hand is the in-process hand-over from txoutbox: wired once
	// (txoutbox.WithRelay), it outlives runs; each Run attaches to it.
	hand handoff

	// fleet links a relay made by a Fleet to it (fleet.go); nil for a
	// relay made by New.
	fleet *tableLink
	// gate is shared by every lane publishing through pub: the relay's
	// own, or its fleet's for that publisher; each run's broker stage
	// (relay/internal/broker) chunks its bulk waves by it.
	gate *priority.Gate
}

// New returns a relay that reads rows of d's table through db and publishes
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
	return &Relay{db: db, d: d, pub: pub, cfg: cfg, gate: &priority.Gate{}}, nil
}

// Owner returns the relay's name (Config.Owner or the generated default).
func (r *Relay) Owner() string { return r.cfg.Owner }

// DB returns the database the relay reads; txoutbox.WithRelay checks that
// the outbox writes to the same one.
func (r *Relay) DB() *sql.DB { return r.db }

// Dialect returns the relay's dialect.
func (r *Relay) Dialect() dialects.Dialect { return r.d }

// Run publishes until ctx ends, then returns nil. It returns an error at once
// if the relay is already running (ErrRunning), the table's schema is not at
// this version or its partition count differs from the dialect's
// (dialects.ErrSchemaVersion, dialects.ErrPartitionMismatch), or a Source
// cannot be listened to. A database that cannot be reached at start (down,
// restarting) is not an error: Run logs it and retries with back-off. On
// stop, the batch in flight is finished: its Publish call runs to its end
// (bounded by PublishTimeout, so a stop can take that long), events the
// broker confirmed are marked, and the relay's partitions are released, so
// that other relays take them at once and send none of them again. No
// goroutine started by Run outlives it.
func (r *Relay) Run(ctx context.Context) error {
	if !r.running.CompareAndSwap(false, true) {
		return ErrRunning
	}
	defer r.running.Store(false)

	parts, err := r.partitions(ctx)
	if err != nil {
		return err
	}
	if ctx.Err() != nil {
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()

	rn := newRun(r, parts)
	for i, s := range r.cfg.Sources {
		// An urgent wake goes to the hand-over lane: its critical read
		// publishes the time-critical rows of the woken partitions it
		// owns first, then it wakes the read lane (lanes.go).
		if err := s.Listen(ctx, rn.wakes.critical); err != nil {
			return fmt.Errorf("relay: listen on Sources[%d]: %w", i, err)
		}
		if ls, ok := s.(notify.LazySource); ok {
			lch, err := ls.ListenLazy(ctx)
			if err != nil {
				return fmt.Errorf("relay: lazy listen on Sources[%d]: %w", i, err)
			}
			forward(ctx, &wg, lch, func() { signal(rn.wakes.lazy) })
		}
	}
	if r.fleet != nil {
		// The fleet found due rows in the table, or was woken from
		// another process: as for a Source, the critical read publishes
		// the time-critical rows first, then wakes the read lane.
		forward(ctx, &wg, r.fleet.wake, func() { rn.wakes.critical.Wake(nil) })
	}
	r.hand.attach(rn.wakes.handoff, rn.wakes.lazy, rn.wakes.scheduled, rn.seq)
	defer r.hand.detach()

	wg.Add(1)
	go func() {
		defer wg.Done()
		rn.own.loop(ctx)
	}()
	if r.fleet == nil {
		r.startPreflight(ctx, &wg) // a fleet runs each publisher's once
	}
	// Cleanup runs whatever Retention says: ended holds of scheduled
	// events are released even when published rows are kept for good.
	wg.Add(1)
	go func() {
		defer wg.Done()
		r.cleanupLoop(ctx)
	}()
	fastDone := make(chan struct{})
	go func() {
		defer close(fastDone)
		rn.fastLoop(ctx)
	}()
	markStop, markDone := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(markDone)
		rn.marks.Run(markStop)
	}()
	rn.loop(ctx)
	<-fastDone
	close(markStop) // both lanes are done: what they published is marked
	<-markDone
	close(rn.loopDone) // the owner may end the session
	return nil
}

// partitions reads the table's partition count. A schema that is not at
// this version, or a partition count that differs from the dialect's, is
// an error returned at once; any other failure (the database is down or
// restarting) is logged and retried with back-off until it succeeds or ctx
// ends (then it returns 0 and nil).
func (r *Relay) partitions(ctx context.Context) (int, error) {
	var wait time.Duration
	for {
		parts, err := r.d.Partitions(ctx, r.db)
		switch {
		case err == nil:
			return parts, nil
		case ctx.Err() != nil:
			return 0, nil
		case errors.Is(err, dialects.ErrSchemaVersion), errors.Is(err, dialects.ErrPartitionMismatch):
			return 0, fmt.Errorf("relay: %w", err)
		}
		wait = nextTroubleDelay(wait, r.cfg.RebalanceInterval)
		r.cfg.Logger.ErrorContext(ctx, "jitoutbox relay: cannot read the outbox table's partitions; retrying",
			"owner", r.cfg.Owner, "err", err, "retry_in", wait)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return 0, nil
		case <-t.C:
		}
	}
}

// forward calls wake for each wake from in until ctx ends or in is
// closed.
func forward(ctx context.Context, wg *sync.WaitGroup, in <-chan struct{}, wake func()) {
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
				wake()
			}
		}
	}()
}
