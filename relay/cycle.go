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
		// The cycle ends on the first empty claim.
		n, ok := r.claimAndPublish(ctx, nil, &res)
		if ok && n > 0 {
			res.more = true
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

// claimAndPublish claims one batch (by ids when ids is non-empty) and
// publishes it. It reports the number of rows claimed and whether the cycle
// may go on (no database error, no outage, ctx alive).
func (r *Relay) claimAndPublish(ctx context.Context, ids []string, res *cycleResult) (int, bool) {
	now := r.cfg.Clock()
	leaseUntil := now.Add(r.cfg.LeaseDuration)
	recs, err := r.d.Claim(ctx, r.db, dialects.ClaimRequest{
		Owner:      r.cfg.Owner,
		Limit:      r.cfg.BatchSize,
		Now:        now,
		LeaseUntil: leaseUntil,
		IDs:        ids,
	})
	if err != nil {
		if ctx.Err() == nil {
			res.dbErr = err
		}
		return 0, false
	}
	res.claimed += len(recs)
	if len(recs) == 0 {
		return 0, ctx.Err() == nil
	}
	r.c.claims.Add(1)
	r.publishBatch(ctx, recs, leaseUntil, len(ids) > 0, res)
	return len(recs), res.dbErr == nil && !res.outage && ctx.Err() == nil
}
