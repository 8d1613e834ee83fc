package relay

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
)

// finishTimeout bounds the database writes that record a batch's outcome;
// they run on a context detached from Run's, so that a stopping relay still
// marks what the broker confirmed and releases the rest.
const finishTimeout = 10 * time.Second

// maxErrorText bounds the error text stored with a failed row.
const maxErrorText = 1000

// batchOutcome collects what to write after publishing a batch.
type batchOutcome struct {
	published []int64
	failures  []dialects.Failure
	deadMsgs  []Message
	deadErrs  []error
	retried   int
	release   []int64 // claimable at once
	outageRel []int64 // claimable at outageAt
	outageAt  time.Time
}

// aggKey identifies an aggregate.
func aggKey(rec *dialects.Record) string {
	return rec.AggregateType + "\x00" + rec.AggregateID
}

// splitWaves splits records (in Seq order) into waves: wave k holds the k-th
// record of each aggregate, in Seq order.
func splitWaves(recs []dialects.Record) [][]*dialects.Record {
	seen := make(map[string]int, len(recs))
	var waves [][]*dialects.Record
	for i := range recs {
		k := aggKey(&recs[i])
		w := seen[k]
		seen[k] = w + 1
		if w == len(waves) {
			waves = append(waves, nil)
		}
		waves[w] = append(waves[w], &recs[i])
	}
	return waves
}

func toMessage(rec *dialects.Record) Message {
	return Message{
		ID:             rec.ID,
		AggregateType:  rec.AggregateType,
		AggregateID:    rec.AggregateID,
		EventType:      rec.EventType,
		Payload:        rec.Payload,
		ContentType:    rec.ContentType,
		Headers:        rec.Headers,
		IdempotencyKey: rec.IdempotencyKey,
		CreatedAt:      rec.CreatedAt,
		Attempt:        rec.Attempts + 1,
		Critical:       rec.Critical,
	}
}

// isOutage reports whether a wave whose every message failed looks like a
// broker outage rather than trouble with these messages: every error is
// retryable, and either the wave had several messages, the relay is already
// in an outage, or every error is a timeout.
func (r *Relay) isOutage(errs []error) bool {
	timeouts := 0
	for _, err := range errs {
		if err == nil || IsPermanent(err) {
			return false
		}
		if errors.Is(err, context.DeadlineExceeded) {
			timeouts++
		}
	}
	if len(errs) >= 2 || r.inOutage {
		return true
	}
	// A lone message that timed out looks like an outage only if the
	// broker has not acknowledged anything recently: otherwise it is an
	// event the broker never answers (a poison event), whose attempts must
	// count so that it is dead-lettered after MaxAttempts.
	return timeouts == len(errs) && !r.ackedRecently()
}

// ackedRecently reports whether the broker acknowledged a message within the
// last two publish timeouts.
func (r *Relay) ackedRecently() bool {
	return !r.lastAckAt.IsZero() && r.cfg.Clock().Sub(r.lastAckAt) <= 2*r.cfg.PublishTimeout
}

// publishBatch publishes claimed records wave by wave and writes the outcome.
func (r *Relay) publishBatch(ctx context.Context, recs []dialects.Record, leaseUntil time.Time, fast bool, res *cycleResult) {
	start := time.Now()
	hctx := ctx
	if r.cfg.Hooks != nil {
		hctx = r.cfg.Hooks.BatchStart(ctx, BatchStartInfo{Owner: r.cfg.Owner, Size: len(recs), FastPath: fast})
	}
	var out batchOutcome
	blocked := make(map[string]bool) // aggregate -> true when held behind a dead event
	for _, wave := range splitWaves(recs) {
		msgs := make([]Message, 0, len(wave))
		live := wave[:0:0]
		for _, rec := range wave {
			if dead, ok := blocked[aggKey(rec)]; ok {
				out.release = append(out.release, rec.Seq)
				if dead {
					res.more = true
				}
				continue
			}
			live = append(live, rec)
			msgs = append(msgs, toMessage(rec))
		}
		if len(msgs) == 0 {
			continue
		}
		// Stop publishing (and release) after an outage, on shutdown, or when
		// the lease could expire during the next Publish.
		if len(out.outageRel) > 0 {
			for _, rec := range live {
				out.outageRel = append(out.outageRel, rec.Seq)
			}
			continue
		}
		if ctx.Err() != nil || r.cfg.Clock().Add(r.cfg.PublishTimeout).After(leaseUntil) {
			res.more = true // lease nearly spent: publish the rest in a new batch
			for _, rec := range live {
				out.release = append(out.release, rec.Seq)
			}
			continue
		}

		errs := make([]error, len(msgs))
		pctx, cancel := context.WithTimeout(hctx, r.cfg.PublishTimeout)
		r.pub.Publish(pctx, msgs, errs)
		cancel()
		ackAt := r.cfg.Clock()
		stopping := ctx.Err() != nil

		ok := 0
		for _, err := range errs {
			if err == nil {
				ok++
			}
		}
		if ok == 0 && !stopping && r.isOutage(errs) {
			if !r.inOutage {
				r.cfg.Logger.WarnContext(ctx, "jitoutbox relay: broker outage; releasing batch and backing off",
					"owner", r.cfg.Owner, "err", errs[0])
				r.inOutage = true
			}
			r.trouble = nextTroubleDelay(r.trouble, r.cfg.PollInterval)
			out.outageAt = ackAt.Add(r.trouble)
			res.outage = true
			res.retryNoLaterThan(out.outageAt)
			for _, rec := range live {
				out.outageRel = append(out.outageRel, rec.Seq)
			}
			continue
		}
		if ok > 0 {
			r.lastAckAt = ackAt
		}
		if ok > 0 && r.inOutage {
			r.inOutage = false
			r.cfg.Logger.InfoContext(ctx, "jitoutbox relay: broker recovered", "owner", r.cfg.Owner)
		}
		for i, rec := range live {
			err := errs[i]
			if err == nil {
				out.published = append(out.published, rec.Seq)
				lat := ackAt.Sub(rec.CreatedAt)
				if rec.Critical {
					r.c.critical.Record(lat)
				} else {
					r.c.ordinary.Record(lat)
				}
				if h, ok := r.cfg.Hooks.(PublishedHook); ok {
					h.Published(hctx, msgs[i], lat)
				}
				continue
			}
			if stopping {
				blocked[aggKey(rec)] = false
				out.release = append(out.release, rec.Seq)
				continue
			}
			attempt := rec.Attempts + 1
			f := dialects.Failure{Seq: rec.Seq, Error: errorText(err)}
			if IsPermanent(err) || attempt >= r.cfg.MaxAttempts {
				f.Dead = true
				f.NextAttemptAt = ackAt
				dm := msgs[i]
				dm.Dead = &DeadInfo{Error: f.Error, Attempts: attempt, At: ackAt}
				out.deadMsgs = append(out.deadMsgs, dm)
				out.deadErrs = append(out.deadErrs, err)
				blocked[aggKey(rec)] = true
			} else {
				f.NextAttemptAt = ackAt.Add(r.cfg.Backoff(attempt))
				res.retryNoLaterThan(f.NextAttemptAt)
				out.retried++
				blocked[aggKey(rec)] = false
			}
			out.failures = append(out.failures, f)
		}
	}
	res.published += len(out.published)
	err := r.writeOutcome(ctx, hctx, &out)
	if err != nil && res.dbErr == nil {
		res.dbErr = err
	}
	if r.cfg.Hooks != nil {
		r.cfg.Hooks.BatchEnd(hctx, BatchEndInfo{
			Owner:     r.cfg.Owner,
			Size:      len(recs),
			Published: len(out.published),
			Retried:   out.retried,
			Dead:      len(out.deadMsgs),
			Released:  len(out.release) + len(out.outageRel),
			Outage:    len(out.outageRel) > 0,
			Err:       err,
			Duration:  time.Since(start),
		})
	}
}

func errorText(err error) string {
	s := err.Error()
	if len(s) > maxErrorText {
		s = s[:maxErrorText]
	}
	return s
}

// writeOutcome marks successes (one statement), records failures, publishes
// dead events to the dead-letter publisher and releases the rest. It runs on
// a context detached from ctx's cancellation, bounded by finishTimeout.
func (r *Relay) writeOutcome(ctx, hctx context.Context, out *batchOutcome) error {
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), finishTimeout)
	defer cancel()
	var firstErr error
	keep := func(op string, err error) {
		if err != nil && firstErr == nil {
			firstErr = fmt.Errorf("relay: %s: %w", op, err)
		}
	}
	if len(out.published) > 0 {
		var n int64
		var err error
		if r.cfg.DeleteOnPublish {
			n, err = r.d.Delete(wctx, r.db, r.cfg.Owner, out.published)
			keep("delete published", err)
		} else {
			n, err = r.d.MarkPublished(wctx, r.db, r.cfg.Owner, out.published, r.cfg.Clock())
			keep("mark published", err)
		}
		if err == nil && n != int64(len(out.published)) {
			r.cfg.Logger.WarnContext(ctx, "jitoutbox relay: lease lost before marking; those events will be published again",
				"owner", r.cfg.Owner, "published", len(out.published), "marked", n)
		}
		r.c.published.Add(uint64(len(out.published)))
	}
	if len(out.deadMsgs) > 0 && r.cfg.DeadLetter != nil {
		errs := make([]error, len(out.deadMsgs))
		pctx, pcancel := context.WithTimeout(context.WithoutCancel(hctx), r.cfg.PublishTimeout)
		r.cfg.DeadLetter.Publish(pctx, out.deadMsgs, errs)
		pcancel()
		for i, err := range errs {
			if err != nil {
				r.cfg.Logger.WarnContext(ctx, "jitoutbox relay: dead-letter publish failed",
					"owner", r.cfg.Owner, "event_id", out.deadMsgs[i].ID, "err", err)
			}
		}
	}
	if len(out.failures) > 0 {
		err := r.d.Fail(wctx, r.db, r.cfg.Owner, out.failures)
		keep("record failures", err)
		if err == nil {
			r.c.retried.Add(uint64(out.retried))
			r.c.dead.Add(uint64(len(out.deadMsgs)))
			for i, m := range out.deadMsgs {
				r.cfg.Logger.WarnContext(ctx, "jitoutbox relay: event dead-lettered",
					"owner", r.cfg.Owner, "event_id", m.ID, "aggregate_type", m.AggregateType,
					"aggregate_id", m.AggregateID, "attempt", m.Attempt, "err", out.deadErrs[i])
				if h, ok := r.cfg.Hooks.(DeadLetterHook); ok {
					h.DeadLettered(hctx, m, out.deadErrs[i])
				}
			}
		}
	}
	if len(out.release) > 0 {
		keep("release", r.d.Release(wctx, r.db, r.cfg.Owner, out.release, time.Time{}))
		r.c.released.Add(uint64(len(out.release)))
	}
	if len(out.outageRel) > 0 {
		keep("release (outage)", r.d.Release(wctx, r.db, r.cfg.Owner, out.outageRel, out.outageAt))
		r.c.released.Add(uint64(len(out.outageRel)))
	}
	return firstErr
}
