package sequencer

import (
	"slices"
	"testing"

	"go.uber.org/goleak"

	"github.com/jitoutbox/jitoutbox/dialects"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// rec is a row of aggregate agg in partition 0.
func rec(seq int64, agg string) dialects.Record {
	r := dialects.Record{Seq: seq}
	r.AggregateType, r.AggregateID = "t", agg
	return r
}

func all(int) bool { return true }

func seqs(recs []dialects.Record) []int64 {
	var out []int64
	for _, r := range recs {
		out = append(out, r.Seq)
	}
	return out
}

// keep runs KeepRead with a fresh held set and no cap.
func keep(s *Sequencer, recs ...dialects.Record) []int64 {
	out, _, _ := s.KeepRead(recs, map[string]bool{}, len(recs)+1, all)
	return seqs(out)
}

// A handed-over row of an aggregate the read lane has in flight is
// dropped (left to the read lane); once the read lane's batch ended, it is
// taken.
func TestHandOverLeavesReadAggregates(t *testing.T) {
	s := New()
	if got := keep(s, rec(1, "a")); !slices.Equal(got, []int64{1}) {
		t.Fatalf("read kept %v, want [1]", got)
	}
	kept, dropped := s.TakeHandOver([]dialects.Record{rec(2, "a"), rec(3, "b")}, all)
	if !slices.Equal(seqs(kept), []int64{3}) || !dropped {
		t.Errorf("hand-over took %v dropped=%v, want [3] and dropped (a is in the read lane's batch)", seqs(kept), dropped)
	}
	s.EndRead()
	kept, dropped = s.TakeHandOver([]dialects.Record{rec(2, "a")}, all)
	if !slices.Equal(seqs(kept), []int64{2}) || dropped {
		t.Errorf("hand-over took %v dropped=%v after the read batch ended, want [2], not dropped", seqs(kept), dropped)
	}
}

// A read leaves alone the rows of an aggregate the hand-over lane has in
// flight, holds the aggregate for the rest of its chain, and is to be
// woken (once) when the hand-over batch ends.
func TestReadLeavesHandOverAggregates(t *testing.T) {
	s := New()
	batch, _ := s.TakeHandOver([]dialects.Record{rec(1, "a")}, all)
	held := map[string]bool{}
	out, _, _ := s.KeepRead([]dialects.Record{rec(1, "a"), rec(2, "a"), rec(3, "b")}, held, 10, all)
	if got := seqs(out); !slices.Equal(got, []int64{3}) {
		t.Errorf("read kept %v, want [3] (a is in the hand-over lane's batch)", got)
	}
	if !held[Key(&batch[0])] {
		t.Error("a not held for the rest of the chain")
	}
	if !s.ReadWaiting() {
		t.Error("ReadWaiting false after the read left rows to the hand-over lane")
	}
	s.EndRead()
	if !s.EndHandOver(batch) {
		t.Error("EndHandOver did not say to wake the waiting read lane")
	}
	if s.ReadWaiting() || s.EndHandOver(nil) {
		t.Error("the read lane is to be woken again without having left rows since")
	}
	if got := keep(s, rec(2, "a")); !slices.Equal(got, []int64{2}) {
		t.Errorf("read kept %v after the hand-over batch ended, want [2]", got)
	}
}

// A hand-over batch that the read lane did not wait for does not ask to
// wake it.
func TestEndHandOverWakesOnlyAWaitingRead(t *testing.T) {
	s := New()
	batch, _ := s.TakeHandOver([]dialects.Record{rec(1, "a")}, all)
	if got := keep(s, rec(2, "b")); !slices.Equal(got, []int64{2}) {
		t.Fatalf("read kept %v, want [2]", got)
	}
	if s.EndHandOver(batch) {
		t.Error("EndHandOver says to wake a read lane that left nothing")
	}
}

// Rows queued for the hand-over lane (not yet taken) are left to it, as
// many as were queued: the aggregate is free once each has been taken.
func TestReadLeavesQueuedAggregates(t *testing.T) {
	s := New()
	first, second := []dialects.Record{rec(1, "a")}, []dialects.Record{rec(2, "a")}
	s.Queue(first)
	s.Queue(second)
	if got := keep(s, rec(1, "a"), rec(3, "b")); !slices.Equal(got, []int64{3}) {
		t.Errorf("read kept %v, want [3] (a is queued)", got)
	}
	s.EndRead()
	s.Unqueue(first)
	if got := keep(s, rec(1, "a")); len(got) != 0 {
		t.Errorf("read kept %v with a row of a still queued, want none", got)
	}
	s.Unqueue(second)
	if !s.EndHandOver(nil) {
		t.Error("EndHandOver did not say to wake the read lane that left queued rows")
	}
	if got := keep(s, rec(1, "a")); !slices.Equal(got, []int64{1}) {
		t.Errorf("read kept %v once nothing of a is queued, want [1]", got)
	}
}

// While a critical read is watched, the aggregates of read batches that
// end are left to the read lane: the critical read's snapshot may hold a
// row such a batch published (and failed) meanwhile. Outside a watch they
// are not remembered.
func TestCriticalWatchLeavesEndedReadAggregates(t *testing.T) {
	s := New()
	s.BeginCritical()
	keep(s, rec(1, "a"))
	s.EndRead()
	kept, dropped := s.TakeHandOver([]dialects.Record{rec(1, "a"), rec(2, "b")}, all)
	if !slices.Equal(seqs(kept), []int64{2}) || !dropped {
		t.Errorf("hand-over took %v dropped=%v during the watch, want [2] and dropped", seqs(kept), dropped)
	}
	s.EndHandOver(kept)
	s.EndCritical()
	if kept, _ := s.TakeHandOver([]dialects.Record{rec(1, "a")}, all); !slices.Equal(seqs(kept), []int64{1}) {
		t.Errorf("hand-over took %v after the watch, want [1]", seqs(kept))
	}

	s = New()
	keep(s, rec(1, "a"))
	s.EndRead()
	s.BeginCritical()
	if kept, _ := s.TakeHandOver([]dialects.Record{rec(1, "a")}, all); !slices.Equal(seqs(kept), []int64{1}) {
		t.Errorf("hand-over took %v, want [1]: the read batch ended before the watch", seqs(kept))
	}
}

// Published seqs are skipped by both lanes until their mark fails.
func TestRecentSkipsPublished(t *testing.T) {
	s := New()
	s.Published([]int64{1, 2})
	if got := keep(s, rec(1, "a"), rec(2, "b"), rec(3, "c")); !slices.Equal(got, []int64{3}) {
		t.Errorf("read kept %v, want [3]", got)
	}
	s.EndRead()
	kept, dropped := s.TakeHandOver([]dialects.Record{rec(1, "a")}, all)
	if len(kept) != 0 || dropped {
		t.Errorf("hand-over took %v dropped=%v, want none, not dropped (published already)", seqs(kept), dropped)
	}
	s.EndHandOver(kept)
	s.MarkFailed([]int64{1})
	if got := keep(s, rec(1, "a"), rec(2, "b")); !slices.Equal(got, []int64{1}) {
		t.Errorf("read kept %v after 1's mark failed, want [1]", got)
	}
}

// A new session forgets every published seq.
func TestNewSessionForgets(t *testing.T) {
	s := New()
	s.Published([]int64{1, 2})
	s.NewSession()
	if got := keep(s, rec(1, "a"), rec(2, "b")); !slices.Equal(got, []int64{1, 2}) {
		t.Errorf("read kept %v after a new session, want [1 2]", got)
	}
	s.EndRead()
	s.Published([]int64{3})
	if got := keep(s, rec(3, "c")); len(got) != 0 {
		t.Errorf("read kept %v, want none: 3 was published in the new session", got)
	}
}

// At most RecentSeqs seqs are remembered: the oldest go first.
func TestRecentIsBounded(t *testing.T) {
	s := New()
	published := make([]int64, RecentSeqs+1)
	for i := range published {
		published[i] = int64(i + 1)
	}
	s.Published(published[:RecentSeqs])
	s.Published(published[RecentSeqs:])
	if got := keep(s, rec(1, "a"), rec(2, "b"), rec(int64(RecentSeqs+1), "c")); !slices.Equal(got, []int64{1}) {
		t.Errorf("read kept %v, want [1] (the oldest forgotten, the rest remembered)", got)
	}
}

// Past the bound, in batches of any size and across a new session, the
// last RecentSeqs seqs published are remembered and no older one.
func TestRecentKeepsTheLast(t *testing.T) {
	s := New()
	check := func(last int64) {
		t.Helper()
		first := max(last-RecentSeqs+1, 1)
		for _, q := range []int64{first - 1, first, first + 1, last - 1, last} {
			if q < 1 || q > last {
				continue
			}
			_, got := s.recent[q]
			if want := q >= first; got != want {
				t.Fatalf("after %d published: seq %d remembered %v, want %v", last, q, got, want)
			}
		}
		if len(s.recent) != int(last-first+1) {
			t.Fatalf("after %d published: %d seqs remembered, want %d", last, len(s.recent), last-first+1)
		}
	}
	next := int64(1)
	publish := func(n int) {
		seqs := make([]int64, n)
		for i := range seqs {
			seqs[i] = next
			next++
		}
		s.Published(seqs)
		check(next - 1)
	}
	for _, n := range []int{1, 500, RecentSeqs - 100, 1, 1, 333, RecentSeqs, 2*RecentSeqs + 7, 1} {
		publish(n)
	}
	s.NewSession()
	if len(s.recent) != 0 {
		t.Fatalf("a new session remembers %d seqs", len(s.recent))
	}
	base := next - 1
	for _, n := range []int{RecentSeqs - 1, 3, RecentSeqs + 5} {
		seqs := make([]int64, n)
		for i := range seqs {
			seqs[i] = next
			next++
		}
		s.Published(seqs)
		last := next - 1
		want := min(last-base, RecentSeqs)
		if len(s.recent) != int(want) {
			t.Fatalf("new session, after %d published: %d remembered, want %d", last-base, len(s.recent), want)
		}
		if _, ok := s.recent[last-want+1]; !ok {
			t.Fatalf("new session: seq %d forgotten", last-want+1)
		}
	}
}

// KeepRead skips held aggregates and partitions not owned, keeps at most
// max rows and reports how far it looked.
func TestKeepReadHeldOwnedAndCut(t *testing.T) {
	s := New()
	recs := []dialects.Record{rec(1, "a"), rec(2, "held"), rec(3, "b"), rec(4, "c"), rec(5, "d")}
	recs[2].Partition = 1
	held := map[string]bool{Key(&recs[1]): true}
	out, bound, cut := s.KeepRead(recs, held, 2, func(p int) bool { return p == 0 })
	if got := seqs(out); !slices.Equal(got, []int64{1, 4}) || bound != 4 || !cut {
		t.Errorf("KeepRead = %v bound %d cut %v, want [1 4] bound 4 cut", got, bound, cut)
	}
	s.EndRead()
	out, bound, cut = s.KeepRead(recs[3:], map[string]bool{}, 5, all)
	if got := seqs(out); !slices.Equal(got, []int64{4, 5}) || bound != 5 || cut {
		t.Errorf("KeepRead = %v bound %d cut %v, want [4 5] bound 5, not cut", got, bound, cut)
	}
	s.EndRead()
	// Only the kept rows' aggregates are in flight: the hand-over lane
	// takes a skipped one's rows.
	s.KeepRead(recs[:2], held, 5, all)
	kept, _ := s.TakeHandOver([]dialects.Record{rec(6, "held")}, all)
	if !slices.Equal(seqs(kept), []int64{6}) {
		t.Errorf("hand-over took %v, want [6]", seqs(kept))
	}
}

// The hand-over lane leaves rows of partitions not owned without counting
// them as dropped: their new owner reads them.
func TestTakeHandOverSkipsUnowned(t *testing.T) {
	s := New()
	r := rec(1, "a")
	r.Partition = 3
	kept, dropped := s.TakeHandOver([]dialects.Record{r}, func(p int) bool { return p != 3 })
	if len(kept) != 0 || dropped {
		t.Errorf("took %v dropped=%v, want none, not dropped", seqs(kept), dropped)
	}
	if got := keep(s, rec(2, "a")); !slices.Equal(got, []int64{2}) {
		t.Errorf("read kept %v, want [2]: nothing of a is in flight", got)
	}
}

// A row of a partition not owned holds its aggregate for the rest of the
// chain: the partition may be taken back before the chain ends, and a
// later row of the aggregate, read ahead then, must not pass it.
func TestKeepReadHoldsAggregatesOfPartitionsNotOwned(t *testing.T) {
	s := New()
	a0, b1 := rec(10, "a"), rec(11, "b")
	b1.Partition = 1
	held := map[string]bool{}
	out, _, _ := s.KeepRead([]dialects.Record{a0, b1}, held, 10, func(p int) bool { return p == 1 })
	if got := seqs(out); !slices.Equal(got, []int64{11}) {
		t.Fatalf("kept %v, want [11]: partition 0 is not owned", got)
	}
	s.EndRead()
	out, _, _ = s.KeepRead([]dialects.Record{rec(20, "a"), rec(21, "c")}, held, 10, all)
	if got := seqs(out); !slices.Equal(got, []int64{21}) {
		t.Errorf("kept %v once partition 0 is back, want [21]: seq 20 of a would pass seq 10", got)
	}
}
