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
	// Claims still work with the lock table in use.
	e.insert(e.events("x")...)
	wantAggs(t, "claim", e.claim("o", 1, 0), "x")
}

func testStats(t *testing.T, tgt Target) {
	e := setup(t, tgt)
	if s := e.stats(); s != (dialects.Stats{}) {
		t.Fatalf("empty table stats: %+v", s)
	}
	evs := e.events("a", "b", "c", "d", "e")
	for i := range evs {
		evs[i].CreatedAt = e.at(time.Duration(i) * time.Second)
	}
	// The oldest pending row need not be the first by seq.
	evs[4].CreatedAt = e.at(-time.Hour + time.Microsecond)
	e.insert(evs...)
	r := e.claim("x", 2, 10*time.Second)
	wantAggs(t, "claim", r, "a", "b")
	n, err := e.d.MarkPublished(e.ctx, e.db, "x", seqs(r[:1]), e.at(0))
	wantN(t, "publish", n, err, 1)
	if err := e.d.Fail(e.ctx, e.db, "x", []dialects.Failure{{Seq: r[1].Seq, Error: "x", NextAttemptAt: e.at(0), Dead: true}}); err != nil {
		t.Fatal(err)
	}
	s := e.stats()
	want := dialects.Stats{Pending: 3, Dead: 1, Published: 1, OldestPending: evs[4].CreatedAt}
	if s.Pending != want.Pending || s.Dead != want.Dead || s.Published != want.Published || !s.OldestPending.Equal(want.OldestPending) {
		t.Fatalf("stats %+v, want %+v", s, want)
	}
	// Leased rows still count as pending.
	e.claim("y", 10, time.Minute)
	if s := e.stats(); s.Pending != 3 {
		t.Fatalf("pending with leases: %d", s.Pending)
	}
}
