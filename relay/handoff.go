package relay

import (
	"sync"
	"sync/atomic"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/relay/internal/sequencer"
	"github.com/jitoutbox/jitoutbox/txoutbox"
)

// maxHandoff bounds the records waiting for the relay; past it a commit's
// records are dropped and the relay reads them instead.
const maxHandoff = 4096

// handoff is the relay's side of the in-process hand-over. It outlives
// runs: txoutbox holds the Relay; a running relay attaches its wake channel
// and publishes the owned-partition set.
type handoff struct {
	owned [dialects.MaxPartitions / 64]atomic.Uint64

	mu    sync.Mutex
	wake  chan struct{} // the running relay's hand-over wake; nil when not running
	lazy  chan struct{}
	sched chan struct{} // the read lane's look-up of the next due time
	recs  []dialects.Record
	// seq is the running relay's sequencer: it learns of the records
	// queued (the read lane leaves their aggregates to the hand-over
	// lane) and taken, under mu, so that it counts what recs holds.
	seq     *sequencer.Sequencer
	read    bool
	running bool
	// lazySent: an ordinary commit sent the lazy wake and the read lane
	// has not started a cycle since. The cycle it leads to reads every
	// row committed before it starts, so later ordinary commits need not
	// wake the read lane again (a wake per commit is a goroutine switch
	// per commit, for nothing).
	lazySent bool
}

func (h *handoff) attach(wake, lazy, sched chan struct{}, seq *sequencer.Sequencer) {
	h.mu.Lock()
	h.wake, h.lazy, h.sched, h.seq, h.running = wake, lazy, sched, seq, true
	h.recs, h.read, h.lazySent = nil, false, false
	h.mu.Unlock()
}

// detach ends the hand-over of a run: nothing is owned any more, queued
// records are dropped (they are committed rows: the next owner reads them).
func (h *handoff) detach() {
	h.setOwned(nil)
	h.mu.Lock()
	h.wake, h.lazy, h.sched, h.seq, h.running = nil, nil, nil, nil, false
	h.recs, h.read, h.lazySent = nil, false, false
	h.mu.Unlock()
}

// setOwned publishes the set of partitions the relay publishes now.
func (h *handoff) setOwned(parts []int) {
	var words [len(h.owned)]uint64
	for _, p := range parts {
		words[p/64] |= 1 << (p % 64)
	}
	for i := range h.owned {
		h.owned[i].Store(words[i])
	}
}

// ownedList returns the partitions below n the relay publishes now.
func (h *handoff) ownedList(n int) []int {
	var out []int
	for p := range min(n, dialects.MaxPartitions) {
		if h.owns(p) {
			out = append(out, p)
		}
	}
	return out
}

func (h *handoff) owns(p int) bool {
	if p < 0 || p >= dialects.MaxPartitions {
		return false
	}
	return h.owned[p/64].Load()&(1<<(p%64)) != 0
}

func (h *handoff) commit(c txoutbox.Commit) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.running {
		return
	}
	if c.Scheduled {
		signal(h.sched)
	}
	if !c.Critical {
		if !h.lazySent {
			h.lazySent = true
			signal(h.lazy)
		}
		return
	}
	if len(c.Records) > 0 {
		if len(h.recs)+len(c.Records) <= maxHandoff {
			h.recs = append(h.recs, c.Records...)
			h.seq.Queue(c.Records)
		} else {
			h.read = true
		}
	}
	h.read = h.read || c.Read
	signal(h.wake)
}

// cycleStarts tells the hand-over that the read lane starts a cycle (or
// could, were it to own partitions): the next ordinary commit wakes it
// again. Called before the cycle reads, so that a commit that found the
// lazy wake sent is read by this cycle.
func (h *handoff) cycleStarts() {
	h.mu.Lock()
	h.lazySent = false
	h.mu.Unlock()
}

// take removes and returns the queued records (Seq order within each
// commit) and whether a read was asked for.
func (h *handoff) take() ([]dialects.Record, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	recs, read := h.recs, h.read
	h.recs, h.read = nil, false
	if h.seq != nil {
		h.seq.Unqueue(recs)
	}
	return recs, read
}

// signal sends a coalescing wake on c (buffer of one).
func signal(c chan struct{}) {
	if c == nil {
		return
	}
	select {
	case c <- struct{}{}:
	default:
	}
}

// Owns reports whether the relay, running, publishes partition p now.
// txoutbox calls it while flushing a time-critical transaction: events of
// owned partitions are handed over after COMMIT, the others need a wake of
// the relay that owns them.
func (r *Relay) Owns(p int) bool { return r.hand.owns(p) }

// Committed hands a committed transaction's records to the running relay
// and wakes it; it never blocks, and does nothing when the relay is not
// running (the rows are read by whichever relay owns them). txoutbox calls
// it after COMMIT; c.Records must not be modified afterwards.
func (r *Relay) Committed(c txoutbox.Commit) { r.hand.commit(c) }

var _ txoutbox.Relay = (*Relay)(nil)
