package relay

import (
	"context"
	"time"
)

// cleanupLockName is the TryLock name that elects the cleaning relay.
const cleanupLockName = "cleanup"

// cleanupLoop runs cleanup at start and then every CleanupInterval (±20%)
// until ctx ends.
//
// A fleet table (fleet.go) skips a turn when it published and
// dead-lettered nothing since its last cleanup, until idleCleanupEvery
// has passed: a fleet's idle tables cost no statement, and published rows
// of an idle table are deleted at most that long after Retention.
func (r *Relay) cleanupLoop(ctx context.Context) {
	t := time.NewTimer(0)
	defer t.Stop()
	var lastAt time.Time
	lastDone := ^uint64(0)
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		done := r.c.published.Load() + r.c.dead.Load()
		if r.fleet != nil && done == lastDone && time.Since(lastAt) < r.idleCleanupEvery() {
			t.Reset(jitter(r.cfg.CleanupInterval))
			continue
		}
		lastAt, lastDone = time.Now(), done
		if _, err := r.cleanup(ctx); err != nil && ctx.Err() == nil {
			r.c.cleanupFailures.Add(1)
			r.cfg.Logger.WarnContext(ctx, "jitoutbox relay: cleanup failed", "owner", r.cfg.Owner, "err", err)
		}
		t.Reset(jitter(r.cfg.CleanupInterval))
	}
}

// idleCleanupEvery is how often a fleet table with nothing published since
// its last cleanup is cleaned anyway: a quarter of Retention (published rows
// are deleted at most that late), never more often than CleanupInterval.
// With a negative Retention only holds are released, and a hold ends with
// a publish: an idle table has none to release.
func (r *Relay) idleCleanupEvery() time.Duration {
	if r.cfg.Retention < 0 {
		return time.Duration(1<<63 - 1)
	}
	return max(r.cfg.Retention/4, r.cfg.CleanupInterval)
}

// cleanup deletes published rows older than Retention (none with a
// negative Retention) and releases the ended holds of drained aggregates,
// in batches of CleanupBatch, if this relay holds the cleanup lock. It
// returns the number of published rows deleted.
func (r *Relay) cleanup(ctx context.Context) (int64, error) {
	now := r.cfg.Clock()
	held, err := r.d.TryLock(ctx, r.db, cleanupLockName, r.cfg.Owner, now, now.Add(2*r.cfg.CleanupInterval))
	if err != nil || !held {
		return 0, err
	}
	before := now.Add(-r.cfg.Retention)
	var total int64
	for r.cfg.Retention > 0 && ctx.Err() == nil {
		n, err := r.d.Cleanup(ctx, r.db, before, r.cfg.CleanupBatch)
		total += n
		if err != nil {
			return total, err
		}
		if n < int64(r.cfg.CleanupBatch) {
			break
		}
	}
	// Holds of scheduled events that ended on aggregates with nothing
	// pending keep nothing in order any more (Dialect.ReleaseHolds).
	for ctx.Err() == nil {
		n, err := r.d.ReleaseHolds(ctx, r.db, now, r.cfg.CleanupBatch)
		if err != nil {
			return total, err
		}
		if n < int64(r.cfg.CleanupBatch) {
			break
		}
	}
	if ctx.Err() == nil {
		r.c.lastCleanup.Store(r.cfg.Clock().UnixNano())
	}
	if total > 0 {
		r.cfg.Logger.DebugContext(ctx, "jitoutbox relay: cleaned up published rows", "owner", r.cfg.Owner, "deleted", total)
	}
	return total, nil
}
