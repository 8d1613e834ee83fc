package dialecttest

import (
	"testing"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
)

// testFencing: Mark and Fail change only rows of partitions the token owns
// at the time of the statement.
func testFencing(t *testing.T, tgt Target) {
	e := setup(t, tgt)
	a := e.own("a")
	b := e.session("b")
	xa, ya := e.aggIn(0, 1, "x")[0], e.aggIn(1, 1, "y")[0]
	evs := e.events(xa, ya, xa)
	e.insert(evs...)
	r := e.readAll(0)

	// A token that owns nothing changes nothing.
	for _, tok := range []string{b.Token(), "nobody", ""} {
		n, err := e.d.Mark(e.ctx, e.db, dialects.Mark{Token: tok, Seqs: seqs(r), At: e.at(0)})
		wantN(t, "Mark by "+tok, n, err, 0)
		n, err = e.d.Mark(e.ctx, e.db, dialects.Mark{Token: tok, Seqs: seqs(r), Delete: true})
		wantN(t, "Mark Delete by "+tok, n, err, 0)
		e.fail(tok, e.failure(r[0], "no", time.Hour, true, true), e.failure(r[1], "no", time.Hour, false, true))
	}
	for _, rec := range r {
		if att, st, le := e.row(rec.Seq); att != 0 || st != dialects.StatePending || le.Valid {
			t.Fatalf("seq %d after a non-owner's Fail: attempts %d state %d error %q", rec.Seq, att, st, le.String)
		}
	}
	wantIDs(t, "no block from a non-owner", e.readAll(0), evs...)
	if s := e.stats(); s.Pending != 3 || s.Dead != 0 || s.Published != 0 {
		t.Fatalf("stats after non-owners: %+v", s)
	}

	// Takeover of partition 0: a's token no longer marks or fails there,
	// but still does in partition 1.
	if err := a.Release(e.ctx, []int{0}); err != nil {
		t.Fatal(err)
	}
	wantParts(t, "b takes 0", e.take(b, []int{0}, 0), 0)
	if n := e.mark(a.Token(), seqs(r), 0); n != 1 {
		t.Fatalf("old owner's Mark after takeover: %d rows, want 1 (its partition 1 only)", n)
	}
	e.fail(a.Token(), e.failure(r[0], "stale", time.Hour, true, true))
	if att, st, _ := e.row(r[0].Seq); att != 0 || st != dialects.StatePending {
		t.Fatalf("old owner's Fail after takeover: attempts %d state %d", att, st)
	}
	// The fence is the row's partition, not the one the failure names.
	lie := e.failure(r[0], "stale", time.Hour, true, true)
	lie.Partition = 1
	e.fail(a.Token(), lie)
	if att, st, _ := e.row(r[0].Seq); att != 0 || st != dialects.StatePending {
		t.Fatalf("old owner's Fail naming a partition it owns: attempts %d state %d", att, st)
	}
	wantIDs(t, "partition 0 after takeover", e.read([]int{0}, 0, 10, 0), evs[0], evs[2])
	if n := e.mark(b.Token(), []int64{r[0].Seq, r[2].Seq}, 0); n != 2 {
		t.Fatalf("new owner's Mark: %d rows, want 2", n)
	}
	// A retry block is not removed by a non-owner's Unblock.
	more := e.events(ya, ya)
	e.insert(more...)
	got := e.read([]int{1}, 0, 10, 0)
	wantIDs(t, "partition 1", got, more...)
	e.fail(a.Token(), e.failure(got[0], "retry", time.Minute, false, true))
	n, err := e.d.Mark(e.ctx, e.db, dialects.Mark{Token: b.Token(), Seqs: seqs(got[:1]), Unblock: seqs(got[:1]), At: e.at(0)})
	wantN(t, "Mark with Unblock by a non-owner", n, err, 0)
	wantIDs(t, "still blocked", e.read([]int{1}, 0, 10, 30*time.Second))
}

func testMarkDeleteUnblock(t *testing.T, tgt Target) {
	e := setup(t, tgt)
	s := e.own("r")
	e.insert(e.events("a", "b", "c", "d")...)
	r := e.readAll(0)
	tok := s.Token()

	n, err := e.d.Mark(e.ctx, e.db, dialects.Mark{Token: tok, At: e.at(0)})
	wantN(t, "Mark of nothing", n, err, 0)
	n, err = e.d.Mark(e.ctx, e.db, dialects.Mark{Token: tok, Delete: true})
	wantN(t, "Delete of nothing", n, err, 0)
	if n := e.mark(tok, seqs(r[:1]), time.Second); n != 1 {
		t.Fatalf("Mark: %d", n)
	}
	if n := e.mark(tok, seqs(r[:1]), time.Second); n != 0 {
		t.Fatalf("Mark twice: %d", n)
	}
	n, err = e.d.Mark(e.ctx, e.db, dialects.Mark{Token: tok, Seqs: seqs(r[:2]), Delete: true})
	wantN(t, "Delete (one published, one pending)", n, err, 1)
	n, err = e.d.Mark(e.ctx, e.db, dialects.Mark{Token: tok, Seqs: seqs(r[1:2]), Delete: true})
	wantN(t, "Delete twice", n, err, 0)
	e.fail(tok, e.failure(r[2], "dead", 0, true, false))
	n, err = e.d.Mark(e.ctx, e.db, dialects.Mark{Token: tok, Seqs: seqs(r[2:3]), At: e.at(0)})
	wantN(t, "Mark of a dead row", n, err, 0)
	if st := e.stats(); st.Pending != 1 || st.Published != 1 || st.Dead != 1 {
		t.Fatalf("stats %+v, want 1 pending, 1 published, 1 dead", st)
	}
	g, err := e.d.Get(e.ctx, e.db, r[0].ID)
	if err != nil || g.State != dialects.StatePublished || !g.PublishedAt.Equal(e.at(time.Second)) {
		t.Fatalf("published row: %+v, %v", g, err)
	}
	if _, err := e.d.Get(e.ctx, e.db, r[1].ID); err == nil {
		t.Fatal("deleted row still found")
	}
	wantIDs(t, "left", e.readAll(0), r[3].Event)

	// Delete with Unblock removes the retry block of a retried row.
	evs := e.events("u", "u")
	e.insert(evs...)
	u := e.readAll(0)[1:]
	wantIDs(t, "u", u, evs...)
	e.fail(tok, e.failure(u[0], "retry", time.Minute, false, true))
	wantIDs(t, "u blocked", e.readAll(0), r[3].Event)
	n, err = e.d.Mark(e.ctx, e.db, dialects.Mark{Token: tok, Seqs: seqs(u[:1]), Unblock: seqs(u[:1]), Delete: true})
	wantN(t, "Delete with Unblock", n, err, 1)
	wantIDs(t, "u unblocked", e.readAll(0), r[3].Event, evs[1])
}
