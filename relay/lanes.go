package relay

import (
	"context"
	"slices"
	"sync"

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
// Hand-over batches run beside the critical read (fastWindow), so the
// aggregates of hand-over batches that end meanwhile go to critEnded too.
// The critical read holds fastBatch (for reading, as every hand-over batch
// does) from before the read until its batch is published, so ownership
// (and with it the seqs remembered) does not change in between.

// fastWindow is how many hand-over batches may be in the broker's hands
// at once. Rows of a batch never wait for another batch's ack: each batch
// holds aggregates no other batch in flight holds (takeFast), so the
// broker may take them in any order. While every slot is busy, handed-over
// rows queue in the hand-over and the next batch takes them all at once.
// Eight covers the stalls of one ack (a broker flush, a scheduling hiccup)
// at the commit rates a process reaches, and bounds the goroutines.
const fastWindow = 8

// fastLoop is the hand-over lane: it takes handed-over records as they
// come, and runs critical reads when asked, and publishes each batch on a
// slot of the window (fastWindow), until ctx ends; it returns once every
// batch in flight has ended. A batch holds fastBatch for reading while it
// is taken and published, so that an ownership change (run.apply, which
// takes it for writing) waits for every batch in flight.
func (rn *run) fastLoop(ctx context.Context) {
	slots := make(chan struct{}, fastWindow)
	var wg sync.WaitGroup
	defer wg.Wait()
	// slot takes a slot of the window and fastBatch for reading; false
	// when ctx ended first.
	slot := func() bool {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			return false
		}
		rn.fastBatch.RLock()
		return true
	}
	// publish publishes batch (taken) on its slot and gives the slot back;
	// done, if not nil, is told whether anything was published.
	publish := func(batch []dialects.Record, done func(bool)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			published := rn.publishTaken(ctx, batch)
			rn.fastBatch.RUnlock()
			<-slots
			if done != nil {
				done(published)
			}
		}()
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-rn.wakes.handoff:
			// The slot first: rows handed over while the window is full
			// wait in the hand-over and go together in the next batch.
			if !slot() {
				return
			}
			recs, read := rn.r.hand.take()
			if read {
				// Rows that could not be handed over: a critical read
				// (next round), then the read lane reads.
				signal(rn.wakes.critical)
			}
			for first := true; ; first = false {
				if !first && !slot() {
					return
				}
				n := min(len(recs), rn.r.cfg.BatchSize)
				batch := rn.takeFast(recs[:n])
				recs = recs[n:]
				if len(batch) == 0 {
					rn.fastBatch.RUnlock()
					<-slots
					rn.releaseFast(nil) // rows taken but not published (already published, moved) were left by the read lane too
				} else {
					publish(batch, nil)
				}
				if len(recs) == 0 {
					break
				}
			}
		case <-rn.wakes.critical:
			if !slot() {
				return
			}
			batch, full := rn.criticalRead(ctx)
			if len(batch) == 0 {
				rn.fastBatch.RUnlock()
				<-slots
				continue
			}
			publish(batch, func(published bool) {
				if published && full {
					// A full read may have left free rows past its
					// window: another.
					signal(rn.wakes.critical)
				}
			})
		}
	}
}

// publishTaken publishes a hand-over batch that takeFast kept (its
// aggregates in flight for the read lane) and reports whether any was
// published. Whatever it leaves pending goes to the read lane: a retry's
// time (the read lane owns the schedule), a failure, an outage, rows the
// broker could not take.
func (rn *run) publishTaken(ctx context.Context, batch []dialects.Record) bool {
	var res cycleResult
	res.claimed = len(batch)
	rn.publishBatch(ctx, batch, true, &res)
	if !res.retryAt.IsZero() {
		rn.fastRetries.add(res.retryAt)
	}
	if res.dbErr != nil || res.outage || res.more || res.unavailable {
		signal(rn.wakes.urgent)
	}
	return res.published > 0
}

// criticalRead (on the hand-over lane's goroutine, holding a slot and
// fastBatch for reading) reads the owned partitions' time-critical rows
// that no earlier row of their aggregate holds back and returns those
// takeFast kept, to be published like handed-over rows (see above), and
// whether the read came back full. The read lane is woken once they are
// taken (it leaves their aggregates alone while they are in flight), or at
// once when there are none: it publishes what the critical read could
// not. Database errors are left to the read lane, which backs off from
// them; while it backs off (an outage, a database error) there is no
// critical read. One critical read runs at a time: critWatch and
// critEnded are its own.
func (rn *run) criticalRead(ctx context.Context) (batch []dialects.Record, full bool) {
	defer signal(rn.wakes.urgent)
	rn.mu.Lock()
	trouble := rn.trouble > 0 || rn.inOutage
	rn.mu.Unlock()
	if trouble || ctx.Err() != nil {
		return nil, false
	}
	parts := rn.r.hand.ownedList(rn.own.parts)
	if len(parts) == 0 {
		return nil, false
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
		return nil, false
	}
	return rn.takeFast(recs), len(recs) == limit
}

// takeFast keeps the handed-over (or critically read) records of
// partitions the relay publishes now that it has not published already
// and whose aggregate neither the read lane nor another hand-over batch
// has in flight (nor had, since a critical read began: critEnded), and
// records their aggregates as in flight. The records it leaves to the read
// lane (all of them during a broker outage, which the read lane backs off
// from) wake the read lane.
func (rn *run) takeFast(recs []dialects.Record) (out []dialects.Record) {
	dropped := false
	var mine map[string]bool // aggregates of this batch
	defer func() {
		if dropped {
			signal(rn.wakes.urgent)
		}
	}()
	rn.mu.Lock()
	defer rn.mu.Unlock()
	if rn.inOutage {
		dropped = true // the read lane retries with its back-off
		return nil
	}
	for i := range recs {
		rec := &recs[i]
		if !rn.r.hand.owns(rec.Partition) {
			continue // the partition moved: its new owner reads it
		}
		if _, dup := rn.recent[rec.Seq]; dup {
			continue
		}
		k := aggKey(rec)
		if rn.readAggs[k] || rn.critEnded[k] || (rn.fastAggs[k] && !mine[k]) {
			// In flight in the read lane or in another hand-over batch
			// (a critical read returns a row handed over and not yet
			// published): whoever has it publishes it, the read lane the
			// rest.
			dropped = true
			continue
		}
		out = append(out, *rec)
		if mine == nil {
			mine = make(map[string]bool)
		}
		mine[k] = true // a commit's later events of the aggregate go in this batch too
		rn.fastAggs[k] = true
	}
	return out
}

// releaseFast ends a hand-over batch (its outcome is written): its
// aggregates are no longer in flight, and a read lane that left rows of
// them alone is woken to read them.
func (rn *run) releaseFast(batch []dialects.Record) {
	rn.mu.Lock()
	for i := range batch {
		k := aggKey(&batch[i])
		delete(rn.fastAggs, k)
		if rn.critWatch {
			// A critical read's rows wait for takeFast: a row of this
			// batch that failed is not in recent, and its stale record
			// must not be published again.
			rn.critEnded[k] = true
		}
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
// rows of partitions no longer owned, the rows published since the read or
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
