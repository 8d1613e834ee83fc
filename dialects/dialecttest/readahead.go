package dialecttest

import "testing"

// testReadAheadHoldsEarlierPending: a read ahead (After > 0) leaves out
// every aggregate with a pending row at or below After: a row in flight,
// or a lower seq that committed after the previous read. Otherwise a later
// row of that aggregate could be published first. A read from the start
// returns them all in seq order.
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
