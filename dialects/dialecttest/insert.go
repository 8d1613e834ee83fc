package dialecttest

import (
	"bytes"
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
)

func testInsertCommitRollback(t *testing.T, tgt Target) {
	e := setup(t, tgt)
	// Zero events: no error, nothing written.
	e.insert()
	if s := e.stats(); s.Pending != 0 {
		t.Fatalf("after empty insert: pending %d", s.Pending)
	}
	// Rolled back: invisible.
	tx, err := e.db.BeginTx(e.ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.d.Insert(e.ctx, tx, e.events("r1", "r2")); err != nil {
		t.Fatalf("Insert: %v", err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if s := e.stats(); s.Pending != 0 {
		t.Fatalf("after rollback: pending %d", s.Pending)
	}
	if got := e.readAll(0); len(got) != 0 {
		t.Fatalf("read %d rolled-back rows", len(got))
	}
	// One, then many, committed: visible, in slice order.
	one := e.events("one")
	e.insert(one...)
	many := make([]dialects.Event, 100)
	for i := range many {
		many[i] = e.event("agg", fmt.Sprintf("m%03d", i))
	}
	e.insert(many...)
	if s := e.stats(); s.Pending != 101 {
		t.Fatalf("pending %d, want 101", s.Pending)
	}
	got := e.readAll(0)
	want := append(eventIDs(one), eventIDs(many)...)
	if !equalStrings(ids(got), want) {
		t.Fatalf("read ids not in insertion order:\n got %q\nwant %q", ids(got), want)
	}
}

func testInsertSplit(t *testing.T, tgt Target) {
	e := setup(t, tgt)
	n := e.d.MaxInsertRows() + 3
	evs := make([]dialects.Event, n)
	for i := range evs {
		evs[i] = e.event("agg", fmt.Sprintf("s%06d", i))
	}
	e.insert(evs...)
	if s := e.stats(); s.Pending != int64(n) {
		t.Fatalf("pending %d, want %d", s.Pending, n)
	}
	got := e.readAll(0)
	if !equalStrings(ids(got), eventIDs(evs)) {
		t.Fatalf("split insert: %d rows read (want %d) or order differs", len(got), n)
	}
	// A rolled-back split insert leaves nothing behind.
	tx, err := e.db.BeginTx(e.ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	more := make([]dialects.Event, n)
	for i := range more {
		more[i] = e.event("agg", fmt.Sprintf("x%06d", i))
	}
	if err := e.d.Insert(e.ctx, tx, more); err != nil {
		t.Fatalf("Insert: %v", err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if s := e.stats(); s.Pending != int64(n) {
		t.Fatalf("after rolled-back split insert: pending %d, want %d", s.Pending, n)
	}
}

func testRoundTrip(t *testing.T, tgt Target) {
	e := setup(t, tgt)
	created := time.Date(2024, 12, 31, 23, 59, 58, 987654000, time.UTC)
	full := dialects.Event{
		ID:             newID(),
		AggregateType:  "order",
		AggregateID:    "order-ÄÖ-1",
		EventType:      "order.paid",
		Payload:        []byte{0, 1, 2, 0xff, 0xfe, 'a', 0, 0xc3, 0x28},
		ContentType:    "application/octet-stream",
		Headers:        map[string]string{"trace": "abc", "ünï": "çødé ✓", "emoji": "🚀", "empty": ""},
		IdempotencyKey: "idem-1",
		Critical:       true,
		CreatedAt:      created,
	}
	jsonText := `{"b": 1,   "a": [1, 2, {"x": "ü"}], "z": null}`
	js := dialects.Event{
		ID: newID(), AggregateType: "order", AggregateID: "j", EventType: "order.json",
		Payload: []byte(jsonText), ContentType: "application/json", CreatedAt: created.Add(time.Microsecond),
	}
	badJSON := dialects.Event{
		ID: newID(), AggregateType: "order", AggregateID: "bj", EventType: "order.badjson",
		Payload: []byte{'{', 0xff, 0}, ContentType: "application/json", CreatedAt: created,
	}
	emptyJSON := dialects.Event{
		ID: newID(), AggregateType: "order", AggregateID: "ej", EventType: "order.emptyjson",
		Payload: []byte{}, ContentType: "application/json", CreatedAt: created,
	}
	empty := dialects.Event{
		ID: newID(), AggregateType: "order", AggregateID: "e", EventType: "order.empty",
		CreatedAt: created,
	}
	// A time with nanoseconds is stored with microsecond precision.
	nanos := e.event("order", "n")
	nanos.CreatedAt = time.Date(2024, 1, 2, 3, 4, 5, 123456789, time.FixedZone("X", 3600))
	for _, ev := range []*dialects.Event{&full, &js, &badJSON, &emptyJSON, &empty} {
		ev.Partition = dialects.PartitionOf(ev.AggregateType, ev.AggregateID, e.parts)
	}
	in := []dialects.Event{full, js, badJSON, emptyJSON, empty, nanos}
	e.insert(in...)

	got := e.readAll(0)
	if len(got) != len(in) {
		t.Fatalf("read %d, want %d", len(got), len(in))
	}
	for i, r := range got {
		w := in[i]
		if i == 5 {
			w.CreatedAt = time.Date(2024, 1, 2, 2, 4, 5, 123456000, time.UTC)
		}
		checkRecord(t, r, w)
		if r.Attempts != 0 || r.Seq <= 0 {
			t.Errorf("%s: attempts %d seq %d", w.EventType, r.Attempts, r.Seq)
		}
	}
	if e.d.Name() == "postgres" {
		var text string
		q := "SELECT payload_json::text FROM " + e.d.Table() + " WHERE seq = " + e.ph(1)
		if err := e.db.QueryRowContext(e.ctx, q, got[1].Seq).Scan(&text); err != nil {
			t.Fatalf("read payload_json: %v", err)
		}
		if text != jsonText {
			t.Fatalf("payload_json::text = %q, want %q", text, jsonText)
		}
	}
}

func checkRecord(t *testing.T, r dialects.Record, w dialects.Event) {
	t.Helper()
	if r.ID != w.ID || r.AggregateType != w.AggregateType || r.AggregateID != w.AggregateID ||
		r.EventType != w.EventType || r.ContentType != w.ContentType || r.IdempotencyKey != w.IdempotencyKey ||
		r.Critical != w.Critical || r.Partition != w.Partition {
		t.Errorf("%s: scalar fields differ:\n got %+v\nwant %+v", w.EventType, r.Event, w)
	}
	if !bytes.Equal(r.Payload, w.Payload) {
		t.Errorf("%s: payload %q, want %q", w.EventType, r.Payload, w.Payload)
	}
	if r.Payload == nil {
		t.Errorf("%s: payload is nil, want non-nil", w.EventType)
	}
	if !maps.Equal(r.Headers, w.Headers) {
		t.Errorf("%s: headers %v, want %v", w.EventType, r.Headers, w.Headers)
	}
	if !r.CreatedAt.Equal(w.CreatedAt) || r.CreatedAt.Location() != time.UTC {
		t.Errorf("%s: created_at %v, want %v (UTC)", w.EventType, r.CreatedAt, w.CreatedAt)
	}
}
