package dialecttest

import (
	"testing"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
)

func testReadPartitionsOrderLimit(t *testing.T, tgt Target) {
	e := setup(t, tgt)
	s := e.own("r")
	p0, p1, p2 := e.aggIn(0, 2, "p0-"), e.aggIn(1, 1, "p1-"), e.aggIn(2, 1, "p2-")
	evs := e.events(p0[0], p1[0], p0[1], p2[0], p0[0])
	beforeInsert := e.now()
	e.insert(evs...)
	a, b, c, d, x := evs[0], evs[1], evs[2], evs[3], evs[4]

	wantIDs(t, "partition 0", e.read([]int{0}, 0, 10, 0), a, c, x)
	wantIDs(t, "partitions 2, 1", e.read([]int{2, 1}, 0, 10, 0), b, d)
	wantIDs(t, "partition 3", e.read([]int{3}, 0, 10, 0))
	wantIDs(t, "no partitions", e.read(nil, 0, 10, 0))
	all := e.read([]int{0, 1, 2}, 0, 10, 0)
	wantIDs(t, "partitions 0-2", all, a, b, c, d, x)
	wantIDs(t, "limit 2", e.read([]int{0, 1, 2}, 0, 2, 0), a, b)
	// x's aggregate has a (seq below b) pending: a read ahead leaves it out.
	wantIDs(t, "after b", e.read([]int{0, 1, 2}, all[1].Seq, 10, 0), c, d)
	wantIDs(t, "after b, limit 1", e.read([]int{0, 1, 2}, all[1].Seq, 1, 0), c)
	if recs, err := e.d.Read(e.ctx, e.db, dialects.ReadRequest{Partitions: e.all(), Limit: 0, Now: e.at(0)}); err != nil || len(recs.Records) != 0 {
		t.Fatalf("Read limit 0: %d rows, %v", len(recs.Records), err)
	}
	// A clock behind the inserts (a relay's idea of the database's time
	// lags it): rows never tried were due at their INSERT, so they are due
	// all the same, from the start and ahead.
	behind := beforeInsert.Add(-time.Microsecond)
	wantIDs(t, "clock behind the inserts", e.readAbs(behind), a, b, c, d, x)
	ahead, err := e.d.Read(e.ctx, e.db, dialects.ReadRequest{Partitions: []int{0, 1, 2}, After: all[1].Seq, Limit: 10, Now: behind})
	if err != nil {
		t.Fatalf("Read ahead: %v", err)
	}
	wantIDs(t, "ahead, clock behind the inserts", ahead.Records, c, d)
	// Read writes nothing: it is the same again; published and dead rows
	// are left out.
	wantIDs(t, "again", e.readAll(0), a, b, c, d, x)
	if n := e.mark(s.Token(), []int64{all[0].Seq}, 0); n != 1 {
		t.Fatalf("Mark: %d", n)
	}
	e.fail(s.Token(), e.failure(all[3], "x", 0, true, false))
	wantIDs(t, "without published and dead rows", e.readAll(0), b, c, x)
}

// testReadLateCommit: a lower seq that commits after a higher one is read,
// even after the higher one was published.
func testReadLateCommit(t *testing.T, tgt Target) {
	if tgt.SerialWriters {
		t.Skip("one write transaction at a time: seqs commit in order")
	}
	e := setup(t, tgt)
	s := e.own("r")
	first, second := e.event("agg", "a"), e.event("agg", "b")
	tx1, err := e.db.BeginTx(e.ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx1.Rollback() //nolint:errcheck // no-op after Commit
	if err := e.d.Insert(e.ctx, tx1, []dialects.Event{first}); err != nil {
		t.Fatalf("Insert: %v", err)
	}
	e.insert(second)
	got := e.readAll(0)
	wantIDs(t, "before the lower seq commits", got, second)
	if n := e.mark(s.Token(), seqs(got), 0); n != 1 {
		t.Fatalf("Mark: %d", n)
	}
	if err := tx1.Commit(); err != nil {
		t.Fatal(err)
	}
	late := e.readAll(0)
	wantIDs(t, "after the lower seq commits", late, first)
	if late[0].Seq >= got[0].Seq {
		t.Fatalf("the late row has seq %d, not lower than %d", late[0].Seq, got[0].Seq)
	}
	wantIDs(t, "read ahead past the published row", e.read(e.all(), 0, 10, 0), first)

	// Both uncommitted at first, the higher committed first: a Read after
	// both commits returns both in Seq order.
	third, fourth := e.event("agg", "c"), e.event("agg", "d")
	tx3, err := e.db.BeginTx(e.ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx3.Rollback() //nolint:errcheck // no-op after Commit
	if err := e.d.Insert(e.ctx, tx3, []dialects.Event{third}); err != nil {
		t.Fatal(err)
	}
	tx4, err := e.db.BeginTx(e.ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx4.Rollback() //nolint:errcheck // no-op after Commit
	if err := e.d.Insert(e.ctx, tx4, []dialects.Event{fourth}); err != nil {
		t.Fatal(err)
	}
	if err := tx4.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := tx3.Commit(); err != nil {
		t.Fatal(err)
	}
	wantIDs(t, "both committed", e.readAll(0), first, third, fourth)
}

// testReadBlocks: a retry block holds the later rows of its aggregate until
// due, a dead block until requeued or skipped, a dead row without a block
// holds nothing, and other aggregates flow.
func testReadBlocks(t *testing.T, tgt Target) {
	e := setup(t, tgt)
	s := e.own("r")
	evs := e.events("R", "R", "D", "D", "N", "N", "O", "R")
	e.insert(evs...)
	r := e.readAll(0)
	wantIDs(t, "all", r, evs...)
	e.fail(s.Token(),
		e.failure(r[0], "retry", time.Minute, false, true),
		e.failure(r[2], "dead", 0, true, true),
		e.failure(r[4], "dead, released", 0, true, false),
	)
	wantIDs(t, "blocked", e.readAll(0), evs[5], evs[6])
	wantIDs(t, "just before the retry", e.readAll(time.Minute-time.Microsecond), evs[5], evs[6])
	got := e.readAll(time.Minute)
	wantIDs(t, "retry due", got, evs[0], evs[1], evs[5], evs[6], evs[7])
	if got[0].Attempts != 1 || got[1].Attempts != 0 {
		t.Fatalf("attempts: retried row %d, next row %d", got[0].Attempts, got[1].Attempts)
	}
	wantIDs(t, "dead block holds", e.readAll(100*time.Hour), evs[0], evs[1], evs[5], evs[6], evs[7])
	// A second failure moves the retry block.
	e.fail(s.Token(), e.failure(got[0], "again", 5*time.Minute, false, true))
	wantIDs(t, "retry moved", e.readAll(2*time.Minute), evs[5], evs[6])
	if att, st, le := e.row(got[0].Seq); att != 2 || st != dialects.StatePending || le.String != "again" {
		t.Fatalf("after the second failure: attempts %d state %d error %q", att, st, le.String)
	}
	// Published with Unblock: the rest of the aggregate flows at once.
	n, err := e.d.Mark(e.ctx, e.db, dialects.Mark{Token: s.Token(), Seqs: []int64{got[0].Seq}, Unblock: []int64{got[0].Seq}, At: e.at(2 * time.Minute)})
	wantN(t, "Mark with Unblock", n, err, 1)
	wantIDs(t, "unblocked", e.readAll(2*time.Minute), evs[1], evs[5], evs[6], evs[7])
	// Blocks are per aggregate, not per partition: an aggregate in the
	// dead one's partition flows.
	pd := dialects.PartitionOf("agg", "D", e.parts)
	other := e.event("agg", e.aggIn(pd, 1, "same-part-")[0])
	e.insert(other)
	got = e.read([]int{pd}, 0, 10, 2*time.Minute)
	if !containsID(got, other.ID) || containsID(got, evs[3].ID) {
		t.Fatalf("partition of the dead block: read %q", ids(got))
	}
}
