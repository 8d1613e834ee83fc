package dialecttest

import (
	"testing"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
)

// testPastRetention: PastRetention counts the published rows published
// before now - retention (strictly, as Cleanup deletes them), never
// pending or dead rows, 0 for a retention <= 0, and 0 once Cleanup has
// deleted them.
func testPastRetention(t *testing.T, tgt Target) {
	e := setup(t, tgt)
	s := e.own("r")
	e.insert(e.events("a", "b", "c", "d", "e", "dead", "pending")...)
	recs := e.read(e.all(), 0, 7, 0)
	if len(recs) != 7 {
		t.Fatalf("read %d rows, want 7", len(recs))
	}
	// Published at +1m..+5m; "dead" dies long ago.
	for i, rec := range recs[:5] {
		if n := e.mark(s.Token(), []int64{rec.Seq}, time.Duration(i+1)*time.Minute); n != 1 {
			t.Fatalf("Mark: %d", n)
		}
	}
	e.fail(s.Token(), e.failure(recs[5], "rejected", 0, true, false))

	past := func(now, retention time.Duration) int64 {
		t.Helper()
		n, err := e.d.PastRetention(e.ctx, e.db, e.at(now), retention)
		if err != nil {
			t.Fatalf("PastRetention(+%v, %v): %v", now, retention, err)
		}
		return n
	}
	for _, c := range []struct {
		now, retention time.Duration
		want           int64
	}{
		{10 * time.Minute, 7 * time.Minute, 2}, // before +3m: +1m, +2m
		{10 * time.Minute, 5 * time.Minute, 4}, // before +5m
		{time.Hour, time.Minute, 5},
		{10 * time.Minute, time.Hour, 0},
		{time.Hour, 0, 0},            // cleanup disabled
		{time.Hour, -time.Minute, 0}, // cleanup disabled
	} {
		if got := past(c.now, c.retention); got != c.want {
			t.Errorf("PastRetention(+%v, %v) = %d, want %d", c.now, c.retention, got, c.want)
		}
	}
	n, err := e.d.Cleanup(e.ctx, e.db, e.at(10*time.Minute-7*time.Minute), 100)
	wantN(t, "Cleanup", n, err, 2)
	if got := past(10*time.Minute, 7*time.Minute); got != 0 {
		t.Errorf("PastRetention after Cleanup = %d, want 0", got)
	}
	if got := past(time.Hour, time.Minute); got != 3 {
		t.Errorf("PastRetention after Cleanup, an hour on = %d, want 3", got)
	}
	if st := e.stats(); st.Pending != 1 || st.Dead != 1 || st.Published != 3 {
		t.Fatalf("stats %+v", st)
	}
	if dialects.PastRetentionCap < dialects.StatsExactPublished {
		t.Errorf("PastRetentionCap %d below StatsExactPublished %d", dialects.PastRetentionCap, dialects.StatsExactPublished)
	}
}
