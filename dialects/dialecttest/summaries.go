package dialecttest

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
)

// testInspectSummaries: ListSummaries and BlockerSummaries return what List
// and Blockers return, field for field, except the payload: nil, with its
// length in bytes in PayloadSize (JSON text with multi-byte characters,
// binary, empty and large payloads).
func testInspectSummaries(t *testing.T, tgt Target) {
	e := setup(t, tgt)
	in := e.d
	j, bin, empty, big, later := e.event("agg", "j"), e.event("agg", "bin"), e.event("agg", "empty"), e.event("agg", "big"), e.event("agg", "j")
	j.Payload, j.ContentType, j.Headers = []byte(`{"s": "é€"}`), "application/json", map[string]string{"k": "v"}
	bin.Payload, bin.ContentType = []byte{0xff, 0x00, 0x01, 0x02}, "application/octet-stream"
	empty.Payload = nil
	big.Payload = make([]byte, 200_000)
	e.insert(j, bin, empty, big, later)
	sess := e.own("x")
	recs := e.readAll(0)
	byID := map[string]dialects.Record{}
	for _, r := range recs {
		byID[r.ID] = r
	}
	e.fail(sess.Token(),
		e.failure(byID[j.ID], "boom", time.Hour, false, true),
		e.failure(byID[bin.ID], "dead", 0, true, true),
		e.failure(byID[big.ID], "dead too", 0, true, true),
	)

	strip := func(rows []dialects.Row) []dialects.Row {
		for i := range rows {
			if rows[i].PayloadSize != len(rows[i].Payload) {
				t.Fatalf("List row %s: PayloadSize %d, payload %d bytes", rows[i].ID, rows[i].PayloadSize, len(rows[i].Payload))
			}
			rows[i].Payload = nil
		}
		return rows
	}
	for _, f := range []dialects.ListFilter{
		{State: dialects.StatePending, Limit: 10},
		{State: dialects.StateDead, Limit: 10},
		{State: dialects.StateDead, Limit: 1, AfterSeq: byID[bin.ID].Seq},
		{State: dialects.StatePending, AggregateType: "agg", AggregateID: "j", Limit: 10},
	} {
		full, err := in.List(e.ctx, e.db, f)
		if err != nil {
			t.Fatalf("List(%+v): %v", f, err)
		}
		sum, err := in.ListSummaries(e.ctx, e.db, f)
		if err != nil {
			t.Fatalf("ListSummaries(%+v): %v", f, err)
		}
		if len(sum) == 0 || !reflect.DeepEqual(strip(full), sum) {
			t.Fatalf("ListSummaries(%+v) =\n%+v\nwant List without payloads:\n%+v", f, sum, full)
		}
	}
	sizes := map[string]int{}
	rows, err := in.ListSummaries(e.ctx, e.db, dialects.ListFilter{State: dialects.StateDead, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	pend, err := in.ListSummaries(e.ctx, e.db, dialects.ListFilter{State: dialects.StatePending, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range append(rows, pend...) {
		if r.Payload != nil {
			t.Fatalf("ListSummaries row %s carries its payload", r.ID)
		}
		sizes[r.ID] = r.PayloadSize
	}
	for _, ev := range []dialects.Event{j, bin, empty, big} {
		if sizes[ev.ID] != len(ev.Payload) {
			t.Fatalf("PayloadSize of %s = %d, want %d", ev.AggregateID, sizes[ev.ID], len(ev.Payload))
		}
	}
	if _, err := in.ListSummaries(e.ctx, e.db, dialects.ListFilter{State: dialects.StateDead}); !errors.Is(err, dialects.ErrInvalidListFilter) {
		t.Fatalf("ListSummaries without a limit = %v, want ErrInvalidListFilter", err)
	}

	full, err := in.Blockers(e.ctx, e.db, e.at(time.Minute), 10)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := in.BlockerSummaries(e.ctx, e.db, e.at(time.Minute), 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(full) != 3 || len(sum) != len(full) {
		t.Fatalf("Blockers = %d, BlockerSummaries = %d; want 3 each", len(full), len(sum))
	}
	for i := range full {
		h := *full[i].Head
		h.Payload = nil
		full[i].Head = &h
		if !reflect.DeepEqual(full[i], sum[i]) {
			t.Fatalf("BlockerSummaries[%d] = %+v (head %+v), want %+v (head %+v)", i, sum[i], sum[i].Head, full[i], full[i].Head)
		}
		if sum[i].Head.PayloadSize != sizes[sum[i].Head.ID] {
			t.Fatalf("BlockerSummaries[%d] head size %d, want %d", i, sum[i].Head.PayloadSize, sizes[sum[i].Head.ID])
		}
	}
	if bl, err := in.BlockerSummaries(e.ctx, e.db, e.at(time.Minute), 1); err != nil || len(bl) != 1 || bl[0].AggregateID != "j" {
		t.Fatalf("BlockerSummaries limit 1 = %+v, %v", bl, err)
	}
}
