package reader

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/relay/internal/sequencer"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// rec is a row of aggregate agg in partition 0.
func rec(seq int64, agg string) dialects.Record {
	r := dialects.Record{Seq: seq}
	r.AggregateType, r.AggregateID = "t", agg
	return r
}

func seqs(recs []dialects.Record) []int64 {
	var out []int64
	for _, r := range recs {
		out = append(out, r.Seq)
	}
	return out
}

// reply is the fake database's answer to one read.
type reply struct {
	recs    []dialects.Record
	horizon int64
	err     error
	// block makes the read wait for its context to end (and return its
	// error), as a read that a stopping run cuts short.
	block bool
}

// fakeDB answers reads from a script, in order, and records each request.
// The requests are recorded when the read is made: a read ahead is made
// on its goroutine, but a Reader awaits it before its next read, so the
// order of the record is the order of the reads.
type fakeDB struct {
	t        *testing.T
	mu       sync.Mutex
	script   []reply
	reqs     []dialects.ReadRequest
	returned atomic.Int32 // reads that have returned
}

func (f *fakeDB) read(ctx context.Context, req dialects.ReadRequest) (dialects.ReadResult, error) {
	defer f.returned.Add(1)
	f.mu.Lock()
	f.reqs = append(f.reqs, req)
	if len(f.script) == 0 {
		f.mu.Unlock()
		f.t.Errorf("read %+v past the end of the script", req)
		return dialects.ReadResult{}, nil
	}
	rp := f.script[0]
	f.script = f.script[1:]
	f.mu.Unlock()
	if rp.block {
		<-ctx.Done()
		return dialects.ReadResult{}, ctx.Err()
	}
	return dialects.ReadResult{Records: slices.Clone(rp.recs), Horizon: rp.horizon}, rp.err
}

// afters returns the reads made so far, as After values (0: a read from
// the start).
func (f *fakeDB) afters() []int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []int64
	for _, r := range f.reqs {
		out = append(out, r.After)
	}
	return out
}

// fakeMarks counts the rows waiting for their mark; Idle writes them all.
type fakeMarks struct {
	unmarked int
	idles    int
}

func (m *fakeMarks) Unmarked() int { return m.unmarked }
func (m *fakeMarks) Idle()         { m.idles++; m.unmarked = 0 }

// fakeOwn owns parts; ApplyPending applies next, if set.
type fakeOwn struct {
	parts []int
	next  []int
}

func (o *fakeOwn) Owned() []int { return o.parts }
func (o *fakeOwn) Owns(p int) bool {
	_, ok := slices.BinarySearch(o.parts, p)
	return ok
}
func (o *fakeOwn) ApplyPending() bool {
	if o.next == nil {
		return false
	}
	gained := false
	for _, p := range o.next {
		if !o.Owns(p) {
			gained = true
		}
	}
	o.parts, o.next = o.next, nil
	return gained
}

var clock = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

type env struct {
	db    *fakeDB
	seq   *sequencer.Sequencer
	marks *fakeMarks
	own   *fakeOwn
	r     *Reader
}

func newEnv(t *testing.T, batch int, script ...reply) *env {
	e := &env{db: &fakeDB{t: t, script: script}, seq: sequencer.New(), marks: &fakeMarks{}, own: &fakeOwn{parts: []int{0}}}
	e.r = New(Config{Read: e.db.read, Seq: e.seq, Marks: e.marks, Own: e.own,
		Now: func() time.Time { return clock }, BatchSize: batch, MarkAhead: 2})
	return e
}

// next calls Next and fails unless it returns a batch of want.
func (e *env) next(t *testing.T, want ...int64) {
	t.Helper()
	recs, exit := e.r.Next(context.Background())
	if got := seqs(recs); !slices.Equal(got, want) {
		t.Fatalf("Next = %v (exit %v), want batch %v", got, exit.Reason, want)
	}
}

// end calls Next and fails unless the reads end for reason.
func (e *env) end(t *testing.T, reason Reason) Exit {
	t.Helper()
	recs, exit := e.r.Next(context.Background())
	if len(recs) > 0 || exit.Reason != reason {
		t.Fatalf("Next = %v, exit %v, want no batch and exit %v", seqs(recs), exit.Reason, reason)
	}
	return exit
}

// A full read from the start is followed by a read ahead past its batch,
// with the chain's partitions, clock and horizon; a read ahead that comes
// back short is followed by a read from the start (which would find a
// lower Seq that committed late).
func TestShortReadAheadReadsFromStart(t *testing.T) {
	e := newEnv(t, 2,
		reply{recs: []dialects.Record{rec(1, "a"), rec(2, "b")}, horizon: 9},
		reply{recs: []dialects.Record{rec(3, "c")}},
		reply{recs: []dialects.Record{rec(0, "late")}, horizon: 9},
	)
	e.next(t, 1, 2)
	e.r.Ended(nil)
	e.next(t, 3)
	e.r.Ended(nil)
	e.next(t, 0)
	e.r.Ended(nil)
	e.end(t, Short)
	if got, want := e.db.afters(), []int64{0, 2, 0}; !slices.Equal(got, want) {
		t.Fatalf("reads After %v, want %v", got, want)
	}
	ahead := e.db.reqs[1]
	if ahead.Horizon != 9 || !ahead.Now.Equal(clock) || !slices.Equal(ahead.Partitions, []int{0}) || ahead.Limit != 2 {
		t.Errorf("read ahead %+v, want the chain's partitions [0], clock, horizon 9 and limit 2", ahead)
	}
}

// An aggregate that failed in a batch stays held for the rest of the
// chain: a read ahead does not publish its later rows; the next read from
// the start does.
func TestFailedAggregateHeldUntilReadFromStart(t *testing.T) {
	e := newEnv(t, 2,
		reply{recs: []dialects.Record{rec(1, "a"), rec(2, "b")}, horizon: 9},
		reply{recs: []dialects.Record{rec(3, "a"), rec(4, "c")}},
		reply{recs: []dialects.Record{rec(5, "a")}},
		reply{recs: []dialects.Record{rec(3, "a")}, horizon: 9},
	)
	e.next(t, 1, 2)
	e.r.Ended(map[string]bool{"t\x00a": true})
	e.next(t, 4) // 3 is a's, behind the failure of 1
	e.r.Ended(nil)
	e.next(t, 3) // the short read ahead found only a's row 5; then the read from the start
	e.r.Ended(nil)
	e.end(t, Short)
	if got, want := e.db.afters(), []int64{0, 2, 4, 0}; !slices.Equal(got, want) {
		t.Fatalf("reads After %v, want %v", got, want)
	}
}

// A read ahead that came back less than half full turns reading ahead off
// until the reads end: a full batch is then followed by a read from the
// start. The next reads read ahead again.
func TestAheadOffAfterHalfEmptyReadAhead(t *testing.T) {
	full := []dialects.Record{rec(1, "a"), rec(2, "b"), rec(3, "c"), rec(4, "d")}
	e := newEnv(t, 4,
		reply{recs: full, horizon: 9},
		reply{recs: []dialects.Record{rec(5, "e")}}, // 1 of 4: ahead off
		reply{recs: []dialects.Record{rec(6, "f"), rec(7, "g"), rec(8, "h"), rec(9, "i")}, horizon: 9},
		reply{}, // the read from the start after the full batch
		reply{recs: full, horizon: 9},
		reply{}, // the read ahead, on again
		reply{},
	)
	e.next(t, 1, 2, 3, 4)
	e.r.Ended(nil)
	e.next(t, 5)
	e.r.Ended(nil)
	e.next(t, 6, 7, 8, 9)
	e.r.Ended(nil)
	e.end(t, Empty)
	if got, want := e.db.afters(), []int64{0, 4, 0, 0}; !slices.Equal(got, want) {
		t.Fatalf("reads After %v, want %v (no read ahead after a half-empty one)", got, want)
	}
	e.next(t, 1, 2, 3, 4)
	e.r.Ended(nil)
	e.end(t, Empty)
	if got, want := e.db.afters(), []int64{0, 4, 0, 0, 0, 4, 0}; !slices.Equal(got, want) {
		t.Fatalf("reads After %v, want %v (reading ahead on again after the reads ended)", got, want)
	}
}

// Partitions gained mid-chain: the chain's reads ahead still read its own
// partitions (the horizon says nothing of the new ones), the read from the
// start that follows reads them all, and the reads end with Gained, so
// that the run reads again at once. The next reads start without it.
func TestGainedPartitionsMidChain(t *testing.T) {
	e := newEnv(t, 2,
		reply{recs: []dialects.Record{rec(1, "a"), rec(2, "b")}, horizon: 9},
		reply{recs: []dialects.Record{rec(3, "c")}},
		reply{recs: []dialects.Record{rec(4, "d")}, horizon: 9},
		reply{},
	)
	e.next(t, 1, 2)
	e.own.next = []int{0, 1}
	e.r.Ended(nil)
	e.next(t, 3)
	e.r.Ended(nil)
	e.next(t, 4)
	e.r.Ended(nil)
	if exit := e.end(t, Short); !exit.Gained {
		t.Error("the reads ended without Gained after partitions were gained mid-chain")
	}
	if got, want := e.db.afters(), []int64{0, 2, 0}; !slices.Equal(got, want) {
		t.Fatalf("reads After %v, want %v", got, want)
	}
	if p := e.db.reqs[1].Partitions; !slices.Equal(p, []int{0}) {
		t.Errorf("read ahead read partitions %v, want the chain's [0]", p)
	}
	if p := e.db.reqs[2].Partitions; !slices.Equal(p, []int{0, 1}) {
		t.Errorf("read from the start read partitions %v, want [0 1]", p)
	}
	if exit := e.end(t, Empty); exit.Gained {
		t.Error("the next reads ended with Gained; nothing was gained during them")
	}
}

// Every partition lost: the reads end before any read.
func TestUnownedReadsNothing(t *testing.T) {
	e := newEnv(t, 2)
	e.own.parts = nil
	e.end(t, Unowned)
	if got := e.db.afters(); len(got) != 0 {
		t.Errorf("reads After %v with no partition owned, want none", got)
	}
}

// A chain that kept nothing since its read from the start (every row it
// found is published and waits for its mark) would find the same rows
// again: while rows wait for their marks, it waits for the marks and reads
// from the start; once none does, it stops.
func TestKeptNothingStopsWhenNothingWaitsForMarks(t *testing.T) {
	pub := []dialects.Record{rec(1, "a"), rec(2, "b"), rec(3, "c"), rec(4, "d")}
	e := newEnv(t, 2,
		reply{recs: pub, horizon: 9},
		reply{}, // read ahead
		reply{recs: pub[:2], horizon: 9},
	)
	e.seq.Published([]int64{1, 2, 3, 4})
	e.marks.unmarked = 2
	e.end(t, Idle)
	if got, want := e.db.afters(), []int64{0, 4, 0}; !slices.Equal(got, want) {
		t.Fatalf("reads After %v, want %v", got, want)
	}
	if e.marks.idles != 1 {
		t.Errorf("waited for the marks %d times, want once (rows waited for their marks after the first read only)", e.marks.idles)
	}
	if l := e.db.reqs[0].Limit; l != 4 {
		t.Errorf("read from the start with 2 rows unmarked asked for %d rows, want 2+2", l)
	}
	if l := e.db.reqs[2].Limit; l != 2 {
		t.Errorf("read from the start with no row unmarked asked for %d rows, want 2", l)
	}
}

// A chain that kept nothing because the hand-over lane has its rows stops,
// marks waiting or not: the hand-over lane wakes the read lane when done
// with them.
func TestKeptNothingStopsWhileHandOverHoldsRows(t *testing.T) {
	e := newEnv(t, 1,
		reply{recs: []dialects.Record{rec(1, "a"), rec(2, "a"), rec(3, "a")}, horizon: 9},
		reply{}, // read ahead
	)
	e.seq.TakeHandOver([]dialects.Record{rec(1, "a")}, func(int) bool { return true })
	e.marks.unmarked = 5
	e.end(t, Idle)
	if got, want := e.db.afters(), []int64{0, 3}; !slices.Equal(got, want) {
		t.Fatalf("reads After %v, want %v", got, want)
	}
	if e.marks.idles != 0 {
		t.Error("waited for the marks while the hand-over lane holds the rows")
	}
}

// A read that fails ends the reads with its error; the next reads start
// from the start.
func TestReadErrorEndsChain(t *testing.T) {
	boom := errors.New("boom")
	e := newEnv(t, 2,
		reply{err: boom},
		reply{recs: []dialects.Record{rec(1, "a"), rec(2, "b")}, horizon: 9},
		reply{err: boom}, // read ahead
		reply{},
	)
	if exit := e.end(t, ReadFailed); !errors.Is(exit.Err, boom) {
		t.Errorf("exit error %v, want boom", exit.Err)
	}
	if got := e.r.Covered(); !got.IsZero() {
		t.Errorf("Covered after a failed read from the start = %v, want zero", got)
	}
	e.next(t, 1, 2)
	if got := e.r.Covered(); !got.Equal(clock) {
		t.Errorf("Covered after a read from the start = %v, want its clock %v", got, clock)
	}
	e.r.Ended(nil)
	if exit := e.end(t, ReadFailed); !errors.Is(exit.Err, boom) {
		t.Errorf("exit error %v after a failed read ahead, want boom", exit.Err)
	}
	e.end(t, Empty)
	if got, want := e.db.afters(), []int64{0, 0, 2, 0}; !slices.Equal(got, want) {
		t.Fatalf("reads After %v, want %v", got, want)
	}
}

// Stop, after a batch whose publish says to stop, waits for the read ahead
// in flight: no goroutine outlives the reads.
func TestStopAwaitsReadAhead(t *testing.T) {
	e := newEnv(t, 2,
		reply{recs: []dialects.Record{rec(1, "a"), rec(2, "b")}, horizon: 9},
		reply{block: true}, // read ahead, until the run's context ends
		reply{},
	)
	ctx, cancel := context.WithCancel(context.Background())
	recs, _ := e.r.Next(ctx)
	if !slices.Equal(seqs(recs), []int64{1, 2}) {
		t.Fatalf("Next = %v, want [1 2]", seqs(recs))
	}
	e.r.Ended(map[string]bool{"t\x00a": true})
	cancel()
	if exit := e.r.Stop(); exit.Reason != Stopped || exit.Err != nil {
		t.Errorf("Stop = %+v, want Stopped with no error", exit)
	}
	if n := e.db.returned.Load(); n != 2 {
		t.Fatalf("%d reads returned when Stop returned, want 2 (the read ahead awaited)", n)
	}
	goleak.VerifyNone(t)
	e.end(t, Empty) // the next reads start from the start
	if got, want := e.db.afters(), []int64{0, 2, 0}; !slices.Equal(got, want) {
		t.Fatalf("reads After %v, want %v", got, want)
	}
}
