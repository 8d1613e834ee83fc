package dialecttest

import (
	"testing"

	"github.com/jitoutbox/jitoutbox/dialects"
)

// testReadAheadHoldsEarlierPending: a read ahead (After > 0) with no
// horizon leaves out every aggregate with a pending row at or below After:
// a row in flight, or a lower seq that committed after the previous read.
// Otherwise a later row of that aggregate could be published first. A
// read from the start returns them all in seq order.
func testReadAheadHoldsEarlierPending(t *testing.T, tgt Target) {
	e := setup(t, tgt)
	e.own("r")
	evs := e.events("X", "Y", "X", "Z")
	e.insert(evs...)
	all := e.readAll(0)
	wantIDs(t, "from the start", all, evs...)
	after := all[1].Seq // Y: X's first row (below it) is still pending
	wantIDs(t, "ahead of Y", e.read(e.all(), after, 10, 0), evs[3])
	wantIDs(t, "ahead of the last X", e.read(e.all(), all[2].Seq, 10, 0), evs[3])
	wantIDs(t, "ahead of nothing pending below", e.read(e.all(), all[0].Seq-1, 10, 0), evs...)
}

// testReadHorizon: a read from the start returns its horizon, the highest
// seq committed in any state and any partition (not only the highest it
// returned); a read ahead given that horizon returns the rows at or below
// it without looking for an earlier pending row of their aggregate, and
// still leaves out a row above it (one that took its seq after the read
// from the start) whose aggregate has a pending row at or below After.
// Blocks still apply below the horizon.
func testReadHorizon(t *testing.T, tgt Target) {
	e := setup(t, tgt)
	s := e.own("r")
	if res := e.readReq(dialects.ReadRequest{Partitions: e.all(), Limit: 10}, 0); len(res.Records) != 0 {
		t.Fatalf("empty table: read %d rows", len(res.Records))
	}
	evs := e.events("X", "Y", "X", "Z")
	e.insert(evs...)
	first := e.readAll(0)
	wantIDs(t, "from the start", first, evs...)

	// The horizon covers rows the read does not return: of partitions it
	// was not asked for, and published ones.
	late := e.events("W")
	e.insert(late...)
	lateRec := e.readAll(0)[4]
	if n := e.mark(s.Token(), []int64{lateRec.Seq}, 0); n != 1 {
		t.Fatalf("mark W: %d rows", n)
	}
	zPart := first[3].Partition
	res := e.readReq(dialects.ReadRequest{Partitions: []int{zPart}, Limit: 10}, 0)
	if res.Horizon != lateRec.Seq {
		t.Fatalf("read of partition %d: horizon %d, want %d (the published W, the highest seq)", zPart, res.Horizon, lateRec.Seq)
	}

	res = e.readReq(dialects.ReadRequest{Partitions: e.all(), Limit: 10}, 0)
	horizon := res.Horizon
	if horizon != lateRec.Seq {
		t.Fatalf("horizon %d, want %d", horizon, lateRec.Seq)
	}
	after := first[1].Seq // Y; X's first row, below it, is pending
	ahead := func(name string, after, horizon int64, want ...dialects.Event) {
		t.Helper()
		got := e.readReq(dialects.ReadRequest{Partitions: e.all(), After: after, Horizon: horizon, Limit: 10}, 0).Records
		wantIDs(t, name, got, want...)
	}
	ahead("ahead of Y within the horizon", after, horizon, evs[2], evs[3])

	// X's next row takes its seq after the read from the start: above the
	// horizon, it is left out while X's first row is pending; a new
	// aggregate's row above the horizon is not.
	next := e.events("X", "V")
	e.insert(next...)
	ahead("ahead of Y, a row of X above the horizon", after, horizon, evs[2], evs[3], next[1])
	ahead("the same read ahead with no horizon", after, 0, evs[3], next[1])

	// A dead row blocks its aggregate's later rows below the horizon too.
	e.fail(s.Token(), e.failure(first[0], "poison", 0, true, true))
	ahead("ahead of Y, X dead", after, horizon, evs[3], next[1])

	// With a block in its partitions, a read from the start gives no
	// horizon (the block may go while its reads ahead run, and the rows
	// behind it were not read); partitions without one still get it.
	if res := e.readReq(dialects.ReadRequest{Partitions: e.all(), Limit: 10}, 0); res.Horizon != 0 || len(res.Records) == 0 {
		t.Fatalf("read with X's dead block in its partitions: horizon %d, %d rows; want 0 and rows", res.Horizon, len(res.Records))
	}
	var others []int
	for _, p := range e.all() {
		if p != first[0].Partition {
			others = append(others, p)
		}
	}
	var top int64 // V's row: the highest seq
	for _, r := range e.readAll(0) {
		if r.ID == next[1].ID {
			top = r.Seq
		}
	}
	if res := e.readReq(dialects.ReadRequest{Partitions: others, Limit: 10}, 0); top == 0 || res.Horizon != top {
		t.Fatalf("read of the partitions without a block: horizon %d, want %d", res.Horizon, top)
	}
}
