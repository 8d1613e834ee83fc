// Package inboxtest helps the adapter packages' tests: an Inbox on a SQLite
// file, a check that a message applies once, and the end-to-end check of
// encrypted payloads (PublishEncrypted, then Encrypted.Check) every broker
// runs.
package inboxtest

import (
	"context"
	"database/sql"
	"testing"

	"github.com/jitoutbox/jitoutbox/inbox"
	"github.com/jitoutbox/jitoutbox/internal/testdb"
)

// Fixture is an Inbox on its own SQLite database with a side-effect table.
type Fixture struct {
	In *inbox.Inbox
	DB *sql.DB
}

// New returns a migrated Fixture, removed when the test ends.
func New(t testing.TB) *Fixture {
	t.Helper()
	db, _ := testdb.SQLite(t)
	in, err := inbox.New(inbox.Config{Dialect: inbox.SQLite})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := in.Migrate(ctx, db); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `CREATE TABLE effects (event_id TEXT NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	return &Fixture{In: in, DB: db}
}

// Handle handles m with a side effect that writes one row for its id.
func (f *Fixture) Handle(t testing.TB, m inbox.Message) (inbox.Result, error) {
	t.Helper()
	return f.In.Handle(context.Background(), f.DB, m, func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO effects (event_id) VALUES (?)`, m.EventID)
		return err
	})
}

// Once checks that deliveries of one event (the first and its
// redeliveries or republishes) apply once: the first Applied, the others
// Duplicate, one side effect.
func (f *Fixture) Once(t testing.TB, deliveries ...inbox.Message) {
	t.Helper()
	for i, m := range deliveries {
		want := inbox.Duplicate
		if i == 0 {
			want = inbox.Applied
		}
		if res, err := f.Handle(t, m); err != nil || res != want {
			t.Fatalf("delivery %d of %s: %v, %v; want %v", i+1, m.EventID, res, err, want)
		}
	}
	var n int
	if err := f.DB.QueryRow(`SELECT COUNT(*) FROM effects WHERE event_id = ?`, deliveries[0].EventID).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Fatalf("event %s applied %d times", deliveries[0].EventID, n)
	}
}

// Equal reports the first difference between got and want's event fields
// and payload ("" if none).
func Equal(got, want inbox.Message) string {
	switch {
	case got.EventID != want.EventID:
		return "event id " + got.EventID + ", want " + want.EventID
	case got.EventType != want.EventType:
		return "event type " + got.EventType + ", want " + want.EventType
	case got.AggregateType != want.AggregateType:
		return "aggregate type " + got.AggregateType + ", want " + want.AggregateType
	case got.AggregateID != want.AggregateID:
		return "aggregate id " + got.AggregateID + ", want " + want.AggregateID
	case got.Seq != want.Seq:
		return "seq differs"
	case string(got.Payload) != string(want.Payload):
		return "payload " + string(got.Payload) + ", want " + string(want.Payload)
	}
	return ""
}
