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
//
// Order between the lanes: a handed-over row is free at its flush (no
// pending or blocked row of its aggregate was visible), so the only rows
// of its aggregate the read lane can hold are that row itself or later
// ones, and a batch that holds a later one holds that row too (a read sees
// what committed before; a read ahead leaves out aggregates with a pending
// row at or below its bound). So each lane leaves alone the aggregates the
// other has in flight: the hand-over lane drops their handed-over rows
// (the read lane publishes them), the read lane skips their rows in this
// batch (the next read returns them, once the hand-over batch has ended).
//
// Critical reads. On an urgent wake from a Source (a time-critical commit
// of another process, or of this one that could not hand over) and when a
// hand-over asks for a read, the hand-over lane reads the owned
// partitions' time-critical rows that have no earlier pending row and no
// block (dialects.Dialect.ReadCritical), publishes them like handed-over
// rows, and then wakes the read lane, which publishes the rest (a
// time-critical row behind an earlier pending row of its aggregate waits
// for it: only that aggregate waits). Such a row c of aggregate A has the
// property a handed-over row has, as of the read: no earlier row of A is
// pending or blocked, and none can commit later (transactions writing one
// aggregate serialise on it, so a row committed after c comes after it).
// A row published and not yet marked is still pending in the table, so a
// row behind it is not returned; c itself, published by either lane and
// waiting for its mark, is in recent and skipped. The later rows of A
// commit after c, so they took their seqs after any read from the start
// that did not see c: above its horizon, a read ahead leaves them out
// while c is pending at or below its bound, and a read that returns them
// returns c before them (keep then skips A while this lane has it in
// flight, or skips c once published: the later rows go after c's ack).
// What the lanes exclude is checked under rn.mu as usual (takeFast,
// keep). One race is left: the read is a snapshot, and between it and
// takeFast a read-lane batch may publish c and end; if c failed there, it
// is not in recent, and the stale record would publish it again (a dead
// event too, or a retry before its time). So while a critical read's rows
// wait for takeFast (critWatch), the aggregates of read-lane batches that
// end go to critEnded, and takeFast leaves their rows to the read lane.
// The critical read holds fastBatch from before the read until its batch
// is published, so ownership (and with it the seqs remembered) does not
// change in between.

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
				signal(rn.wakes.critical)
			}
			for len(recs) > 0 && ctx.Err() == nil {
				n := min(len(recs), rn.r.cfg.BatchSize)
				rn.fastBatch.Lock()
				rn.publishFast(ctx, recs[:n], nil)
				rn.fastBatch.Unlock()
				recs = recs[n:]
			}
			rn.releaseFast(nil) // rows taken but not published (already published, moved) were left by the read lane too
		case <-rn.wakes.critical:
			rn.criticalRead(ctx)
		}
	}
}

// publishFast publishes a hand-over batch (called with fastBatch held):
// the records takeFast keeps. wake, if not nil, is called once they are
// taken (in flight for the read lane), before they are published. It
// reports whether any was published.
func (rn *run) publishFast(ctx context.Context, recs []dialects.Record, wake func()) bool {
	batch, dropped := rn.takeFast(recs)
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
			rn.fastRetries.add(res.retryAt)
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

// criticalRead reads the owned partitions' time-critical rows that no
// earlier row of their aggregate holds back and publishes them like
// handed-over rows (see above). The read lane is woken as soon as they
// are taken (it leaves their aggregates alone while they are in flight),
// or at once when there are none: it publishes what the critical read
// could not. A read that came back full and published something asks for
// another. Database errors are left to the read lane, which backs off from
// them; while it backs off (an outage, a database error) there is no
// critical read.
func (rn *run) criticalRead(ctx context.Context) {
	woken := false
	wake := func() {
		if !woken {
			woken = true
			signal(rn.wakes.urgent)
		}
	}
	defer wake()
	rn.mu.Lock()
	trouble := rn.trouble > 0 || rn.inOutage
	rn.mu.Unlock()
	if trouble || ctx.Err() != nil {
		return
	}
	rn.fastBatch.Lock()
	defer rn.fastBatch.Unlock()
	parts := rn.r.hand.ownedList(rn.own.parts)
	if len(parts) == 0 {
		return
	}
	rn.mu.Lock()
	rn.critWatch = true
	rn.mu.Unlock()
	defer func() {
		rn.mu.Lock()
		rn.critWatch = false
		clear(rn.critEnded)
		rn.mu.Unlock()
	}()
	// At most a window of rows (the read looks at no more candidates), so
	// that a full read, which may have left free rows past its window,
	// asks for another.
	limit := min(rn.r.cfg.BatchSize, dialects.CriticalWindow)
	recs, err := rn.r.d.ReadCritical(ctx, rn.r.db, dialects.CriticalRequest{Partitions: parts, Limit: limit, Now: rn.r.cfg.Clock()})
	if err != nil || len(recs) == 0 {
		return
	}
	if rn.publishFast(ctx, recs, wake) && len(recs) == limit {
		signal(rn.wakes.critical)
	}
	rn.releaseFast(nil)
}

// takeFast keeps the handed-over (or critically read) records of
// partitions the relay publishes now that it has not published already
// and whose aggregate the read lane has not in flight (nor had, since a
// critical read began: critEnded), and records their aggregates as in
// flight. dropped reports records left to the read lane (all of them
// during a broker outage, which the read lane backs off from).
func (rn *run) takeFast(recs []dialects.Record) (out []dialects.Record, dropped bool) {
	rn.mu.Lock()
	defer rn.mu.Unlock()
	if rn.inOutage {
		return nil, true // the read lane retries with its back-off
	}
	for i := range recs {
		rec := &recs[i]
		if !rn.r.hand.owns(rec.Partition) {
			continue // the partition moved: its new owner reads it
		}
		if _, dup := rn.recent[rec.Seq]; dup {
			continue
		}
		if k := aggKey(rec); rn.readAggs[k] || rn.critEnded[k] {
			dropped = true
			continue
		}
		out = append(out, *rec)
	}
	for i := range out {
		rn.fastAggs[aggKey(&out[i])] = true
	}
	return out, dropped
}

// releaseFast ends a hand-over batch (its outcome is written): its
// aggregates are no longer in flight, and a read lane that left rows of
// them alone is woken to read them.
func (rn *run) releaseFast(batch []dialects.Record) {
	rn.mu.Lock()
	for i := range batch {
		delete(rn.fastAggs, aggKey(&batch[i]))
	}
	wake := rn.readWaiting
	if wake {
		rn.readWaiting = false
	}
	rn.mu.Unlock()
	if wake {
		signal(rn.wakes.urgent)
	}
}

// keep drops, from a batch the read lane read (ahead), the rows of
// aggregates held behind a failure of an earlier batch of the chain, the
// rows of partitions no longer owned (holding their aggregates for the rest
// of the chain), the rows published since the read or
// still waiting for their mark, and the rows of aggregates the hand-over
// lane has queued or in flight (the read lane is woken when they are
// released; held records them for the rest of the chain); it keeps at most
// max rows and records their aggregates as in flight for the hand-over
// lane. bound is the Seq up to which recs were
// looked at (the last kept row's when cut: rows past max were left for
// the next read).
func (rn *run) keep(recs []dialects.Record, held map[string]bool, max int) (out []dialects.Record, bound int64, cut bool) {
	out = recs[:0:0]
	rn.mu.Lock()
	defer rn.mu.Unlock()
	h := &rn.r.hand
	h.mu.Lock() // lock order: rn.mu, then hand.mu
	defer h.mu.Unlock()
	for i := range recs {
		if len(out) == max {
			cut = true
			break
		}
		bound = recs[i].Seq
		k := aggKey(&recs[i])
		if held[k] {
			continue
		}
		if _, dup := rn.recent[recs[i].Seq]; dup {
			continue
		}
		if _, ok := slices.BinarySearch(rn.active, recs[i].Partition); !ok {
			// A partition given up mid-chain may be taken back before
			// the chain ends: the aggregate's later rows, read ahead
			// then, must not pass this one.
			held[k] = true
			continue
		}
		if rn.fastAggs[k] || h.aggs[k] > 0 {
			// Handed over and queued or in flight: the hand-over lane
			// publishes them (a read would race it for rows it takes at
			// once), and wakes this lane when it is done with them. Held
			// for the rest of the chain: a read ahead must not publish a
			// later row of the aggregate before the lane has published
			// this one.
			rn.readWaiting = true
			held[k] = true
			continue
		}
		out = append(out, recs[i])
	}
	for i := range out {
		rn.readAggs[aggKey(&out[i])] = true
	}
	return out, bound, cut
}

// endRead clears the read lane's aggregates in flight (remembering them
// in critEnded while a critical read's rows wait for takeFast).
func (rn *run) endRead() {
	rn.mu.Lock()
	if rn.critWatch {
		for k := range rn.readAggs {
			rn.critEnded[k] = true
		}
	}
	clear(rn.readAggs)
	rn.mu.Unlock()
}

// remember records published seqs (called with rn.mu held), so that a
// hand-over or a read that arrives after the row was published (its mark
// queued or written) does not publish it again; the oldest are forgotten
// past recentSeqs.
func (rn *run) remember(seqs []int64) {
	for _, s := range seqs {
		rn.recent[s] = struct{}{}
		rn.recentQ = append(rn.recentQ, s)
	}
	if over := len(rn.recentQ) - recentSeqs; over > 0 {
		for _, s := range rn.recentQ[:over] {
			delete(rn.recent, s)
		}
		rn.recentQ = append(rn.recentQ[:0], rn.recentQ[over:]...)
	}
}

// unremember drops seqs whose mark failed (called with rn.mu held): they
// are pending again and must be published again. Their recentQ entries go
// when they are the oldest.
func (rn *run) unremember(seqs []int64) {
	for _, s := range seqs {
		delete(rn.recent, s)
	}
}

// forget drops every remembered seq when the run's session changes (called
// with rn.mu held): a row the previous session published but could not
// mark (it lost the partition first) is still pending, and the new session
// must publish it when it owns the partition.
func (rn *run) forget() {
	clear(rn.recent)
	rn.recentQ = rn.recentQ[:0]
}
