package dialecttest

import (
	"errors"
	"testing"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
)

// ExerciseInspect runs the dialects.Inspector suite against tgt: List (by
// state, by aggregate, paginated), Get (every field, unknown and malformed
// ids), Blockers (backing off, dead; order, limit, Skip), Ownership
// (live relays, owners, epochs, a dead relay's partitions free) and
// PastRetention (published rows past retention, before and after Cleanup).
func ExerciseInspect(t *testing.T, tgt Target) {
	t.Run("Inspect", func(t *testing.T) { testInspect(t, tgt) })
	t.Run("InspectWithTable", func(t *testing.T) { testInspectWithTable(t, tgt) })
	t.Run("InspectSummaries", func(t *testing.T) { testInspectSummaries(t, tgt) })
	t.Run("Ownership", func(t *testing.T) { testOwnership(t, tgt) })
	t.Run("PastRetention", func(t *testing.T) { testPastRetention(t, tgt) })
}

func rowIDs(rows []dialects.Row) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.ID
	}
	return out
}

func testInspect(t *testing.T, tgt Target) {
	e := setup(t, tgt)
	in := e.d

	a1 := e.event("agg", "a")
	a1.Payload = []byte(`{"n": 1, "s": "é"}`)
	a1.ContentType = "application/json"
	a1.Headers = map[string]string{"k": "v"}
	a1.IdempotencyKey = "idem-1"
	a1.Critical = true
	a2, b1, b2, c1, d1 := e.event("agg", "a"), e.event("agg", "b"), e.event("agg", "b"), e.event("agg", "c"), e.event("agg", "d")
	d1.Payload = []byte{0xff, 0x00, 0x01}
	d1.ContentType = "application/octet-stream"
	e.insert(a1, a2, b1, b2, c1, d1)

	sess := e.own("x")
	heads := e.readAll(0)
	if len(heads) != 6 {
		t.Fatalf("read %d rows, want 6", len(heads))
	}
	seq := map[string]int64{}
	rec := map[string]dialects.Record{}
	for _, r := range heads {
		seq[r.ID] = r.Seq
		rec[r.ID] = r
	}
	e.fail(sess.Token(),
		e.failure(rec[a1.ID], "boom", time.Hour, false, true),
		e.failure(rec[b1.ID], "rejected", 0, true, true),
	)
	if n := e.mark(sess.Token(), []int64{seq[c1.ID]}, time.Second); n != 1 {
		t.Fatalf("Mark: %d", n)
	}

	list := func(f dialects.ListFilter, want ...dialects.Event) []dialects.Row {
		t.Helper()
		rows, err := in.List(e.ctx, e.db, f)
		if err != nil {
			t.Fatalf("List(%+v): %v", f, err)
		}
		if got := rowIDs(rows); !equalStrings(got, eventIDs(want)) {
			t.Fatalf("List(%+v) = %q, want %q", f, got, eventIDs(want))
		}
		return rows
	}
	list(dialects.ListFilter{State: dialects.StatePending, Limit: 10}, a1, a2, b2, d1)
	list(dialects.ListFilter{State: dialects.StateDead, Limit: 10}, b1)
	pub := list(dialects.ListFilter{State: dialects.StatePublished, Limit: 10}, c1)
	if !pub[0].PublishedAt.Equal(e.at(time.Second)) || pub[0].State != dialects.StatePublished {
		t.Fatalf("published row: state %v published at %v", pub[0].State, pub[0].PublishedAt)
	}
	list(dialects.ListFilter{State: dialects.StatePending, AggregateType: "agg", AggregateID: "a", Limit: 10}, a1, a2)
	list(dialects.ListFilter{State: dialects.StatePending, AggregateType: "agg", AggregateID: "c", Limit: 10})
	page := list(dialects.ListFilter{State: dialects.StatePending, Limit: 2}, a1, a2)
	list(dialects.ListFilter{State: dialects.StatePending, Limit: 2, AfterSeq: page[1].Seq}, b2, d1)

	for _, f := range []dialects.ListFilter{
		{State: 7, Limit: 1},
		{State: dialects.StateDead, AggregateType: "agg", Limit: 1},
		{State: dialects.StateDead},
	} {
		if _, err := in.List(e.ctx, e.db, f); !errors.Is(err, dialects.ErrInvalidListFilter) {
			t.Fatalf("List(%+v) = %v, want ErrInvalidListFilter", f, err)
		}
	}

	got, err := in.Get(e.ctx, e.db, a1.ID)
	if err != nil {
		t.Fatalf("Get(a1): %v", err)
	}
	if got.ID != a1.ID || got.Seq != seq[a1.ID] || got.AggregateType != "agg" || got.AggregateID != "a" ||
		got.EventType != a1.EventType || string(got.Payload) != string(a1.Payload) ||
		got.ContentType != "application/json" || len(got.Headers) != 1 || got.Headers["k"] != "v" ||
		got.IdempotencyKey != "idem-1" || !got.Critical || !got.CreatedAt.Equal(e.base) ||
		got.State != dialects.StatePending || got.Attempts != 1 || got.LastError != "boom" ||
		!got.NextAttemptAt.Equal(e.at(time.Hour)) || got.Partition != a1.Partition || !got.PublishedAt.IsZero() {
		t.Fatalf("Get(a1) = %+v", got)
	}
	got, err = in.Get(e.ctx, e.db, d1.ID)
	if err != nil {
		t.Fatalf("Get(d1): %v", err)
	}
	if got.Partition != d1.Partition || got.NextAttemptAt.Before(e.base) || got.NextAttemptAt.After(e.now()) ||
		!got.DeliverAt.IsZero() || string(got.Payload) != "\xff\x00\x01" ||
		got.Critical || got.Headers != nil || got.IdempotencyKey != "" || got.Attempts != 0 {
		t.Fatalf("Get(d1) = %+v", got)
	}
	got, err = in.Get(e.ctx, e.db, b1.ID)
	if err != nil || got.State != dialects.StateDead || got.LastError != "rejected" || got.Attempts != 1 {
		t.Fatalf("Get(b1) = %+v, %v", got, err)
	}
	for _, id := range []string{newID(), "not-a-uuid", ""} {
		if _, err := in.Get(e.ctx, e.db, id); !errors.Is(err, dialects.ErrEventNotFound) {
			t.Fatalf("Get(%q) = %v, want ErrEventNotFound", id, err)
		}
	}

	bl, err := in.Blockers(e.ctx, e.db, e.at(time.Minute), 10)
	if err != nil {
		t.Fatalf("Blockers: %v", err)
	}
	type want struct {
		agg           string
		reason        dialects.BlockReason
		pending, dead int64
		head          string
	}
	wants := []want{
		{"a", dialects.BlockBackingOff, 2, 0, a1.ID},
		{"b", dialects.BlockDead, 1, 1, b1.ID},
	}
	if len(bl) != len(wants) {
		t.Fatalf("Blockers = %+v, want %d aggregates", bl, len(wants))
	}
	for i, w := range wants {
		b := bl[i]
		if b.AggregateType != "agg" || b.AggregateID != w.agg || b.Reason != w.reason || b.Pending != w.pending ||
			b.Dead != w.dead || b.Head == nil || b.Head.ID != w.head {
			t.Fatalf("Blockers[%d] = %+v (head %+v), want %+v", i, b, b.Head, w)
		}
	}
	if bl[0].Head.LastError != "boom" || bl[0].Head.Attempts != 1 {
		t.Fatalf("Blockers[0].Head = %+v", bl[0].Head)
	}
	if bl, err := in.Blockers(e.ctx, e.db, e.at(time.Minute), 1); err != nil || len(bl) != 1 || bl[0].AggregateID != "a" {
		t.Fatalf("Blockers limit 1 = %+v, %v", bl, err)
	}

	if bl[1].Head.State != dialects.StateDead || bl[1].Head.LastError != "rejected" {
		t.Fatalf("Blockers[1].Head = %+v", bl[1].Head)
	}

	// Two hours later the retry block has expired: only the dead block is
	// listed; once skipped, nothing is.
	bl, err = in.Blockers(e.ctx, e.db, e.at(2*time.Hour), 10)
	if err != nil || len(bl) != 1 || bl[0].AggregateID != "b" || bl[0].Reason != dialects.BlockDead {
		t.Fatalf("Blockers later = %+v, %v", bl, err)
	}
	n, err := e.d.Skip(e.ctx, e.db, dialects.RequeueFilter{IDs: []string{b1.ID}})
	wantN(t, "Skip b1", n, err, 1)
	if bl, err := in.Blockers(e.ctx, e.db, e.at(2*time.Hour), 10); err != nil || len(bl) != 0 {
		t.Fatalf("Blockers after Skip = %+v, %v", bl, err)
	}
	// Blockers are read-only: the rows are unchanged.
	if got, err := in.Get(e.ctx, e.db, b1.ID); err != nil || got.State != dialects.StateDead {
		t.Fatalf("Get(b1) after Blockers = %+v, %v", got, err)
	}
}

func testInspectWithTable(t *testing.T, tgt Target) {
	d, err := tgt.WithTable("ops_outbox")
	if err != nil {
		t.Fatalf("WithTable: %v", err)
	}
	e := setupWith(t, tgt, d)
	in := e.d
	ev := e.event("agg", "a")
	e.insert(ev)
	rows, err := in.List(e.ctx, e.db, dialects.ListFilter{State: dialects.StatePending, Limit: 5})
	if err != nil || len(rows) != 1 || rows[0].ID != ev.ID {
		t.Fatalf("List on ops_outbox = %+v, %v", rows, err)
	}
	if _, err := in.Get(e.ctx, e.db, ev.ID); err != nil {
		t.Fatalf("Get on ops_outbox: %v", err)
	}
	if bl, err := in.Blockers(e.ctx, e.db, e.at(0), 5); err != nil || len(bl) != 0 {
		t.Fatalf("Blockers on ops_outbox = %+v, %v", bl, err)
	}
	if n, err := in.PastRetention(e.ctx, e.db, e.at(0), time.Hour); err != nil || n != 0 {
		t.Fatalf("PastRetention on ops_outbox = %d, %v", n, err)
	}
}
