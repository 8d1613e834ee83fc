package dialecttest

import (
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/dialects/internal/sqlkit"
)

func testFailAndDead(t *testing.T, tgt Target) {
	e := setup(t, tgt)
	s := e.own("r")
	tok := s.Token()
	e.insert(e.events("a", "b")...)
	r := e.readAll(0)
	if err := e.d.Fail(e.ctx, e.db, tok, nil); err != nil {
		t.Fatalf("Fail of nothing: %v", err)
	}
	long := strings.Repeat("é", 3000) // 6000 bytes of two-byte runes
	e.fail(tok,
		e.failure(r[0], "first", time.Minute, false, true),
		e.failure(r[1], long+"\xff", time.Minute, false, true),
	)
	att, st, le := e.row(r[0].Seq)
	if att != 1 || st != dialects.StatePending || le.String != "first" {
		t.Fatalf("after Fail: attempts %d state %d error %q", att, st, le.String)
	}
	_, _, le = e.row(r[1].Seq)
	if len(le.String) > sqlkit.MaxErrorBytes || len(le.String) < sqlkit.MaxErrorBytes-4 || !utf8.ValidString(le.String) {
		t.Fatalf("long error stored as %d bytes, valid UTF-8 %v", len(le.String), utf8.ValidString(le.String))
	}
	wantAggs(t, "backing off", e.readAll(time.Minute-time.Microsecond))
	r = e.readAll(time.Minute)
	wantAggs(t, "retry", r, "a", "b")
	if r[0].Attempts != 1 {
		t.Fatalf("attempts on retry: %d", r[0].Attempts)
	}
	e.fail(tok, e.failure(r[0], "fatal", 2*time.Minute, true, true))
	att, st, le = e.row(r[0].Seq)
	if att != 2 || st != dialects.StateDead || le.String != "fatal" {
		t.Fatalf("dead row: attempts %d state %d error %q", att, st, le.String)
	}
	if s := e.stats(); s.Dead != 1 || s.Pending != 1 {
		t.Fatalf("stats %+v, want 1 dead 1 pending", s)
	}
	wantAggs(t, "dead never read", e.readAll(100*time.Hour), "b")
	// Failing a row that is not pending changes nothing.
	e.fail(tok, e.failure(r[0], "again", time.Hour, false, true))
	if att, st, le := e.row(r[0].Seq); att != 2 || st != dialects.StateDead || le.String != "fatal" {
		t.Fatalf("Fail of a dead row changed it: attempts %d state %d error %q", att, st, le.String)
	}
}

// testDeadBlockRequeueSkip: a dead row with a block holds the later rows
// of its aggregate until an operator requeues it (then it comes first) or
// skips it (it stays dead, the rest flows).
func testDeadBlockRequeueSkip(t *testing.T, tgt Target) {
	e := setup(t, tgt)
	s := e.own("r")
	tok := s.Token()
	evs := e.events("A", "A", "B", "B", "C", "D", "E", "E")
	e.insert(evs...)
	r := e.readAll(0)
	e.fail(tok,
		e.failure(r[0], "dead A", 0, true, true),
		e.failure(r[2], "dead B", 0, true, true),
		e.failure(r[4], "dead C", 0, true, true),
		e.failure(r[5], "dead D", 0, true, true),
		e.failure(r[6], "dead E", 0, true, true),
	)
	wantIDs(t, "dead blocks hold", e.readAll(1000*time.Hour))

	// Requeue: the dead row comes back first, then the rest, in order.
	n, err := e.d.Requeue(e.ctx, e.db, dialects.RequeueFilter{AggregateType: "agg", AggregateID: "A"}, e.at(time.Hour))
	wantN(t, "Requeue A", n, err, 1)
	// Due at once, whatever the reader's clock: a requeued row a relay saw
	// as not yet due, its block gone, would let A's later rows pass it.
	wantIDs(t, "requeued A due at once, first", e.readAll(0), evs[0], evs[1])
	got := e.readAll(time.Hour)
	wantIDs(t, "requeued A first", got, evs[0], evs[1])
	if got[0].Attempts != 0 {
		t.Fatalf("requeued row attempts %d", got[0].Attempts)
	}

	// Skip: the dead row stays dead; the rest of its aggregate flows.
	n, err = e.d.Skip(e.ctx, e.db, dialects.RequeueFilter{IDs: []string{evs[2].ID, "00000000-0000-7000-8000-000000000000"}})
	wantN(t, "Skip B", n, err, 1)
	n, err = e.d.Skip(e.ctx, e.db, dialects.RequeueFilter{IDs: []string{evs[2].ID}})
	wantN(t, "Skip B again", n, err, 0)
	wantIDs(t, "B flows", e.readAll(time.Hour), evs[0], evs[1], evs[3])
	if _, st, _ := e.row(r[2].Seq); st != dialects.StateDead {
		t.Fatalf("skipped row state %d, want dead", st)
	}
	n, err = e.d.Skip(e.ctx, e.db, dialects.RequeueFilter{AggregateType: "agg", AggregateID: "E"})
	wantN(t, "Skip aggregate E", n, err, 1)
	n, err = e.d.Skip(e.ctx, e.db, dialects.RequeueFilter{AggregateType: "other", AggregateID: "C"})
	wantN(t, "Skip aggregate of another type", n, err, 0)
	n, err = e.d.Skip(e.ctx, e.db, dialects.RequeueFilter{All: true})
	wantN(t, "Skip all (C and D)", n, err, 2)
	wantIDs(t, "all flow", e.readAll(time.Hour), evs[0], evs[1], evs[3], evs[7])
	if st := e.stats(); st.Dead != 4 || st.Pending != 4 {
		t.Fatalf("stats %+v, want 4 dead 4 pending", st)
	}
	for _, f := range invalidFilters(evs[0].ID) {
		if _, err := e.d.Skip(e.ctx, e.db, f); !errors.Is(err, dialects.ErrInvalidRequeueFilter) {
			t.Fatalf("Skip(%+v): err %v, want ErrInvalidRequeueFilter", f, err)
		}
	}
}

func invalidFilters(id string) []dialects.RequeueFilter {
	return []dialects.RequeueFilter{
		{},
		{IDs: []string{id}, All: true},
		{AggregateType: "agg", AggregateID: "a", All: true},
		{IDs: []string{id}, AggregateType: "agg", AggregateID: "a"},
		{AggregateType: "agg"},
		{AggregateID: "a"},
	}
}

func testRequeue(t *testing.T, tgt Target) {
	e := setup(t, tgt)
	s := e.own("r")
	evs := e.events("a", "b", "c", "d")
	evs[1].AggregateType = "other"
	evs[1].Partition = dialects.PartitionOf("other", "b", e.parts)
	e.insert(evs...)
	r := e.readAll(0)
	var fs []dialects.Failure
	for _, rec := range r {
		fs = append(fs, e.failure(rec, "dead "+rec.AggregateID, time.Hour, true, true))
	}
	e.fail(s.Token(), fs...)

	for _, f := range invalidFilters(evs[0].ID) {
		if _, err := e.d.Requeue(e.ctx, e.db, f, e.at(0)); !errors.Is(err, dialects.ErrInvalidRequeueFilter) {
			t.Fatalf("Requeue(%+v): err %v, want ErrInvalidRequeueFilter", f, err)
		}
	}
	if st := e.stats(); st.Dead != 4 {
		t.Fatalf("invalid filters changed rows: %+v", st)
	}

	now := 2 * time.Hour
	n, err := e.d.Requeue(e.ctx, e.db, dialects.RequeueFilter{IDs: []string{evs[0].ID, "00000000-0000-7000-8000-000000000000"}}, e.at(now))
	wantN(t, "Requeue IDs", n, err, 1)
	n, err = e.d.Requeue(e.ctx, e.db, dialects.RequeueFilter{AggregateType: "other", AggregateID: "b"}, e.at(now))
	wantN(t, "Requeue aggregate", n, err, 1)
	n, err = e.d.Requeue(e.ctx, e.db, dialects.RequeueFilter{AggregateType: "agg", AggregateID: "b"}, e.at(now))
	wantN(t, "Requeue aggregate of other type", n, err, 0)
	got := e.readAll(now)
	wantAggs(t, "requeued", got, "a", "b")
	for _, rec := range got {
		if rec.Attempts != 0 {
			t.Fatalf("requeued attempts %d", rec.Attempts)
		}
	}
	if _, _, le := e.row(got[0].Seq); le.String != "dead a" {
		t.Fatalf("last_error after requeue: %q", le.String)
	}
	n, err = e.d.Requeue(e.ctx, e.db, dialects.RequeueFilter{All: true}, e.at(now))
	wantN(t, "Requeue all", n, err, 2)
	n, err = e.d.Requeue(e.ctx, e.db, dialects.RequeueFilter{All: true}, e.at(now))
	wantN(t, "Requeue all again", n, err, 0)
	wantAggs(t, "requeued all", e.readAll(now), "a", "b", "c", "d")
	// A requeued row that fails again is retried like any other.
	got = e.readAll(now)
	e.fail(s.Token(), e.failure(got[0], "again", now+time.Minute, false, true))
	if att, st, _ := e.row(got[0].Seq); att != 1 || st != dialects.StatePending {
		t.Fatalf("requeued row after a failure: attempts %d state %d", att, st)
	}
}

func testCleanup(t *testing.T, tgt Target) {
	e := setup(t, tgt)
	s := e.own("r")
	e.insert(e.events("a", "b", "c", "d", "e", "pending")...)
	r := e.read(e.all(), 0, 5, 0)
	for i, rec := range r {
		if n := e.mark(s.Token(), []int64{rec.Seq}, time.Duration(i+1)*time.Minute); n != 1 {
			t.Fatalf("Mark: %d", n)
		}
	}
	n, err := e.d.Cleanup(e.ctx, e.db, e.at(10*time.Minute), 0)
	wantN(t, "Cleanup limit 0", n, err, 0)
	// Published at +1m..+5m; before +4m there are three rows.
	n, err = e.d.Cleanup(e.ctx, e.db, e.at(4*time.Minute), 2)
	wantN(t, "Cleanup first batch", n, err, 2)
	n, err = e.d.Cleanup(e.ctx, e.db, e.at(4*time.Minute), 2)
	wantN(t, "Cleanup second batch", n, err, 1)
	n, err = e.d.Cleanup(e.ctx, e.db, e.at(4*time.Minute), 2)
	wantN(t, "Cleanup nothing left before", n, err, 0)
	n, err = e.d.Cleanup(e.ctx, e.db, e.at(time.Hour), 100)
	wantN(t, "Cleanup the rest", n, err, 2)
	if s := e.stats(); s.Pending != 1 || s.Published != 0 {
		t.Fatalf("stats %+v: cleanup must keep pending rows", s)
	}
}
