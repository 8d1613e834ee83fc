package dialecttest

import (
	"testing"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
)

func testClaimOrderLimitLease(t *testing.T, tgt Target) {
	e := setup(t, tgt)
	e.insert(e.events("a", "b", "c", "d", "e")...)

	// Not yet due: next_attempt_at = created_at = base > now.
	if got := e.claim("x", 10, -time.Second); len(got) != 0 {
		t.Fatalf("claimed %d rows before they were due", len(got))
	}
	if got, err := e.d.Claim(e.ctx, e.db, dialects.ClaimRequest{Owner: "x", Limit: 0, Now: e.at(0), LeaseUntil: e.at(time.Hour)}); err != nil || len(got) != 0 {
		t.Fatalf("Limit 0: %d rows, %v", len(got), err)
	}
	wantAggs(t, "x limit 2", e.claim("x", 2, 0), "a", "b")
	wantAggs(t, "y", e.claim("y", 10, 0), "c", "d", "e")
	wantAggs(t, "z while all leased", e.claim("z", 10, 0))
	// Leases run one hour from claim time; just before expiry nothing moves,
	// at expiry another owner takes over, in order.
	wantAggs(t, "z before expiry", e.claim("z", 10, time.Hour-time.Microsecond))
	taken := e.claim("z", 10, time.Hour)
	wantAggs(t, "z at expiry", taken, "a", "b", "c", "d", "e")
	// The old owner can no longer mark them.
	n, err := e.d.MarkPublished(e.ctx, e.db, "x", seqs(taken[:2]), e.at(time.Hour))
	wantN(t, "old owner MarkPublished", n, err, 0)
	n, err = e.d.MarkPublished(e.ctx, e.db, "z", seqs(taken), e.at(time.Hour))
	wantN(t, "new owner MarkPublished", n, err, 5)
	wantAggs(t, "after publish", e.claim("w", 10, 3*time.Hour))
}

func testAggregateOrder(t *testing.T, tgt Target) {
	e := setup(t, tgt)
	e.insert(e.events("A", "A", "B", "A", "C")...)

	// x leases the first row of A: later rows of A are blocked, B and C not.
	x := e.claim("x", 1, 0)
	wantAggs(t, "x", x, "A")
	wantAggs(t, "y", e.claim("y", 10, 0), "B", "C")

	// x fails A1 with a backoff: A stays blocked while it backs off.
	if err := e.d.Fail(e.ctx, e.db, "x", []dialects.Failure{{Seq: x[0].Seq, Error: "boom", NextAttemptAt: e.at(time.Minute)}}); err != nil {
		t.Fatalf("Fail: %v", err)
	}
	wantAggs(t, "z while A1 backs off", e.claim("z", 10, time.Second))
	// Once due, A1 and every later A row go to one owner, in order.
	z := e.claim("z", 10, time.Minute)
	wantAggs(t, "z after backoff", z, "A", "A", "A")
	if z[0].Seq != x[0].Seq || z[0].Attempts != 1 {
		t.Fatalf("retry of A1: seq %d attempts %d", z[0].Seq, z[0].Attempts)
	}

	// Dead and published rows never block.
	e2 := setup(t, tgt)
	e2.insert(e2.events("A", "A", "B", "B")...)
	r := e2.claim("x", 1, 0)
	if err := e2.d.Fail(e2.ctx, e2.db, "x", []dialects.Failure{{Seq: r[0].Seq, Error: "dead", NextAttemptAt: e2.at(time.Hour), Dead: true}}); err != nil {
		t.Fatalf("Fail dead: %v", err)
	}
	wantAggs(t, "after A1 dead", e2.claim("y", 1, 0), "A")
	b := e2.claim("w", 10, 0)
	wantAggs(t, "B1 B2", b, "B", "B")
	n, err := e2.d.MarkPublished(e2.ctx, e2.db, "w", seqs(b[:1]), e2.at(0))
	wantN(t, "publish B1", n, err, 1)
	if err := e2.d.Release(e2.ctx, e2.db, "w", seqs(b[1:]), time.Time{}); err != nil {
		t.Fatalf("Release: %v", err)
	}
	wantAggs(t, "B2 after B1 published", e2.claim("v", 10, 0), "B")
}

func testClaimIDs(t *testing.T, tgt Target) {
	e := setup(t, tgt)
	evs := e.events("A", "A", "B", "C")
	e.insert(evs...)
	a1, a2, b1, c1 := evs[0].ID, evs[1].ID, evs[2].ID, evs[3].ID

	// A2 is refused while the earlier pending A1 is not in IDs, even though
	// A1 is free; rows outside IDs are never claimed.
	wantAggs(t, "ids A2,B1", e.claim("x", 10, 0, a2, b1), "B")
	wantAggs(t, "ids A2 again", e.claim("x", 10, 0, a2))
	// With A1 included both go, in order; C is never touched.
	got := e.claim("y", 10, 0, a1, a2, "00000000-0000-7000-8000-000000000000")
	if !equalStrings(ids(got), []string{a1, a2}) {
		t.Fatalf("ids A1,A2: got %q", ids(got))
	}
	wantAggs(t, "ids C with limit", e.claim("z", 1, 0, c1), "C")
	// A leased earlier row blocks the fast path too.
	e2 := setup(t, tgt)
	evs2 := e2.events("A", "A")
	e2.insert(evs2...)
	wantAggs(t, "lease A1", e2.claim("x", 1, 0), "A")
	wantAggs(t, "ids A1,A2 while A1 leased", e2.claim("y", 10, 0, evs2[0].ID, evs2[1].ID))
}

// testClaimWindow: a speculative claim (ClaimRequest.Window) examines only
// the first Window rows that are due and not leased; held-back rows inside
// the window stay held back, leased rows do not count toward it.
func testClaimWindow(t *testing.T, tgt Target) {
	e := setup(t, tgt)
	e.insert(e.events("A", "A", "A", "B", "C")...)
	wantAggs(t, "x", e.claim("x", 1, 0), "A")
	windowed := func(owner string, limit, window int) []dialects.Record {
		t.Helper()
		recs, err := e.d.Claim(e.ctx, e.db, dialects.ClaimRequest{
			Owner: owner, Limit: limit, Now: e.at(0), LeaseUntil: e.at(time.Hour), Window: window,
		})
		if err != nil {
			t.Fatalf("Claim(%s, window %d): %v", owner, window, err)
		}
		return recs
	}
	// A2 and A3 fill the window and are held back behind x's lease of A1.
	wantAggs(t, "window 2", windowed("y", 10, 2))
	wantAggs(t, "window 3", windowed("y", 10, 3), "B")
	// B is leased now and does not count: A2, A3, C.
	wantAggs(t, "window 3 after B", windowed("z", 10, 3), "C")
	wantAggs(t, "nothing left", windowed("w", 10, 100))
	// Without a window every row is examined.
	e2 := setup(t, tgt)
	e2.insert(e2.events("A", "A", "A", "B")...)
	wantAggs(t, "x", e2.claim("x", 1, 0), "A")
	wantAggs(t, "no window", e2.claim("y", 10, 0), "B")
}

// testClaimPastHeldBackHead: a scan claim finds claimable rows behind a
// long run of held-back rows (more than a few batches of them) and never
// takes a held-back one. A dialect may return a short batch; claiming
// again until a claim comes back empty collects every claimable row once,
// in order.
func testClaimPastHeldBackHead(t *testing.T, tgt Target) {
	e := setup(t, tgt)
	aggs := []string{"A", "B", "A"}
	for range 12 {
		aggs = append(aggs, "A")
	}
	aggs = append(aggs, "C", "A", "D")
	e.insert(e.events(aggs...)...)
	wantAggs(t, "x leases A1", e.claim("x", 1, 0), "A")
	var got []dialects.Record
	for i := 0; ; i++ {
		recs := e.claim("y", 2, 0)
		if len(recs) == 0 {
			break
		}
		if i > len(aggs) {
			t.Fatalf("claims do not end: %d so far", len(got))
		}
		got = append(got, recs...)
	}
	wantAggs(t, "claimed behind A1's lease", got, "B", "C", "D")
	for i := 1; i < len(got); i++ {
		if got[i].Seq <= got[i-1].Seq {
			t.Fatalf("claims out of seq order: %d after %d", got[i].Seq, got[i-1].Seq)
		}
	}
}

// testClaimFewAggregates claims a backlog of many rows over few aggregates
// (several rows of one aggregate in a batch), one of them backing off at its
// head: claims return the others in order until an empty claim, which comes
// only when all of them are claimed, none of the backing-off aggregate until
// it is due, then all of it in order.
func testClaimFewAggregates(t *testing.T, tgt Target) {
	e := setup(t, tgt)
	var aggs []string
	for range 20 {
		aggs = append(aggs, "A", "B", "C")
	}
	e.insert(e.events(aggs...)...)
	x := e.claim("x", 2, 0)
	wantAggs(t, "x", x, "A", "B")
	if err := e.d.Fail(e.ctx, e.db, "x", []dialects.Failure{{Seq: x[1].Seq, Error: "boom", NextAttemptAt: e.at(time.Minute)}}); err != nil {
		t.Fatalf("Fail: %v", err)
	}
	n, err := e.d.MarkPublished(e.ctx, e.db, "x", seqs(x[:1]), e.at(0))
	wantN(t, "publish A1", n, err, 1)

	last := map[string]int64{}
	counts := map[string]int{}
	for i := 0; ; i++ {
		recs := e.claim("y", 4, time.Second)
		if len(recs) == 0 {
			break
		}
		if i > len(aggs) {
			t.Fatalf("claims do not end")
		}
		for _, r := range recs {
			if r.Seq <= last[r.AggregateID] {
				t.Fatalf("aggregate %s: seq %d after %d", r.AggregateID, r.Seq, last[r.AggregateID])
			}
			last[r.AggregateID] = r.Seq
			counts[r.AggregateID]++
		}
		n, err := e.d.MarkPublished(e.ctx, e.db, "y", seqs(recs), e.at(time.Second))
		wantN(t, "publish", n, err, int64(len(recs)))
	}
	if counts["A"] != 19 || counts["B"] != 0 || counts["C"] != 20 {
		t.Fatalf("claimed %v while B1 backs off, want A:19 C:20", counts)
	}
	b := e.claim("z", 100, 2*time.Minute)
	if len(b) != 20 || b[0].Seq != x[1].Seq {
		t.Fatalf("after the backoff: %d rows, first seq %d, want 20 rows from B1 (%d)", len(b), b[0].Seq, x[1].Seq)
	}
	for _, r := range b {
		if r.AggregateID != "B" {
			t.Fatalf("after the backoff: aggregate %s, want B only", r.AggregateID)
		}
	}
}
