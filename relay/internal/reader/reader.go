// Package reader is the read lane's chain of reads: it reads a relay's
// owned partitions batch by batch and says which rows the lane publishes
// next, until a read comes back short.
//
// A chain starts with a read from the start (the lowest pending Seqs of
// the owned partitions). While a full batch is published, the next batch
// (Seq past it) is read ahead, which overlaps the database's read with the
// broker's acknowledgements of the batch in flight. A read ahead reads the
// chain's partitions only, as of the chain's clock, with the horizon of its
// read from the start: rows up to the horizon need nothing more
// (dialects.ReadResult.Horizon says why), and the dialect checks those
// above it. A read ahead that comes back short is followed by a read from
// the start, which finds a lower Seq that committed late.
//
// The rows a read ahead returns of aggregates held in the chain are
// dropped (sequencer.Sequencer.KeepRead): the aggregates that failed in a
// batch of the chain (their blocks were written after the read), the
// aggregates whose rows a read skipped for the hand-over lane (their
// earlier rows are not published yet), and those of partitions given up
// meanwhile. They stay held until the next read from the start: their
// skipped rows come before the rows read ahead.
//
// A partition gained since the read from the start was not read below the
// bound, so the horizon says nothing of its earlier rows; a row due or a
// block expired since was not due or blocked when it read, so its earlier
// rows may not be known either. The next read from the start covers both;
// when partitions were gained, the Exit that ends the reads says so
// (Exit.Gained), and the run reads again at once.
//
// A Reader is owned by one goroutine (the read lane's); it starts one
// goroutine at a time, for a read ahead, which ends with its read.
package reader

import (
	"context"
	"fmt"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
)

// ReadFunc reads pending rows: the dialect's Read on the relay's
// database.
type ReadFunc func(ctx context.Context, req dialects.ReadRequest) (dialects.ReadResult, error)

// Sequencer is the part of the run's sequencer (relay/internal/sequencer)
// the read lane asks which rows of a read to publish.
type Sequencer interface {
	// KeepRead drops from recs the rows not to publish now (held
	// aggregates, among others, which it may add to held) and keeps at
	// most max rows; bound is the Seq up to which recs were looked at, and
	// cut says that rows past max were left for the next read.
	KeepRead(recs []dialects.Record, held map[string]bool, max int, owned func(partition int) bool) (kept []dialects.Record, bound int64, cut bool)
	// EndRead ends the read lane's batch.
	EndRead()
	// ReadWaiting reports whether the read lane left rows to the
	// hand-over lane that it has not been woken for yet.
	ReadWaiting() bool
}

// Marks is the part of the run's mark queue (relay/internal/marker) the
// chain looks at.
type Marks interface {
	// Unmarked returns how many published rows wait for their mark.
	Unmarked() int
	// Idle returns once every mark queued so far is written.
	Idle()
}

// Ownership is the read lane's view of the partitions it publishes. Owns
// takes no lock: KeepRead calls it under the sequencer's.
type Ownership interface {
	// Owned returns the partitions published now, sorted.
	Owned() []int
	// Owns reports whether partition p is published now.
	Owns(p int) bool
	// ApplyPending applies an ownership update waiting, if any, and
	// reports whether partitions were gained.
	ApplyPending() bool
}

// Config is what a Reader reads with.
type Config struct {
	Read  ReadFunc
	Seq   Sequencer
	Marks Marks
	Own   Ownership
	// Now is the relay's clock moved onto the database's: a read from the
	// start reads as of it, and so do the reads ahead of its chain.
	Now func() time.Time
	// BatchSize is the most rows of a batch (> 0).
	BatchSize int
	// MarkAhead: a read from the start also returns the rows published
	// and still waiting for their marks (left out by KeepRead), up to
	// MarkAhead batches of them: it reads that many more rows, rather
	// than wait for the marks.
	MarkAhead int
}

// Reason says why a Reader's reads ended.
type Reason int

// The reasons the reads end.
const (
	// Empty: a read from the start found no row.
	Empty Reason = iota + 1
	// Short: a read from the start came back short; the owned partitions
	// are drained as of it.
	Short
	// Idle: a read ahead came back short (or reading ahead is off) and
	// the chain kept nothing since its read from the start, so another
	// would find the same rows; and the rows it left wait for the
	// hand-over lane (which wakes the read lane when done with them) or
	// nothing waits for its mark. With rows waiting for their marks, the
	// chain waits for them and reads from the start instead.
	Idle
	// Unowned: no partition is owned.
	Unowned
	// ReadFailed: a read failed (Exit.Err).
	ReadFailed
	// Stopped: the run stopped the reads (Stop).
	Stopped
)

// String returns the reason's name.
func (r Reason) String() string {
	switch r {
	case Empty:
		return "empty"
	case Short:
		return "short"
	case Idle:
		return "idle"
	case Unowned:
		return "unowned"
	case ReadFailed:
		return "read failed"
	case Stopped:
		return "stopped"
	}
	return fmt.Sprintf("reason(%d)", int(r))
}

// Exit says why and how a Reader's reads ended.
type Exit struct {
	Reason Reason
	// Err is the read's error (ReadFailed).
	Err error
	// Gained: partitions were gained during the reads; the reads did not
	// cover them, so read again at once.
	Gained bool
}

// result is one read's outcome.
type result struct {
	dialects.ReadResult
	limit int // the rows asked for
	err   error
}

// Reader is the chain of reads of the read lane. The zero value is not
// usable: use New.
type Reader struct {
	cfg Config

	// chain is the read from the start of the current chain: its reads
	// ahead read its partitions, as of its clock, with its horizon.
	chain dialects.ReadRequest
	// held: the aggregates held in the chain (see the package doc),
	// until its next read from the start.
	held map[string]bool
	// aheadOff stops reading ahead until the reads end once a read ahead
	// came back less than half full: when the batch in flight holds most
	// of the relay's aggregates (few aggregates, or several relays
	// splitting them), reads ahead find little and only cost the
	// database.
	aheadOff bool
	kept     int           // rows kept since the read from the start
	ahead    <-chan result // the read ahead in flight, if any
	gained   bool          // partitions gained during these reads

	// afterBatch: Ended ended a batch of the last read; the next Next
	// goes on from that read.
	afterBatch       bool
	full, prefetched bool  // the last read was full; was a read ahead
	bound            int64 // the Seq up to which it was looked at

	covered time.Time // the clock of the last read from the start that succeeded (Covered)
}

// New returns a Reader that reads as cfg says.
func New(cfg Config) *Reader {
	return &Reader{cfg: cfg, held: make(map[string]bool)}
}

// Next returns the next batch to publish, its aggregates recorded as the
// read lane's in flight (sequencer.Sequencer.KeepRead); the run publishes
// it and then calls Ended, and then Next again or Stop. A read ahead may
// be in flight meanwhile.
//
// When the reads end, Next returns no batch and the Exit, with no read in
// flight; the next call starts anew with a read from the start. With a
// batch, the Exit is zero.
func (r *Reader) Next(ctx context.Context) ([]dialects.Record, Exit) {
	if r.afterBatch {
		r.afterBatch = false
		if reason := r.goOn(ctx); reason != 0 {
			return nil, r.end(Exit{Reason: reason})
		}
	}
	for len(r.cfg.Own.Owned()) > 0 {
		var rr result
		r.prefetched = r.ahead != nil
		if r.prefetched {
			rr = <-r.ahead
			r.ahead = nil
		} else {
			r.chain = dialects.ReadRequest{Partitions: r.cfg.Own.Owned(), Now: r.cfg.Now(),
				Limit: r.cfg.BatchSize + min(r.cfg.Marks.Unmarked(), r.cfg.MarkAhead*r.cfg.BatchSize)}
			rr = r.read(ctx, r.chain)
			if rr.err == nil {
				r.covered = r.chain.Now
			}
			r.chain.Horizon = rr.Horizon
			clear(r.held)
			r.kept = 0
		}
		if rr.err != nil {
			return nil, r.end(Exit{Reason: ReadFailed, Err: rr.err})
		}
		r.full = len(rr.Records) >= rr.limit
		if r.prefetched && 2*len(rr.Records) < r.cfg.BatchSize {
			r.aheadOff = true
		}
		recs, bound, cut := r.cfg.Seq.KeepRead(rr.Records, r.held, r.cfg.BatchSize, r.cfg.Own.Owns)
		r.bound = bound
		r.kept += len(recs)
		if cut {
			r.full = true // rows past the batch were left for the next read
		}
		if len(rr.Records) == 0 && !r.prefetched {
			return nil, r.end(Exit{Reason: Empty})
		}
		if len(recs) > 0 {
			if r.full && !r.aheadOff {
				r.readAhead(ctx)
			}
			return recs, Exit{}
		}
		if reason := r.goOn(ctx); reason != 0 {
			return nil, r.end(Exit{Reason: reason})
		}
	}
	r.await()
	return nil, r.end(Exit{Reason: Unowned})
}

// Covered returns the clock of the last read from the start that
// succeeded (zero before the first): every row due by then and committed
// before it was read. The look-up of scheduled rows' due times starts
// there, so that a row that fell due since is found.
func (r *Reader) Covered() time.Time { return r.covered }

// Ended ends the batch Next returned, its outcome written: failed are the
// aggregates held behind a failure in it, held for the rest of the chain
// (their skipped rows come before the rows read ahead).
func (r *Reader) Ended(failed map[string]bool) {
	r.cfg.Seq.EndRead()
	for k := range failed {
		r.held[k] = true
	}
	r.afterBatch = true
}

// Stop ends the reads after a batch whose publish says to stop (an
// outage, a database error, the run's end): it waits for the read ahead in
// flight, whose goroutine ends with its read.
func (r *Reader) Stop() Exit {
	r.await()
	return r.end(Exit{Reason: Stopped})
}

// goOn decides, after a read and its batch (if any), how the chain goes
// on: it returns the reason the reads end, or 0 to go on with a read ahead
// (started here, if not already in flight) or a read from the start.
func (r *Reader) goOn(ctx context.Context) Reason {
	if r.cfg.Own.ApplyPending() {
		// Partitions gained mid-chain: this chain's reads did not cover
		// them; the run reads them at once.
		r.gained = true
	}
	if !r.full && !r.prefetched {
		return Short
	}
	if r.ahead == nil && (!r.full || r.aheadOff) {
		// A short read ahead, or none: read from the start, unless the
		// chain kept nothing since the last one, which would then find
		// the same rows (and spin while a slow broker holds the
		// hand-over lane's aggregates). Rows left to the hand-over lane
		// wake the read lane when the lane is done with them; rows
		// waiting for their marks are read past once marked.
		if r.kept == 0 {
			if r.cfg.Seq.ReadWaiting() || r.cfg.Marks.Unmarked() == 0 {
				return Idle
			}
			r.cfg.Marks.Idle()
		}
		return 0
	}
	if r.ahead == nil {
		r.readAhead(ctx)
	}
	return 0
}

// end resets the state of the reads that end with e and returns e, with
// Gained.
func (r *Reader) end(e Exit) Exit {
	e.Gained = r.gained
	r.gained, r.aheadOff, r.afterBatch = false, false, false
	return e
}

// read reads as req asks.
func (r *Reader) read(ctx context.Context, req dialects.ReadRequest) result {
	res, err := r.cfg.Read(ctx, req)
	return result{res, req.Limit, err}
}

// readAhead starts the read ahead of the chain past the bound, on a
// goroutine that ends with the read; the channel receives its result.
func (r *Reader) readAhead(ctx context.Context) {
	req := r.chain
	req.After, req.Limit = r.bound, r.cfg.BatchSize
	ch := make(chan result, 1)
	go func() { ch <- r.read(ctx, req) }()
	r.ahead = ch
}

// await waits for the read ahead in flight, if any.
func (r *Reader) await() {
	if r.ahead != nil {
		<-r.ahead
		r.ahead = nil
	}
}
