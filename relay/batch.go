package relay

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/relay/internal/marker"
	"github.com/jitoutbox/jitoutbox/relay/internal/sequencer"
)

// finishTimeout bounds the database writes that record a batch's outcome;
// they run on a context detached from Run's, so that a stopping relay still
// marks what the broker confirmed and releases the rest.
const finishTimeout = 10 * time.Second

// maxErrorText bounds the error text stored with a failed row.
const maxErrorText = 1000

// batchOutcome collects what to write after publishing a batch. Rows not
// published and not failed (behind a failure of their aggregate, or left
// by an outage or a stop) need no write: they stay pending in a partition
// the relay owns, and the next read returns them.
type batchOutcome struct {
	published []int64
	unblock   []int64 // published rows that had failed before: their retry blocks go
	failures  []dialects.Failure
	deadMsgs  []Message
	deadErrs  []error
	retried   int
	skipped   int
	outage    bool
}

// splitWaves splits records (in Seq order) into waves: wave k holds the k-th
// record of each aggregate, in Seq order.
func splitWaves(recs []dialects.Record) [][]*dialects.Record {
	seen := make(map[string]int, len(recs))
	var waves [][]*dialects.Record
	for i := range recs {
		k := sequencer.Key(&recs[i])
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
		Seq:            rec.Seq,
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

// markAhead is how many batches' published rows may wait for their mark
// (marks.go) before a lane waits for the mark goroutine.
const markAhead = 2

// publishBatch publishes records (in Seq order) wave by wave and records
// the outcome: wave k holds the k-th record of each aggregate, so the
// publisher never gets two events of one aggregate at once, and a failure
// holds back the later records of its aggregate. Failures are written
// before publishBatch returns (a hand-over (fast) batch's aggregates stay
// in flight for the read lane until then); published rows are remembered
// at once and queued for their mark (marks.go), so that the lane publishes
// its next batch while the mark is written.
//
// It returns the aggregates held behind a failure in this batch.
func (rn *run) publishBatch(ctx context.Context, recs []dialects.Record, fast bool, res *cycleResult) map[string]bool {
	r := rn.r
	start := time.Now()
	rn.lastBatch.Store(start.UnixNano())
	hctx := ctx
	if r.cfg.Hooks != nil {
		hctx = r.cfg.Hooks.BatchStart(ctx, BatchStartInfo{Owner: r.cfg.Owner, Size: len(recs), FastPath: fast})
	}
	out, held := rn.publishWaves(ctx, hctx, recs, fast, res)
	res.published += len(out.published)

	rn.mu.Lock()
	token := rn.token
	rn.mu.Unlock()
	rn.seq.Published(out.published)
	failErr := rn.writeFailures(ctx, hctx, token, out)
	if out.outage {
		res.outage = true // the dead-letter publisher may have been unavailable
	}
	r.c.released.Add(uint64(out.skipped))
	if fast {
		rn.endHandOver(recs)
	}
	if failErr != nil && res.dbErr == nil {
		res.dbErr = failErr
	}
	if len(out.published) == 0 {
		rn.batchEnd(hctx, start, len(recs), out, failErr)
		return held
	}
	limit := markAhead * r.cfg.BatchSize
	if fast {
		// The hand-over lane may run one batch past the read lane's
		// bound: it does not wait behind the marks of a backlog's batches
		// to go on to the next time-critical row.
		limit += r.cfg.BatchSize
	}
	size := len(recs)
	ticket := rn.marks.Push(&marker.Job{Token: token, Seqs: out.published, Unblock: out.unblock, Ctx: hctx,
		Ended: func(err error) { rn.batchEnd(hctx, start, size, out, errors.Join(failErr, err)) }}, limit)
	if !fast {
		rn.readTicket = ticket
	}
	return held
}

// batchEnd calls the BatchEnd hook of a batch whose outcome is written.
func (rn *run) batchEnd(hctx context.Context, start time.Time, size int, out *batchOutcome, err error) {
	r := rn.r
	if r.cfg.Hooks == nil {
		return
	}
	r.cfg.Hooks.BatchEnd(hctx, BatchEndInfo{
		Owner:     r.cfg.Owner,
		Size:      size,
		Published: len(out.published),
		Retried:   out.retried,
		Dead:      len(out.deadMsgs),
		Released:  out.skipped,
		Outage:    out.outage,
		Err:       err,
		Duration:  time.Since(start),
	})
}

// publishWaves publishes records wave by wave (see publishBatch) and
// returns what to write, and the aggregates held behind a failure. A
// hand-over (fast) batch is time-critical: the broker stage publishes its
// waves whole and the other lanes sharing the publisher put smaller chunks
// of theirs in flight while such publishes are recent
// (relay/internal/broker, relay/internal/priority).
func (rn *run) publishWaves(ctx, hctx context.Context, recs []dialects.Record, fast bool, res *cycleResult) (*batchOutcome, map[string]bool) {
	r := rn.r
	out := &batchOutcome{}
	held := make(map[string]bool) // aggregates behind a failure in this batch
	for _, wave := range splitWaves(recs) {
		msgs := make([]Message, 0, len(wave))
		live := wave[:0:0]
		for _, rec := range wave {
			if held[sequencer.Key(rec)] {
				out.skipped++
				res.more = true // rows of other aggregates may wait behind these
				continue
			}
			if rec.Bad != nil {
				rn.deadBadRow(rec, out, held, res)
				continue
			}
			live = append(live, rec)
			msgs = append(msgs, toMessage(rec))
		}
		if len(msgs) == 0 {
			continue
		}
		// Stop publishing after an outage, on shutdown, or when ownership
		// could expire during the next Publish (lease dialects): the rows
		// stay pending.
		if out.outage || ctx.Err() != nil || rn.leaseEnding() {
			out.skipped += len(live)
			continue
		}

		// The Publish is not cut short when Run's ctx ends: the broker may
		// already hold the messages, and a relay that stops cleanly must
		// mark what it sent, or the partitions' next owner sends it again.
		// A stop waits for it, bounded by PublishTimeout.
		errs := make([]error, len(msgs))
		pctx, cancel := context.WithTimeout(context.WithoutCancel(hctx), r.cfg.PublishTimeout)
		ans := rn.broker.Wave(ctx, pctx, msgs, errs, fast)
		cancel()
		ackAt, stopping := ans.AckAt, ans.Stopping
		dueAt := rn.clock.now() // retry times are the database's (schedule.go)
		if ans.Outage {
			rn.backOff() // outage.go
			out.outage = true
			res.outage = true
			out.skipped += len(live)
			continue
		}
		for i, rec := range live {
			err := errs[i]
			if err == nil {
				out.published = append(out.published, rec.Seq)
				if rec.Attempts > 0 {
					out.unblock = append(out.unblock, rec.Seq)
				}
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
			held[sequencer.Key(rec)] = true
			if stopping {
				out.skipped++
				continue
			}
			if IsUnavailable(err) && !IsPermanent(err) {
				// The broker could not take this message while it took
				// others (a stream without a leader): it stays pending,
				// no attempt spent, and is tried again soon.
				out.skipped++
				res.unavailable = true
				res.retryNoLaterThan(dueAt.Add(rn.outageLimit()))
				continue
			}
			attempt := rec.Attempts + 1
			f := dialects.Failure{Seq: rec.Seq, Partition: rec.Partition, AggregateType: rec.AggregateType,
				AggregateID: rec.AggregateID, Error: errorText(err), Block: true}
			if IsPermanent(err) || attempt >= r.cfg.MaxAttempts {
				f.Dead = true
				f.Block = !r.cfg.ReleaseOnDead
				f.NextAttemptAt = dueAt
				dm := msgs[i]
				dm.Dead = &DeadInfo{Error: f.Error, Attempts: attempt, At: ackAt}
				out.deadMsgs = append(out.deadMsgs, dm)
				out.deadErrs = append(out.deadErrs, err)
				res.more = true // the aggregate's later rows: blocked, or released
			} else {
				f.NextAttemptAt = dueAt.Add(r.cfg.Backoff(attempt))
				res.retryNoLaterThan(f.NextAttemptAt)
				out.retried++
			}
			out.failures = append(out.failures, f)
		}
	}
	return out, held
}

// deadBadRow dead-letters a row that the read could not decode
// (dialects.RowError): it is never published and never retried (no attempt
// could decode it), and its aggregate is held, as behind any dead row, so
// that its later rows wait (or flow, with ReleaseOnDead). It is reached
// only at its wave, once the earlier rows of its aggregate in the batch
// were published: a failed earlier row holds the aggregate first, and the
// bad row then stays pending behind it.
func (rn *run) deadBadRow(rec *dialects.Record, out *batchOutcome, held map[string]bool, res *cycleResult) {
	r := rn.r
	now := rn.clock.now()
	held[sequencer.Key(rec)] = true
	f := dialects.Failure{Seq: rec.Seq, Partition: rec.Partition, AggregateType: rec.AggregateType,
		AggregateID: rec.AggregateID, Error: errorText(rec.Bad), NextAttemptAt: now, Dead: true, Block: !r.cfg.ReleaseOnDead}
	dm := toMessage(rec)
	dm.Dead = &DeadInfo{Error: f.Error, Attempts: dm.Attempt, At: now}
	out.failures = append(out.failures, f)
	out.deadMsgs = append(out.deadMsgs, dm)
	out.deadErrs = append(out.deadErrs, rec.Bad)
	res.more = true // the aggregate's later rows: blocked, or released
}

// leaseEnding reports whether ownership (lease dialects) could end before
// a Publish started now times out.
func (rn *run) leaseEnding() bool {
	until := rn.validUntil.Load()
	return until != 0 && rn.r.cfg.Clock().Add(rn.r.cfg.PublishTimeout).UnixNano() > until
}

func errorText(err error) string {
	s := err.Error()
	if len(s) > maxErrorText {
		s = s[:maxErrorText]
	}
	return s
}

// writeFailures publishes dead events to the dead-letter publisher and
// records failures (one statement, fenced by the session token), on a
// context detached from ctx's cancellation like WriteMarks.
func (rn *run) writeFailures(ctx, hctx context.Context, token string, out *batchOutcome) error {
	r := rn.r
	if len(out.deadMsgs) > 0 && r.cfg.DeadLetter != nil {
		rn.publishDead(ctx, hctx, out)
	}
	if len(out.failures) == 0 {
		return nil
	}
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), finishTimeout)
	defer cancel()
	if err := r.d.Fail(wctx, r.db, token, out.failures); err != nil {
		return fmt.Errorf("relay: record failures: %w", err)
	}
	r.c.retried.Add(uint64(out.retried))
	r.c.dead.Add(uint64(len(out.deadMsgs)))
	for i, m := range out.deadMsgs {
		r.cfg.Logger.WarnContext(ctx, "jitoutbox relay: event dead-lettered",
			"owner", r.cfg.Owner, "event_id", m.ID, "aggregate_type", m.AggregateType,
			"aggregate_id", m.AggregateID, "attempt", m.Attempt, "err", out.deadErrs[i],
			"aggregate_blocked", !r.cfg.ReleaseOnDead)
		if h, ok := r.cfg.Hooks.(DeadLetterHook); ok {
			h.DeadLettered(hctx, m, out.deadErrs[i])
		}
	}
	return nil
}

// publishDead publishes dead events to the dead-letter publisher. A
// failure is logged, and the event is dead all the same, unless the
// dead-letter publisher was unavailable (IsUnavailable): the event then
// stays pending, nothing is written for it, and the relay backs off as in
// an outage (outage.go), so that it is dead-lettered, with its copy, once
// the destination is back.
func (rn *run) publishDead(ctx, hctx context.Context, out *batchOutcome) {
	r := rn.r
	errs := make([]error, len(out.deadMsgs))
	pctx, pcancel := context.WithTimeout(context.WithoutCancel(hctx), r.cfg.PublishTimeout)
	r.cfg.DeadLetter.Publish(pctx, out.deadMsgs, errs)
	pcancel()
	var later map[int64]bool // seqs left pending
	var lastErr error
	msgs, dErrs := out.deadMsgs[:0], out.deadErrs[:0]
	for i, err := range errs {
		if err != nil && IsUnavailable(err) && !IsPermanent(err) {
			if later == nil {
				later = make(map[int64]bool)
			}
			later[out.deadMsgs[i].Seq] = true
			lastErr = err
			continue
		}
		if err != nil {
			r.cfg.Logger.WarnContext(ctx, "jitoutbox relay: dead-letter publish failed",
				"owner", r.cfg.Owner, "event_id", out.deadMsgs[i].ID, "err", err)
		}
		msgs, dErrs = append(msgs, out.deadMsgs[i]), append(dErrs, out.deadErrs[i])
	}
	rn.broker.DeadLetter(ctx, lastErr)
	if later == nil {
		return
	}
	rn.backOff() // as in an outage
	out.deadMsgs, out.deadErrs = msgs, dErrs
	fails := out.failures[:0]
	for _, f := range out.failures {
		if !later[f.Seq] {
			fails = append(fails, f)
		}
	}
	out.failures = fails
	out.skipped += len(later)
	out.outage = true
}
