package txoutbox_test

import (
	"context"
	"database/sql"
	"testing"

	"github.com/DATA-DOG/go-sqlmock"
	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/txoutbox"
)

// newMock returns an Outbox over a sqlmock database (regex matching, order
// enforced) with dialect d; the expectations are checked at cleanup.
func newMock(t *testing.T, d dialects.Dialect, opts ...txoutbox.Option) (*txoutbox.Outbox, sqlmock.Sqlmock, *sql.DB) {
	t.Helper()
	db, mock, err := sqlmock.New(sqlmock.QueryMatcherOption(sqlmock.QueryMatcherRegexp))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := mock.ExpectationsWereMet(); err != nil {
			t.Errorf("sqlmock: %v", err)
		}
		db.Close()
	})
	ob, err := txoutbox.New(db, d, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return ob, mock, db
}

func validEvent() txoutbox.Event {
	return txoutbox.Event{AggregateType: "order", AggregateID: "42", EventType: "order.placed", Payload: []byte(`{"id":42}`)}
}

// commitEvents adds evs in one transaction of ob begun with opts and
// commits it.
func commitEvents(t *testing.T, ob *txoutbox.Outbox, opts []txoutbox.TxOption, evs ...txoutbox.Event) {
	t.Helper()
	tx, err := ob.Begin(context.Background(), nil, opts...)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs {
		if _, err := tx.Add(ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}
