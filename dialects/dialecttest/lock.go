package dialecttest

import (
	"testing"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
)

func testTryLock(t *testing.T, tgt Target) {
	e := setup(t, tgt)
	try := func(name, owner string, now time.Duration, want bool) {
		t.Helper()
		ok, err := e.d.TryLock(e.ctx, e.db, name, owner, e.at(now), e.at(now+time.Minute))
		if err != nil {
			t.Fatalf("TryLock(%s, %s): %v", name, owner, err)
		}
		if ok != want {
			t.Fatalf("TryLock(%s, %s, +%v) = %v, want %v", name, owner, now, ok, want)
		}
	}
	try("cleanup", "a", 0, true)                // free
	try("cleanup", "b", 30*time.Second, false)  // held by a
	try("cleanup", "a", 30*time.Second, true)   // renew: until +90s
	try("cleanup", "b", 89*time.Second, false)  // renewed lease still held
	try("other", "b", 0, true)                  // names are independent
	try("cleanup", "b", 90*time.Second, true)   // expired: taken over
	try("cleanup", "a", 100*time.Second, false) // a lost it
	try("cleanup", "b", 100*time.Second, true)  // b keeps renewing
	try("other", "b", 0, true)                  // same owner, same until
	// Sessions and reads still work with the lock table in use.
	s := e.own("r")
	e.insert(e.events("x")...)
	if n := e.mark(s.Token(), seqs(e.readAll(0)), 0); n != 1 {
		t.Fatalf("Mark: %d", n)
	}
}

func testStats(t *testing.T, tgt Target) {
	e := setup(t, tgt)
	if s := e.stats(); s != (dialects.Stats{}) {
		t.Fatalf("empty table stats: %+v", s)
	}
	s := e.own("r")
	evs := e.events("a", "b", "c", "d", "e")
	for i := range evs {
		evs[i].CreatedAt = e.at(time.Duration(i) * time.Second)
	}
	// The oldest pending row need not be the first by seq.
	evs[4].CreatedAt = e.at(-time.Hour + time.Microsecond)
	e.insert(evs...)
	r := e.read(e.all(), 0, 2, 10*time.Second)
	wantAggs(t, "read", r, "a", "b")
	if n := e.mark(s.Token(), seqs(r[:1]), 0); n != 1 {
		t.Fatalf("Mark: %d", n)
	}
	e.fail(s.Token(), e.failure(r[1], "x", 0, true, true))
	st := e.stats()
	want := dialects.Stats{Pending: 3, Dead: 1, Published: 1, OldestPending: evs[4].CreatedAt,
		OldestPublished: e.at(0), BlockedDead: 1}
	if st.Pending != want.Pending || st.Dead != want.Dead || st.Published != want.Published || st.PublishedEstimated ||
		!st.OldestPending.Equal(want.OldestPending) || !st.OldestPublished.Equal(want.OldestPublished) ||
		st.BlockedDead != want.BlockedDead || st.BlockedRetry != 0 {
		t.Fatalf("stats %+v, want %+v", st, want)
	}
	// Rows backing off still count as pending; their aggregates are held
	// back behind a retry.
	c := e.read(e.all(), r[1].Seq, 1, 10*time.Second)
	e.fail(s.Token(), e.failure(c[0], "x", time.Hour, false, true))
	if st := e.stats(); st.Pending != 3 || st.BlockedRetry != 1 || st.BlockedDead != 1 {
		t.Fatalf("with a row backing off: %+v", st)
	}
	// The oldest published row is the one published first, whatever its seq.
	if n := e.mark(s.Token(), []int64{c[0].Seq}, -time.Minute); n != 1 {
		t.Fatalf("Mark: %d", n)
	}
	if st := e.stats(); st.Published != 2 || !st.OldestPublished.Equal(e.at(-time.Minute)) {
		t.Fatalf("after a second mark: %+v", st)
	}
}
