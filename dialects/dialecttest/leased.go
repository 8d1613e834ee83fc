package dialecttest

import (
	"maps"
	"testing"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
)

// testInsertLeased (dialects.LeasingInserter): rows of aggregates with no
// pending row are written leased to the owner and returned exactly as a
// claim would return them; rows behind a pending row of their aggregate are
// written unleased; other relays skip the leased rows until the lease
// expires; a rolled-back transaction leaves nothing.
func testInsertLeased(t *testing.T, tgt Target) {
	e := setup(t, tgt)
	li := e.d.(dialects.LeasingInserter)
	busy := e.event("order", "busy")
	e.insert(busy) // pending, unleased: later events of "busy" must not be leased

	created := time.Date(2024, 12, 31, 23, 59, 58, 987654321, time.UTC) // stored to the µs
	bin := dialects.Event{
		ID: e.ids.New(time.Now()).String(), AggregateType: "order", AggregateID: "free", EventType: "order.bin",
		Payload: []byte{0, 1, 0xff, 0xc3, 0x28}, ContentType: "application/octet-stream",
		Headers:        map[string]string{"trace": "abc", "ünï": "✓", "empty": ""},
		IdempotencyKey: "idem-1", Critical: true, CreatedAt: created,
	}
	js := dialects.Event{
		ID: e.ids.New(time.Now()).String(), AggregateType: "order", AggregateID: "free", EventType: "order.json",
		Payload: []byte(`{"b": 1,   "a": [1, {"x": "ü"}]}`), ContentType: "application/json", Critical: true,
		CreatedAt: created,
	}
	empty := dialects.Event{
		ID: e.ids.New(time.Now()).String(), AggregateType: "invoice", AggregateID: "i1", EventType: "invoice.empty",
		Critical: true, CreatedAt: created,
	}
	behind := e.event("order", "busy")
	behind.Critical = true
	in := []dialects.Event{bin, behind, js, empty}

	// Rolled back: nothing is written.
	tx, err := e.db.BeginTx(e.ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := li.InsertLeased(e.ctx, tx, in, "r1", e.at(time.Hour)); err != nil {
		t.Fatalf("InsertLeased: %v", err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if st := e.stats(); st.Pending != 1 {
		t.Fatalf("after rollback: %d pending, want 1", st.Pending)
	}

	tx, err = e.db.BeginTx(e.ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	leased, err := li.InsertLeased(e.ctx, tx, in, "r1", e.at(time.Hour))
	if err != nil {
		t.Fatalf("InsertLeased: %v", err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if got, want := ids(leased), []string{bin.ID, js.ID, empty.ID}; !equalStrings(got, want) {
		t.Fatalf("leased %v, want %v (not the event behind the pending row)", got, want)
	}
	for i := 1; i < len(leased); i++ {
		if leased[i-1].Seq >= leased[i].Seq {
			t.Errorf("leased rows not in Seq order: %v", seqs(leased))
		}
	}

	// Another relay, while the lease holds: only the "busy" rows.
	wantAggs(t, "claim during the lease", e.claim("r2", 10, time.Minute), "busy", "busy")

	// After the lease: the leased rows, as a claim returns them.
	claimed := e.claim("r3", 10, time.Hour+30*time.Second) // r2's lease runs to 1h01m
	if len(claimed) != len(leased) {
		t.Fatalf("claimed %d rows after the lease, want %d", len(claimed), len(leased))
	}
	for i, c := range claimed {
		l := leased[i]
		checkRecord(t, l, c.Event)
		if l.Seq != c.Seq || l.Attempts != 0 || !maps.Equal(l.Headers, c.Headers) {
			t.Errorf("%s: leased record %+v, claimed %+v", c.EventType, l, c)
		}
	}
}
