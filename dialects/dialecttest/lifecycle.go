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

func testOwnerOnly(t *testing.T, tgt Target) {
	e := setup(t, tgt)
	e.insert(e.events("a", "b", "c")...)
	x := e.claim("x", 10, 0)
	wantAggs(t, "x", x, "a", "b", "c")
	all := seqs(x)

	n, err := e.d.MarkPublished(e.ctx, e.db, "y", all, e.at(0))
	wantN(t, "MarkPublished by non-owner", n, err, 0)
	n, err = e.d.Delete(e.ctx, e.db, "y", all)
	wantN(t, "Delete by non-owner", n, err, 0)
	if err := e.d.Fail(e.ctx, e.db, "y", []dialects.Failure{{Seq: all[0], Error: "no", NextAttemptAt: e.at(time.Hour), Dead: true}}); err != nil {
		t.Fatalf("Fail by non-owner: %v", err)
	}
	if err := e.d.Release(e.ctx, e.db, "y", all, time.Time{}); err != nil {
		t.Fatalf("Release by non-owner: %v", err)
	}
	if att, st, _ := e.row(all[0]); att != 0 || st != dialects.StatePending {
		t.Fatalf("non-owner Fail changed the row: attempts %d state %d", att, st)
	}
	wantAggs(t, "still leased by x", e.claim("z", 10, 0))
	if s := e.stats(); s.Pending != 3 {
		t.Fatalf("pending %d, want 3", s.Pending)
	}

	// Empty batches are no-ops.
	n, err = e.d.MarkPublished(e.ctx, e.db, "x", nil, e.at(0))
	wantN(t, "MarkPublished empty", n, err, 0)
	n, err = e.d.Delete(e.ctx, e.db, "x", nil)
	wantN(t, "Delete empty", n, err, 0)
	if err := e.d.Fail(e.ctx, e.db, "x", nil); err != nil {
		t.Fatalf("Fail empty: %v", err)
	}
	if err := e.d.Release(e.ctx, e.db, "x", nil, time.Time{}); err != nil {
		t.Fatalf("Release empty: %v", err)
	}

	n, err = e.d.MarkPublished(e.ctx, e.db, "x", all[:1], e.at(0))
	wantN(t, "MarkPublished by owner", n, err, 1)
	n, err = e.d.MarkPublished(e.ctx, e.db, "x", all[:1], e.at(0))
	wantN(t, "MarkPublished twice", n, err, 0)
	n, err = e.d.Delete(e.ctx, e.db, "x", all[1:2])
	wantN(t, "Delete by owner", n, err, 1)
	if s := e.stats(); s.Pending != 1 || s.Published != 1 {
		t.Fatalf("stats %+v, want 1 pending 1 published", s)
	}
	n, err = e.d.Delete(e.ctx, e.db, "x", all[:1])
	wantN(t, "Delete of a published row", n, err, 0)
}

func testFailAndDead(t *testing.T, tgt Target) {
	e := setup(t, tgt)
	e.insert(e.events("a", "b")...)
	r := e.claim("x", 10, 0)
	long := strings.Repeat("é", 3000) // 6000 bytes of two-byte runes
	err := e.d.Fail(e.ctx, e.db, "x", []dialects.Failure{
		{Seq: r[0].Seq, Error: "first", NextAttemptAt: e.at(time.Minute)},
		{Seq: r[1].Seq, Error: long + "\xff", NextAttemptAt: e.at(time.Minute)},
	})
	if err != nil {
		t.Fatalf("Fail: %v", err)
	}
	att, st, le := e.row(r[0].Seq)
	if att != 1 || st != dialects.StatePending || le.String != "first" {
		t.Fatalf("after Fail: attempts %d state %d error %q", att, st, le.String)
	}
	_, _, le = e.row(r[1].Seq)
	if len(le.String) > sqlkit.MaxErrorBytes || len(le.String) < sqlkit.MaxErrorBytes-4 || !utf8.ValidString(le.String) {
		t.Fatalf("long error stored as %d bytes, valid UTF-8 %v", len(le.String), utf8.ValidString(le.String))
	}
	wantAggs(t, "backing off", e.claim("y", 10, time.Minute-time.Microsecond))
	r = e.claim("y", 10, time.Minute)
	wantAggs(t, "retry", r, "a", "b")
	if r[0].Attempts != 1 {
		t.Fatalf("attempts on retry: %d", r[0].Attempts)
	}
	if err := e.d.Fail(e.ctx, e.db, "y", []dialects.Failure{{Seq: r[0].Seq, Error: "fatal", NextAttemptAt: e.at(2 * time.Minute), Dead: true}}); err != nil {
		t.Fatalf("Fail dead: %v", err)
	}
	att, st, le = e.row(r[0].Seq)
	if att != 2 || st != dialects.StateDead || le.String != "fatal" {
		t.Fatalf("dead row: attempts %d state %d error %q", att, st, le.String)
	}
	if s := e.stats(); s.Dead != 1 || s.Pending != 1 {
		t.Fatalf("stats %+v, want 1 dead 1 pending", s)
	}
	wantAggs(t, "dead never claimed", e.claim("z", 10, 100*time.Hour), "b")
}

func testRelease(t *testing.T, tgt Target) {
	e := setup(t, tgt)
	e.insert(e.events("a", "b")...)
	r := e.claim("x", 10, 0)
	if err := e.d.Release(e.ctx, e.db, "x", seqs(r[:1]), time.Time{}); err != nil {
		t.Fatalf("Release: %v", err)
	}
	if err := e.d.Release(e.ctx, e.db, "x", seqs(r[1:]), e.at(time.Minute)); err != nil {
		t.Fatalf("Release notBefore: %v", err)
	}
	got := e.claim("y", 10, 0)
	wantAggs(t, "released at once", got, "a")
	if got[0].Attempts != 0 {
		t.Fatalf("Release counted an attempt: %d", got[0].Attempts)
	}
	wantAggs(t, "released until +1m", e.claim("y", 10, time.Minute), "b")
}

func testRequeue(t *testing.T, tgt Target) {
	e := setup(t, tgt)
	evs := e.events("a", "b", "c", "d")
	evs[1].AggregateType = "other"
	e.insert(evs...)
	r := e.claim("x", 10, 0)
	var fs []dialects.Failure
	for _, rec := range r {
		fs = append(fs, dialects.Failure{Seq: rec.Seq, Error: "dead " + rec.AggregateID, NextAttemptAt: e.at(time.Hour), Dead: true})
	}
	if err := e.d.Fail(e.ctx, e.db, "x", fs); err != nil {
		t.Fatalf("Fail: %v", err)
	}

	for _, f := range []dialects.RequeueFilter{
		{},
		{IDs: []string{evs[0].ID}, All: true},
		{AggregateType: "agg", AggregateID: "a", All: true},
		{IDs: []string{evs[0].ID}, AggregateType: "agg", AggregateID: "a"},
		{AggregateType: "agg"},
		{AggregateID: "a"},
	} {
		if _, err := e.d.Requeue(e.ctx, e.db, f, e.at(0)); err == nil || !errors.Is(err, sqlkit.ErrInvalidFilter) {
			t.Fatalf("Requeue(%+v): err %v, want invalid filter", f, err)
		}
	}

	now := 2 * time.Hour
	n, err := e.d.Requeue(e.ctx, e.db, dialects.RequeueFilter{IDs: []string{evs[0].ID, "00000000-0000-7000-8000-000000000000"}}, e.at(now))
	wantN(t, "Requeue IDs", n, err, 1)
	n, err = e.d.Requeue(e.ctx, e.db, dialects.RequeueFilter{AggregateType: "other", AggregateID: "b"}, e.at(now))
	wantN(t, "Requeue aggregate", n, err, 1)
	n, err = e.d.Requeue(e.ctx, e.db, dialects.RequeueFilter{AggregateType: "agg", AggregateID: "b"}, e.at(now))
	wantN(t, "Requeue aggregate of other type", n, err, 0)
	got := e.claim("y", 10, now)
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
	wantAggs(t, "requeued all", e.claim("z", 10, now), "c", "d")
}

func testCleanup(t *testing.T, tgt Target) {
	e := setup(t, tgt)
	e.insert(e.events("a", "b", "c", "d", "e", "pending")...)
	r := e.claim("x", 5, 0)
	for i, rec := range r {
		n, err := e.d.MarkPublished(e.ctx, e.db, "x", []int64{rec.Seq}, e.at(time.Duration(i+1)*time.Minute))
		wantN(t, "MarkPublished", n, err, 1)
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
