package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/dialects/sqlite"
)

// legacyRow is a row written the way the schema of migration 001 was used.
type legacyRow struct {
	id, aggType, aggID    string
	state, attempts       int
	next                  time.Time
	lockedBy              any
	lockedUntil, publishd any
}

// TestUpgradeFrom001 creates the schema as it landed before partitions,
// writes pending, leased, retrying, dead and published rows the old way,
// and checks that Migrate keeps every row, sets the partition of the rows a
// relay or operator still acts on, blocks the retrying aggregate, and is a
// no-op the second time.
func TestUpgradeFrom001(t *testing.T) {
	ctx := context.Background()
	db := openSQLite(t)
	execLegacySchema(t, db, "outbox")
	d, err := sqlite.New(sqlite.WithPartitions(16))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Partitions(ctx, db); !errors.Is(err, dialects.ErrSchemaVersion) {
		t.Fatalf("Partitions on a 001 table: got %v, want ErrSchemaVersion", err)
	}
	now := time.Now().UTC()
	future := now.Add(time.Hour)
	rows := []legacyRow{
		{id: "e1", aggType: "order", aggID: "1", next: now},
		{id: "e2", aggType: "order", aggID: "2", next: now, lockedBy: "relay-a", lockedUntil: future.UnixMicro()},
		{id: "e3", aggType: "order", aggID: "3", attempts: 2, next: future},
		{id: "e4", aggType: "order", aggID: "3", next: now},
		{id: "e5", aggType: "order", aggID: "4", state: 2, attempts: 5, next: now},
		{id: "e6", aggType: "order", aggID: "5", state: 1, next: now, lockedBy: "relay-a", publishd: now.UnixMicro()},
		{id: "e7", aggType: "order", aggID: "6", state: 1, next: now, publishd: now.UnixMicro()},
	}
	for _, r := range rows {
		if _, err := db.ExecContext(ctx, `INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload,
			content_type, headers, idempotency_key, critical, created_at, state, attempts, next_attempt_at,
			locked_by, locked_until, last_error, published_at)
			VALUES (?, ?, ?, 'x', X'01', 'application/octet-stream', NULL, NULL, 0, ?, ?, ?, ?, ?, ?, NULL, ?)`,
			r.id, r.aggType, r.aggID, now.UnixMicro(), r.state, r.attempts, r.next.UnixMicro(),
			r.lockedBy, r.lockedUntil, r.publishd); err != nil {
			t.Fatal(err)
		}
	}
	// The highest seq is deleted: the upgraded table must not hand it out again.
	if _, err := db.ExecContext(ctx, `INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, created_at, next_attempt_at)
		VALUES ('gone', 'order', '9', 'x', 0, 0)`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `DELETE FROM outbox WHERE id = 'gone'`); err != nil {
		t.Fatal(err)
	}

	if err := d.Migrate(ctx, db); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	if n, err := d.Partitions(ctx, db); err != nil || n != 16 {
		t.Fatalf("Partitions = %d, %v; want 16", n, err)
	}
	for _, r := range rows {
		row, err := d.Get(ctx, db, r.id)
		if err != nil {
			t.Fatalf("row %s lost: %v", r.id, err)
		}
		if int(row.State) != r.state || row.Attempts != r.attempts {
			t.Errorf("row %s: state %d attempts %d, want %d %d", r.id, row.State, row.Attempts, r.state, r.attempts)
		}
		if r.state != 1 {
			if want := dialects.PartitionOf(r.aggType, r.aggID, 16); row.Partition != want {
				t.Errorf("row %s: partition %d, want %d", r.id, row.Partition, want)
			}
		}
	}
	var blocked []string
	q, err := db.QueryContext(ctx, `SELECT o.id FROM outbox_blocked b JOIN outbox o ON o.seq = b.seq WHERE NOT b.dead`)
	if err != nil {
		t.Fatal(err)
	}
	for q.Next() {
		var id string
		if err := q.Scan(&id); err != nil {
			t.Fatal(err)
		}
		blocked = append(blocked, id)
	}
	if err := q.Err(); err != nil {
		t.Fatal(err)
	}
	q.Close()
	if len(blocked) != 1 || blocked[0] != "e3" {
		t.Errorf("retry blocks on %v, want [e3]", blocked)
	}
	var claimRows int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM outbox_locks WHERE name = 'claim'`).Scan(&claimRows); err != nil || claimRows != 0 {
		t.Errorf("claim lock rows = %d, %v; want 0", claimRows, err)
	}
	var leaseCols int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM pragma_table_info('outbox') WHERE name IN ('locked_by', 'locked_until')`).Scan(&leaseCols); err != nil || leaseCols != 0 {
		t.Errorf("lease columns left: %d, %v", leaseCols, err)
	}

	// Every pending row is read (e4 is held back behind the retrying e3).
	all := make([]int, 16)
	for i := range all {
		all[i] = i
	}
	res, err := d.Read(ctx, db, dialects.ReadRequest{Partitions: all, Limit: 100, Now: now.Add(time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	recs := res.Records
	var ids []string
	for _, r := range recs {
		ids = append(ids, r.ID)
	}
	if len(ids) != 2 || ids[0] != "e1" || ids[1] != "e2" {
		t.Errorf("read %v, want [e1 e2]", ids)
	}

	// A second Migrate changes nothing.
	before := tableCounts(t, db)
	if err := d.Migrate(ctx, db); err != nil {
		t.Fatalf("second Migrate: %v", err)
	}
	if after := tableCounts(t, db); after != before {
		t.Errorf("second Migrate changed the tables: %v -> %v", before, after)
	}

	// A new row gets a seq above every seq the old table handed out.
	ev := dialects.Event{ID: "e8", AggregateType: "order", AggregateID: "7", EventType: "x", CreatedAt: now,
		Partition: dialects.PartitionOf("order", "7", 16)}
	if err := d.Insert(ctx, db, []dialects.Event{ev}); err != nil {
		t.Fatal(err)
	}
	var maxSeq, newSeq int64
	if err := db.QueryRowContext(ctx, `SELECT seq FROM outbox WHERE id = 'e8'`).Scan(&newSeq); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRowContext(ctx, `SELECT MAX(seq) FROM outbox WHERE id <> 'e8'`).Scan(&maxSeq); err != nil {
		t.Fatal(err)
	}
	if newSeq <= maxSeq+1 {
		t.Errorf("new seq %d reuses the deleted seq %d", newSeq, maxSeq+1)
	}
}

// tableCounts summarises the tables Migrate touches.
func tableCounts(t *testing.T, db *sql.DB) [5]int64 {
	t.Helper()
	var c [5]int64
	err := db.QueryRowContext(context.Background(), `SELECT
		(SELECT count(*) FROM outbox), (SELECT count(*) FROM outbox_partitions),
		(SELECT count(*) FROM outbox_blocked), (SELECT count(*) FROM outbox_migrations),
		(SELECT count(*) FROM outbox_meta)`).Scan(&c[0], &c[1], &c[2], &c[3], &c[4])
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// sqlFile reads one of the package's SQL files.
func sqlFile(name string) (string, error) {
	b, err := os.ReadFile(name)
	return string(b), err
}
