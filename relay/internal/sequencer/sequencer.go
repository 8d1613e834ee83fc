// Package sequencer decides which of a relay's two lanes publishes a row:
// it is the one place that knows which aggregates are in flight, for rows
// that come from a read and from the hand-over alike, and which seqs were
// published recently.
//
// The read lane reads the owned partitions and publishes backlogs batch by
// batch (KeepRead, EndRead). The hand-over lane publishes, beside it, the
// rows that time-critical commits of this process hand over and the rows
// of its critical reads (TakeHandOver, EndHandOver).
//
// Order between the lanes: a handed-over row is free at its flush (no
// pending or blocked row of its aggregate was visible), so the only rows
// of its aggregate the read lane can hold are that row itself or later
// ones, and a batch that holds a later one holds that row too (a read sees
// what committed before; a read ahead leaves out aggregates with a pending
// row at or below its bound). So each lane leaves alone the aggregates the
// other has queued or in flight: TakeHandOver drops the rows of the read
// lane's aggregates (the read lane publishes them), KeepRead skips the
// rows of the hand-over lane's (the next read returns them, once
// EndHandOver has ended that batch, which then says to wake the read
// lane).
//
// A critically read row c of aggregate A has the property a handed-over
// row has, as of the read: no earlier row of A is pending or blocked, and
// none can commit later. A row published and not yet marked is still
// pending in the table, so a row behind it is not returned; c itself,
// published by either lane and waiting for its mark, is in the recent
// seqs (Published) and skipped. The later rows of A commit after c: a read
// ahead leaves them out while c is pending at or below its bound, and a
// read that returns them returns c before them (KeepRead then skips A while
// the hand-over lane has it in flight, or skips c once published). One
// race is left: the critical read is a snapshot, and between it and
// TakeHandOver a read-lane batch may publish c and end; if c failed there,
// it is not in the recent seqs, and the stale record would publish it
// again. So between BeginCritical and EndCritical, the aggregates of
// read-lane batches that end go to a set that TakeHandOver leaves to the
// read lane.
//
// The recent seqs keep a row from being published twice while its mark is
// queued or written (and, after a fenced mark, until the session changes):
// MarkFailed forgets seqs whose mark failed, NewSession forgets them all,
// and past RecentSeqs the oldest go.
//
// The state is guarded by the Sequencer's own lock, not owned by a
// goroutine: every call is a question its caller needs answered before it
// goes on (which rows to publish), so a goroutine would be a lock with a
// request and a reply channel per call. The lock is a leaf: a Sequencer
// calls nothing but the owned functions it is given, which must take no
// lock, so callers may hold their own
// (the hand-over queue calls Queue and Unqueue under its lock, which keeps
// the queued aggregates in step with the queue).
package sequencer

import (
	"sync"

	"github.com/jitoutbox/jitoutbox/dialects"
)

// RecentSeqs bounds the seqs of published rows a Sequencer remembers.
const RecentSeqs = 1 << 14

// Key identifies an aggregate.
func Key(rec *dialects.Record) string {
	return rec.AggregateType + "\x00" + rec.AggregateID
}

// Sequencer holds the aggregates each lane has queued or in flight and
// the seqs published recently. The zero value is not usable: use New.
type Sequencer struct {
	mu       sync.Mutex
	queued   map[string]int  // aggregates of handed-over rows not yet taken by the hand-over lane
	read     map[string]bool // aggregates of the read lane's batch in flight
	handOver map[string]bool // aggregates of the hand-over lane's batch in flight
	// readWaiting: the read lane left rows of the hand-over lane's
	// aggregates alone; EndHandOver says to wake it.
	readWaiting bool
	// critical is set between BeginCritical and EndCritical: the
	// aggregates of read-lane batches that end meanwhile go to ended.
	critical bool
	ended    map[string]bool
	recent   map[int64]struct{}
	// recentQ holds the remembered seqs in the order they were
	// published, as a ring once it holds RecentSeqs: recentQ[oldest] is
	// the next to go. Shifting the slice instead moved all RecentSeqs of
	// them at every batch published once the bound was reached.
	recentQ []int64
	oldest  int
}

// New returns an empty Sequencer.
func New() *Sequencer {
	return &Sequencer{queued: make(map[string]int), read: make(map[string]bool), handOver: make(map[string]bool),
		ended: make(map[string]bool), recent: make(map[int64]struct{})}
}

// Queue records handed-over rows waiting in the hand-over queue: the read
// lane leaves their aggregates to the hand-over lane.
func (s *Sequencer) Queue(recs []dialects.Record) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range recs {
		s.queued[Key(&recs[i])]++
	}
}

// Unqueue records that rows Queue recorded left the hand-over queue (taken
// by the hand-over lane, which then calls TakeHandOver).
func (s *Sequencer) Unqueue(recs []dialects.Record) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range recs {
		k := Key(&recs[i])
		if s.queued[k] <= 1 {
			delete(s.queued, k)
		} else {
			s.queued[k]--
		}
	}
}

// TakeHandOver keeps the handed-over (or critically read) records of
// partitions owned that were not published already and whose aggregate
// the read lane has not in flight (nor had, since BeginCritical), and
// records their aggregates as the hand-over lane's in flight. dropped
// reports records left to the read lane.
func (s *Sequencer) TakeHandOver(recs []dialects.Record, owned func(partition int) bool) (kept []dialects.Record, dropped bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range recs {
		rec := &recs[i]
		if !owned(rec.Partition) {
			continue // the partition moved: its new owner reads it
		}
		if _, dup := s.recent[rec.Seq]; dup {
			continue
		}
		if k := Key(rec); s.read[k] || s.ended[k] {
			dropped = true
			continue
		}
		kept = append(kept, *rec)
	}
	for i := range kept {
		s.handOver[Key(&kept[i])] = true
	}
	return kept, dropped
}

// EndHandOver ends a hand-over batch (its outcome is written): its
// aggregates are no longer in flight. It reports whether the read lane
// left rows alone for the hand-over lane since it was last woken: wake it
// to read them.
func (s *Sequencer) EndHandOver(batch []dialects.Record) (wakeRead bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range batch {
		delete(s.handOver, Key(&batch[i]))
	}
	wakeRead = s.readWaiting
	s.readWaiting = false
	return wakeRead
}

// KeepRead drops, from a batch the read lane read (ahead), the rows of
// aggregates in held (behind a failure of an earlier batch of the chain),
// of partitions not owned (holding their aggregates for the rest of the
// chain), the rows published recently, and the rows of
// aggregates the hand-over lane has queued or in flight (the read lane is
// to be woken when they end; held records them for the rest of the
// chain); it keeps at most max rows and records their aggregates as the
// read lane's in flight. bound is the Seq up to which recs were looked at
// (the last kept row's when cut: rows past max were left for the next
// read).
func (s *Sequencer) KeepRead(recs []dialects.Record, held map[string]bool, max int, owned func(partition int) bool) (kept []dialects.Record, bound int64, cut bool) {
	kept = recs[:0:0]
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range recs {
		if len(kept) == max {
			cut = true
			break
		}
		bound = recs[i].Seq
		k := Key(&recs[i])
		if held[k] {
			continue
		}
		if _, dup := s.recent[recs[i].Seq]; dup {
			continue
		}
		if !owned(recs[i].Partition) {
			// A partition given up mid-chain may be taken back before
			// the chain ends: the aggregate's later rows, read ahead
			// then, must not pass this one.
			held[k] = true
			continue
		}
		if s.handOver[k] || s.queued[k] > 0 {
			// The hand-over lane publishes them (a read would race it for
			// rows it takes at once). Held for the rest of the chain: a
			// read ahead must not publish a later row of the aggregate
			// before the hand-over lane has published this one.
			s.readWaiting = true
			held[k] = true
			continue
		}
		kept = append(kept, recs[i])
	}
	for i := range kept {
		s.read[Key(&kept[i])] = true
	}
	return kept, bound, cut
}

// EndRead ends the read lane's batch: its aggregates are no longer in
// flight (and are remembered for TakeHandOver while a critical read is
// watched).
func (s *Sequencer) EndRead() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.critical {
		for k := range s.read {
			s.ended[k] = true
		}
	}
	clear(s.read)
}

// ReadWaiting reports whether the read lane left rows to the hand-over lane
// that EndHandOver has not said to wake it for yet.
func (s *Sequencer) ReadWaiting() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.readWaiting
}

// BeginCritical starts watching for a critical read, before the read:
// read-lane batches that end from now on leave their aggregates to the
// read lane in TakeHandOver, until EndCritical.
func (s *Sequencer) BeginCritical() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.critical = true
}

// EndCritical ends the watch BeginCritical started.
func (s *Sequencer) EndCritical() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.critical = false
	clear(s.ended)
}

// Published records seqs the broker acknowledged, so that a hand-over or a
// read that arrives after the row was published (its mark queued or
// written) does not publish it again; the oldest are forgotten past
// RecentSeqs.
func (s *Sequencer) Published(seqs []int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, q := range seqs {
		s.recent[q] = struct{}{}
		if len(s.recentQ) < RecentSeqs {
			s.recentQ = append(s.recentQ, q)
			continue
		}
		delete(s.recent, s.recentQ[s.oldest])
		s.recentQ[s.oldest] = q
		s.oldest = (s.oldest + 1) % RecentSeqs
	}
}

// MarkFailed forgets seqs whose mark failed: they are pending again and
// must be published again. Their place in the bound goes when they are
// the oldest.
func (s *Sequencer) MarkFailed(seqs []int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, q := range seqs {
		delete(s.recent, q)
	}
}

// NewSession forgets every published seq: a row the previous session
// published but could not mark (it lost the partition first) is still
// pending, and the new session must publish it when it owns the
// partition.
func (s *Sequencer) NewSession() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.recent)
	s.recentQ, s.oldest = s.recentQ[:0], 0
}
