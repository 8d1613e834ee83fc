package relay

import (
	"context"
	"slices"

	"github.com/jitoutbox/jitoutbox/dialects"
)

// The two lanes of a run. The read lane (the publish loop, run.go) reads
// the owned partitions and publishes backlogs batch by batch. The
// hand-over lane publishes, beside it, the rows that time-critical commits
// of this process hand over (txoutbox.WithRelay) and the rows of its
// critical reads, so that a time-critical event never waits behind a
// batch of ordinary ones, nor behind a backlog the read lane is draining.
// Which lane publishes a row is decided by the run's sequencer
// (relay/internal/sequencer), whose package doc argues the order between
// the lanes.
//
// Critical reads. On an urgent wake from a Source (a time-critical commit
// of another process, or of this one that could not hand over) and when a
// hand-over asks for a read, the hand-over lane reads the time-critical
// rows that have no earlier pending row and no block
// (dialects.Dialect.ReadCritical) of the woken partitions it owns,
// publishes them like handed-over rows, and then, when the read held some
// back, wakes the read lane, which publishes the rest (a
// time-critical row behind an earlier pending row of its aggregate waits
// for it: only that aggregate waits). A wake that names only partitions
// other relays own costs nothing: no read, and the read lane is not woken;
// a partition taken after such a wake is read by its new owner from the
// start. The critical read holds fastBatch
// from before the read until its batch is published, so ownership (and
// with it the seqs remembered) does not change in between. A row never
// tried is due once committed (dialects.CriticalRequest), so the read
// after a wake sees the row whose commit sent it, however far the relay's
// idea of the database's clock lags.

// fastLoop is the hand-over lane: it publishes handed-over records as they
// come, and runs critical reads when asked, until ctx ends.
func (rn *run) fastLoop(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-rn.wakes.handoff:
			recs, read := rn.r.hand.take()
			if read {
				// Rows that could not be handed over: a critical read
				// (next round), then the read lane reads.
				rn.wakes.critical.Wake(nil)
			}
			for len(recs) > 0 && ctx.Err() == nil {
				n := min(len(recs), rn.r.cfg.BatchSize)
				rn.fastBatch.Lock()
				rn.publishFast(ctx, recs[:n], nil)
				rn.fastBatch.Unlock()
				recs = recs[n:]
			}
			rn.endHandOver(nil) // rows taken but not published (already published, moved) were left by the read lane too
		case <-rn.wakes.critical.C():
			if woken, any := rn.wakes.critical.Take(); any || len(woken) > 0 {
				rn.criticalRead(ctx, woken, any)
			}
		}
	}
}

// publishFast publishes a hand-over batch (called with fastBatch held):
// the records the sequencer lets the hand-over lane take (none during a
// broker outage, which the read lane backs off from). wake, if not nil, is
// called once they are taken (in flight for the read lane), before they
// are published. It reports whether any was published.
func (rn *run) publishFast(ctx context.Context, recs []dialects.Record, wake func()) bool {
	outage := rn.broker.InOutage()
	batch, dropped := []dialects.Record(nil), true
	if !outage {
		batch, dropped = rn.seq.TakeHandOver(recs, rn.r.hand.owns)
	}
	if wake != nil {
		wake()
	}
	var res cycleResult
	if len(batch) > 0 {
		res.claimed = len(batch)
		rn.publishBatch(ctx, batch, true, &res)
		if !res.retryAt.IsZero() {
			// A failed row's retry: the read lane owns the schedule
			// (without it the row waits for the poll).
			rn.fastRetries.Add(res.retryAt)
		}
		if res.dbErr != nil || res.outage || res.more || res.unavailable {
			// Rows left pending (a failure, an outage, a broker that
			// could not take them): the read lane takes over, with its
			// back-off.
			signal(rn.wakes.urgent)
		}
	}
	if dropped {
		signal(rn.wakes.urgent)
	}
	return res.published > 0
}

// criticalRead reads the time-critical rows of the owned partitions among
// woken (all owned ones with any) that no earlier row of their aggregate
// holds back, and publishes them like handed-over rows (see above). When
// it owns none of them it does nothing. Otherwise the read lane is woken
// as soon as the rows are taken (it leaves their aggregates alone while
// they are in flight), or at once when there are none: it publishes what
// the critical read could not. A wake that named its partitions stands for
// time-critical commits only, so when the read took every candidate
// (dialects.CriticalResult) there is nothing left for the read lane, and
// it is not woken: a read lane's read from the start can cost far more
// than the critical read (it walks the backlogs of partitions other relays
// own), and every time-critical commit would pay it. A read that came
// back full and published something asks for another of the same
// partitions. Database errors are left to the read lane, which backs off
// from them; while it backs off (an outage, a database error) there is no
// critical read.
func (rn *run) criticalRead(ctx context.Context, woken []int, any bool) {
	if !any && !slices.ContainsFunc(woken, rn.r.hand.owns) {
		return
	}
	readLane, readLaneWoken := true, false
	wake := func() {
		if readLane && !readLaneWoken {
			readLaneWoken = true
			signal(rn.wakes.urgent)
		}
	}
	defer wake()
	rn.mu.Lock()
	trouble := rn.trouble > 0
	rn.mu.Unlock()
	trouble = trouble || rn.broker.InOutage()
	if trouble || ctx.Err() != nil {
		return
	}
	rn.fastBatch.Lock()
	defer rn.fastBatch.Unlock()
	var parts []int
	if any {
		parts = rn.r.hand.ownedList(rn.own.parts)
	} else { // woken is Take's slice, the loop's to change
		parts = slices.DeleteFunc(woken, func(p int) bool { return !rn.r.hand.owns(p) })
	}
	if len(parts) == 0 {
		return
	}
	rn.seq.BeginCritical()
	defer rn.seq.EndCritical()
	// At most a window of rows (the read looks at no more candidates), so
	// that a full read, which may have left free rows past its window,
	// asks for another.
	limit := min(rn.r.cfg.BatchSize, dialects.CriticalWindow)
	res, err := rn.r.d.ReadCritical(ctx, rn.r.db, dialects.CriticalRequest{Partitions: parts, Limit: limit, Now: rn.clock.now()})
	recs := res.Records
	if err != nil || len(recs) == 0 {
		return
	}
	readLane = any || res.Candidates > len(recs)
	if rn.publishFast(ctx, recs, wake) && len(recs) == limit {
		rn.wakes.critical.Wake(parts)
	}
	rn.endHandOver(nil)
}

// endHandOver ends a hand-over batch (its outcome is written), and wakes
// a read lane that left rows of its aggregates alone.
func (rn *run) endHandOver(batch []dialects.Record) {
	if rn.seq.EndHandOver(batch) {
		signal(rn.wakes.urgent)
	}
}
