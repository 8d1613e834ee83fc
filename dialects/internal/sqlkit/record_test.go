package sqlkit

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/DATA-DOG/go-sqlmock"

	"github.com/jitoutbox/jitoutbox/dialects"
)

// TestScanReadRowsDoNotShareValues: ScanRead reuses one set of scan
// targets for all rows; a row's NULL headers, idempotency key or JSON
// payload must not inherit the previous row's, and every payload keeps its
// own bytes. Records come back in Seq order whatever the row order, with
// the horizon of the last column.
func TestScanReadRowsDoNotShareValues(t *testing.T) {
	db, mock, err := sqlmock.New()
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	at := time.Date(2026, 11, 22, 10, 0, 0, 123000, time.UTC)
	cols := []string{"seq", "id", "aggregate_type", "aggregate_id", "event_type", "payload", "content_type",
		"headers", "idempotency_key", "critical", "created_at", "attempts", "part", "deliver_at", "payload_json", "horizon"}
	mock.ExpectQuery("SELECT").WillReturnRows(sqlmock.NewRows(cols).
		AddRow(int64(7), "id-7", "order", "o-1", "placed", nil, "application/json",
			`{"k":"v"}`, "idem-7", true, at, int64(2), int64(5), at, `{"n":7}`, int64(42)).
		AddRow(int64(3), "id-3", "order", "o-2", "paid", []byte("raw"), "text/plain",
			nil, nil, false, at, int64(0), int64(0), nil, nil, int64(42)).
		AddRow(int64(9), "id-9", "order", "o-1", "shipped", nil, "application/json",
			nil, nil, false, nil, int64(0), int64(5), nil, `{"n":9}`, int64(42)))
	rows, err := db.QueryContext(context.Background(), "SELECT claim")
	if err != nil {
		t.Fatal(err)
	}
	res, err := ScanRead(rows, true, 2)
	if err != nil {
		t.Fatal(err)
	}
	if res.Horizon != 42 {
		t.Fatalf("ScanRead horizon %d, want 42", res.Horizon)
	}
	got := res.Records
	want := []dialects.Record{
		{Seq: 3, Event: dialects.Event{ID: "id-3", AggregateType: "order", AggregateID: "o-2", EventType: "paid",
			Payload: []byte("raw"), ContentType: "text/plain", CreatedAt: at}},
		{Seq: 7, Attempts: 2, DeliverAt: at, Event: dialects.Event{ID: "id-7", AggregateType: "order", AggregateID: "o-1", EventType: "placed",
			Payload: []byte(`{"n":7}`), ContentType: "application/json", Headers: map[string]string{"k": "v"},
			IdempotencyKey: "idem-7", Critical: true, CreatedAt: at, Partition: 5}},
		{Seq: 9, Event: dialects.Event{ID: "id-9", AggregateType: "order", AggregateID: "o-1", EventType: "shipped",
			Payload: []byte(`{"n":9}`), ContentType: "application/json", Partition: 5}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("ScanRead:\n got  %+v\n want %+v", got, want)
	}
	got[0].Payload[0] = 'X'
	if string(got[1].Payload) != `{"n":7}` || string(got[2].Payload) != `{"n":9}` {
		t.Fatalf("payloads share memory: %q, %q", got[1].Payload, got[2].Payload)
	}
	if err := mock.ExpectationsWereMet(); err != nil {
		t.Fatal(err)
	}
}
