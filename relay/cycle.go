package relay

import (
	"context"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/notify"
)

// retryMargin is added to retry timers so that a row whose NextAttemptAt
// has just come due is claimable even on databases with coarse timestamps.
const retryMargin = 5 * time.Millisecond

// dbLogEvery rate-limits the logging of a persisting database error.
const dbLogEvery = time.Minute

// cycleResult tells the loop what to do after a cycle.
type cycleResult struct {
	claimed   int
	published int
	// outage: a wave failed entirely with retryable errors; dbErr: a
	// database call failed. Either sets trouble: back off before the next
	// claim.
	outage  bool
	dbErr   error
	trouble bool
	// more asks for another cycle at once (a full batch, or rows released
	// behind a dead event that are claimable now).
	more bool
	// retryAt is when rows this cycle scheduled become claimable (zero if
	// none).
	retryAt time.Time
}

func (res *cycleResult) retryNoLaterThan(t time.Time) {
	t = t.Add(retryMargin)
	if res.retryAt.IsZero() || t.Before(res.retryAt) {
		res.retryAt = t
	}
}

// cycle claims and publishes: first the rows leased at commit and handed
// over by LeaseSources (published without a claim), then the fast path
// (ids of just-committed time-critical events from IDSources), then a scan
// claim. When the cycle was caused only by an id-carrying wake (idsOnly) and
// it published every handed-over row and claimed every id it took, the scan
// is skipped: those commits are delivered, and ordinary events wait for
// their lazy wake or the poll as they would anyway. That saves a claim
// statement on the time-critical path.
func (r *Relay) cycle(ctx context.Context, idSources []notify.IDSource, idsOnly bool) cycleResult {
	r.c.cycles.Add(1)
	var res cycleResult
	ok := true
	took, allTaken := false, true // fast-path work found; all of it done
	for _, s := range r.leaseSrc {
		for ok {
			recs, until := s.TakeLeased(r.cfg.BatchSize)
			if len(recs) == 0 {
				break
			}
			took = true
			res.claimed += len(recs)
			r.publishBatch(ctx, recs, until, true, &res)
			ok = res.dbErr == nil && !res.outage && ctx.Err() == nil
		}
	}
	if ok && len(idSources) > 0 {
		var ids []string
		for _, s := range idSources {
			if n := r.cfg.BatchSize - len(ids); n > 0 {
				ids = append(ids, s.TakeIDs(n)...)
			}
		}
		if len(ids) > 0 {
			var n int
			took = true
			n, ok = r.claimAndPublish(ctx, ids, &res)
			allTaken = n == len(ids) && n < r.cfg.BatchSize
		}
	}
	scan := !(idsOnly && ok && took && allTaken)
	if ok && scan {
		// Any rows claimed: claim again at once. A short batch may be short
		// because other relays' leases held rows back; those rows become
		// claimable once this relay or they mark, and a relay that went to
		// sleep on a short batch would leave them for the safety-net poll.
		// The cycle ends on the first empty claim. A claim made ahead
		// (Config.Prefetch) that found nothing may have found nothing
		// because the batch then in flight held every waiting aggregate
		// back: claim again now that it is marked.
		c, prefetched := r.takePrefetch()
		if !prefetched || (c.err == nil && len(c.recs) == 0) {
			c = r.claim(ctx, nil, 0)
		}
		n, ok := r.publishClaimed(ctx, c, false, &res)
		if ok && n > 0 {
			res.more = true
		}
	}
	if r.prefetch != nil {
		if res.dbErr != nil || res.outage || ctx.Err() != nil {
			r.dropPrefetch(ctx)
		} else {
			res.more = true // publish the claimed batch next cycle
		}
	}
	r.afterCycle(ctx, &res)
	return res
}

// afterCycle updates the trouble state and logs transitions.
func (r *Relay) afterCycle(ctx context.Context, res *cycleResult) {
	if ctx.Err() != nil {
		return
	}
	log := r.cfg.Logger
	now := r.cfg.Clock()
	if res.dbErr != nil {
		r.dbErrCount++
		if !r.dbFailing || now.Sub(r.dbLoggedAt) >= dbLogEvery {
			log.ErrorContext(ctx, "jitoutbox relay: database error; backing off",
				"owner", r.cfg.Owner, "err", res.dbErr, "errors_since_last_log", r.dbErrCount)
			r.dbLoggedAt = now
			r.dbErrCount = 0
		}
		r.dbFailing = true
		if !res.outage {
			r.trouble = nextTroubleDelay(r.trouble, r.cfg.PollInterval)
		}
	} else if r.dbFailing {
		r.dbFailing = false
		r.dbErrCount = 0
		log.InfoContext(ctx, "jitoutbox relay: database recovered", "owner", r.cfg.Owner)
	}
	res.trouble = res.outage || res.dbErr != nil
	if !res.trouble && (res.published > 0 || !r.inOutage) {
		r.trouble = 0
	}
}

// claimed is the outcome of one claim.
type claimed struct {
	recs       []dialects.Record
	leaseUntil time.Time
	err        error
}

// prefetchWindow is the window of a speculative claim, in batches: it
// examines at most this many batches' worth of due, unleased rows.
const prefetchWindow = 2

// claim claims one batch (by ids when ids is non-empty; window > 0 for a
// speculative claim, see dialects.ClaimRequest.Window).
func (r *Relay) claim(ctx context.Context, ids []string, window int) claimed {
	now := r.cfg.Clock()
	c := claimed{leaseUntil: now.Add(r.cfg.LeaseDuration)}
	c.recs, c.err = r.d.Claim(ctx, r.db, dialects.ClaimRequest{
		Owner:      r.cfg.Owner,
		Limit:      r.cfg.BatchSize,
		Now:        now,
		LeaseUntil: c.leaseUntil,
		IDs:        ids,
		Window:     window,
	})
	if c.err == nil && len(c.recs) > 0 {
		r.c.claims.Add(1)
	}
	return c
}

// claimAndPublish claims one batch (by ids when ids is non-empty) and
// publishes it. It reports the number of rows claimed and whether the cycle
// may go on (no database error, no outage, ctx alive).
func (r *Relay) claimAndPublish(ctx context.Context, ids []string, res *cycleResult) (int, bool) {
	return r.publishClaimed(ctx, r.claim(ctx, ids, 0), len(ids) > 0, res)
}

// publishClaimed publishes a claimed batch and reports as claimAndPublish.
// With Config.Prefetch, a full scan batch (more rows are likely waiting)
// starts the claim of the next batch before publishing (see startPrefetch).
func (r *Relay) publishClaimed(ctx context.Context, c claimed, fast bool, res *cycleResult) (int, bool) {
	if c.err != nil {
		if ctx.Err() == nil {
			res.dbErr = c.err
		}
		return 0, false
	}
	res.claimed += len(c.recs)
	if len(c.recs) == 0 {
		return 0, ctx.Err() == nil
	}
	if !fast && len(c.recs) >= r.cfg.BatchSize && r.cfg.Prefetch {
		r.startPrefetch(ctx)
	}
	r.publishBatch(ctx, c.recs, c.leaseUntil, fast, res)
	return len(c.recs), res.dbErr == nil && !res.outage && ctx.Err() == nil
}

// startPrefetch claims the next scan batch on a goroutine while the current
// batch is published, so that the database's claim and the broker's
// acknowledgements overlap instead of taking turns. Order is kept by the
// claim itself: it holds back every row whose aggregate has an earlier row
// still leased, which includes the batch being published. The result is
// taken by the next cycle (takePrefetch) or, when the relay stops or backs
// off, released (dropPrefetch); the goroutine ends with its claim.
func (r *Relay) startPrefetch(ctx context.Context) {
	ch := make(chan claimed, 1)
	r.prefetch = ch
	go func() { ch <- r.claim(ctx, nil, prefetchWindow*r.cfg.BatchSize) }()
}

// takePrefetch waits for the prefetched claim, if one was started.
func (r *Relay) takePrefetch() (claimed, bool) {
	if r.prefetch == nil {
		return claimed{}, false
	}
	c := <-r.prefetch
	r.prefetch = nil
	return c, true
}

// dropPrefetch waits for the prefetched claim, if any, and releases its rows
// at once (they were never published).
func (r *Relay) dropPrefetch(ctx context.Context) {
	if c, ok := r.takePrefetch(); ok && c.err == nil {
		r.releaseUnpublished(ctx, c.recs, "a batch claimed ahead")
	}
}
