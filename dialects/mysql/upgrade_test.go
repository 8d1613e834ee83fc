package mysql_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/dialects/mysql"
)

// TestUpgradeFrom001 writes pending, retrying, dead and published rows the
// way the previous version did (with leases), migrates, and checks that
// nothing is lost, partitions are set, the retrying row blocks its
// aggregate and the lease columns are gone.
func TestUpgradeFrom001(t *testing.T) {
	db, _ := openMySQL(t, true)
	ctx := context.Background()
	for _, stmt := range strings.Split(schema001(t, "outbox"), ";\n") {
		if strings.TrimSpace(stmt) == "" {
			continue
		}
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			t.Fatalf("001: %v", err)
		}
	}
	now := time.Now().UTC().Truncate(time.Microsecond)
	type row struct {
		id, aggID   string
		state       int
		attempts    int
		next        time.Time
		lockedBy    any
		lockedUntil any
		publishedAt any
	}
	rows := []row{
		{"00000000-0000-7000-8000-000000000001", "a", 0, 0, now, "relay-1", now.Add(time.Minute), nil},
		{"00000000-0000-7000-8000-000000000002", "a", 0, 0, now, nil, nil, nil},
		{"00000000-0000-7000-8000-000000000003", "b", 0, 2, now.Add(time.Hour), nil, nil, nil},
		{"00000000-0000-7000-8000-000000000004", "b", 0, 0, now, nil, nil, nil},
		{"00000000-0000-7000-8000-000000000005", "c", 2, 9, now, nil, nil, nil},
		{"00000000-0000-7000-8000-000000000006", "d", 1, 0, now, "relay-1", nil, now},
	}
	for _, r := range rows {
		if _, err := db.ExecContext(ctx, `INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload,
			created_at, state, attempts, next_attempt_at, locked_by, locked_until, published_at)
			VALUES (?, 'order', ?, 'e', 'p', ?, ?, ?, ?, ?, ?, ?)`,
			r.id, r.aggID, now, r.state, r.attempts, r.next, r.lockedBy, r.lockedUntil, r.publishedAt); err != nil {
			t.Fatalf("insert: %v", err)
		}
	}
	d, err := mysql.New()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Partitions(ctx, db); !errors.Is(err, dialects.ErrSchemaVersion) {
		t.Fatalf("Partitions before Migrate: %v, want ErrSchemaVersion", err)
	}
	if err := d.Migrate(ctx, db); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	got, err := db.QueryContext(ctx, `SELECT id, aggregate_id, state, part FROM outbox ORDER BY seq`)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for got.Next() {
		var id, agg string
		var state, part int
		if err := got.Scan(&id, &agg, &state, &part); err != nil {
			t.Fatal(err)
		}
		if id != rows[n].id || state != rows[n].state {
			t.Errorf("row %d: %s state %d, want %s state %d", n, id, state, rows[n].id, rows[n].state)
		}
		if want := dialects.PartitionOf("order", agg, dialects.DefaultPartitions); state != 1 && part != want {
			t.Errorf("row %s: partition %d, want %d", id, part, want)
		}
		n++
	}
	if err := got.Err(); err != nil {
		t.Fatal(err)
	}
	got.Close()
	if n != len(rows) {
		t.Fatalf("%d rows after Migrate, want %d", n, len(rows))
	}
	var seq int64
	var dead bool
	var until time.Time
	if err := db.QueryRowContext(ctx, `SELECT b.seq, b.dead, b.until FROM outbox_blocked b
		WHERE b.aggregate_type = 'order' AND b.aggregate_id = 'b'`).Scan(&seq, &dead, &until); err != nil {
		t.Fatalf("retry block of aggregate b: %v", err)
	}
	if seq != 3 || dead || !until.Equal(rows[2].next) {
		t.Errorf("block = seq %d dead %v until %v, want seq 3, retry until %v", seq, dead, until, rows[2].next)
	}
	var blocks int
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM outbox_blocked`).Scan(&blocks); err != nil || blocks != 1 {
		t.Errorf("blocks = %d (%v), want 1", blocks, err)
	}
	var cols int
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM information_schema.columns
		WHERE table_schema = DATABASE() AND table_name = 'outbox' AND column_name IN ('locked_by', 'locked_until')`).Scan(&cols); err != nil || cols != 0 {
		t.Errorf("lease columns left: %d (%v)", cols, err)
	}
	var claimRows int
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM outbox_locks WHERE name = 'claim'`).Scan(&claimRows); err != nil || claimRows != 0 {
		t.Errorf("claim lock rows: %d (%v)", claimRows, err)
	}
	// A writer of the previous version, which knows no partitions, fails.
	if _, err := db.ExecContext(ctx, `INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, created_at, next_attempt_at)
		VALUES ('00000000-0000-7000-8000-000000000009', 'order', 'x', 'e', ?, ?)`, now, now); err == nil {
		t.Error("an INSERT without part succeeded after Migrate")
	}
	// Migrate again: a no-op.
	if err := d.Migrate(ctx, db); err != nil {
		t.Fatalf("second Migrate: %v", err)
	}
	var versions int
	files, err := os.ReadDir("sql/migrations") // every migration, whatever their number
	if err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM outbox_migrations`).Scan(&versions); err != nil || versions != len(files) {
		t.Errorf("versions = %d (%v), want %d", versions, err, len(files))
	}
	fresh, err := mysql.New()
	if err != nil {
		t.Fatal(err)
	}
	if p, err := fresh.Partitions(ctx, db); err != nil || p != dialects.DefaultPartitions {
		t.Errorf("Partitions = %d, %v; want %d", p, err, dialects.DefaultPartitions)
	}
	// The upgraded table reads, in order, what the old one had pending.
	res, err := fresh.Read(ctx, db, dialects.ReadRequest{Partitions: allParts(dialects.DefaultPartitions), Limit: 10, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	recs := res.Records
	var ids []string
	for _, r := range recs {
		ids = append(ids, r.ID[len(r.ID)-1:])
	}
	if got := strings.Join(ids, ","); got != "1,2" {
		t.Errorf("read after upgrade: %s, want 1,2 (b blocked behind its retrying row)", got)
	}
}

// TestMigrateRerunsCutShort002 runs migration 002's statements a second
// time, as after a crash mid-migration (MySQL DDL commits at once): every
// statement must be idempotent.
func TestMigrateRerunsCutShort002(t *testing.T) {
	db, _ := openMySQL(t, true)
	ctx := context.Background()
	d, err := mysql.New(mysql.WithPartitions(8))
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Migrate(ctx, db); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `DELETE FROM outbox_migrations WHERE version = 2`); err != nil {
		t.Fatal(err)
	}
	if err := d.Migrate(ctx, db); err != nil {
		t.Fatalf("Migrate over a half-applied 002: %v", err)
	}
	var parts int
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM outbox_partitions`).Scan(&parts); err != nil || parts != 8 {
		t.Errorf("partitions rows = %d (%v), want 8", parts, err)
	}
	if _, err := mysql.New(mysql.WithPartitions(0)); !errors.Is(err, dialects.ErrInvalidPartitions) {
		t.Errorf("WithPartitions(0): %v", err)
	}
	other, _ := mysql.New(mysql.WithPartitions(16))
	if _, err := other.Partitions(ctx, db); !errors.Is(err, dialects.ErrPartitionMismatch) {
		t.Errorf("Partitions with another count: %v", err)
	}
}

func allParts(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// TestHeadersTruncatedBefore006: on the previous release's schema (headers
// TEXT), a server not in strict mode cuts headers past 65,535 bytes into
// invalid JSON (written here as the writers of that release did); after
// Migrate the read returns that row marked bad (column headers) instead of
// failing. Migration 006 keeps the row and makes headers
// LONGTEXT: the same write is then stored whole. A 006 cut short (its
// version not recorded) runs again.
func TestHeadersTruncatedBefore006(t *testing.T) {
	db, _ := openMySQL(t, true)
	db.SetMaxOpenConns(1) // the session's sql_mode holds for every statement
	ctx := t.Context()
	d, err := mysql.New()
	if err != nil {
		t.Fatal(err)
	}
	if err := mysql.MigrateTo(ctx, d, db, 3); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "SET SESSION sql_mode = ''"); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Truncate(time.Microsecond)
	ev := func(id, agg string) dialects.Event {
		return dialects.Event{ID: id, AggregateType: "order", AggregateID: agg, EventType: "e", Payload: []byte("p"),
			ContentType: "text/plain", Headers: map[string]string{"X-Big": strings.Repeat("h", 70000)}, CreatedAt: now,
			Partition: dialects.PartitionOf("order", agg, dialects.DefaultPartitions)}
	}
	insert := func(e dialects.Event) {
		t.Helper()
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := d.Insert(ctx, tx, []dialects.Event{e}); err != nil {
			t.Fatalf("insert: %v", err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	// insertPrevious writes e as the writers of version 3 did.
	insertPrevious := func(e dialects.Event) {
		t.Helper()
		h, err := json.Marshal(e.Headers)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.ExecContext(ctx, `INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload,
			content_type, headers, created_at, next_attempt_at, part) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			e.ID, e.AggregateType, e.AggregateID, e.EventType, e.Payload, e.ContentType, string(h), e.CreatedAt,
			e.CreatedAt, e.Partition); err != nil {
			t.Fatalf("insert: %v", err)
		}
	}
	read := func() []dialects.Record {
		t.Helper()
		// Rows of this version's writers are due at the server's clock.
		dbNow, err := d.Now(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		res, err := d.Read(ctx, db, dialects.ReadRequest{Partitions: allParts(dialects.DefaultPartitions), Limit: 10, Now: dbNow})
		if err != nil {
			t.Fatalf("Read: %v", err)
		}
		return res.Records
	}
	cut := ev("00000000-0000-7000-8000-000000000001", "a")
	insertPrevious(cut)
	if err := d.Migrate(ctx, db); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	recs := read()
	if len(recs) != 1 || recs[0].Bad == nil || recs[0].Bad.Column != "headers" || len(recs[0].Bad.Raw) != dialects.MaxRawBytes ||
		!strings.Contains(recs[0].Bad.Error(), "unexpected end of JSON input") {
		t.Fatalf("read of the cut headers: %+v; want the row marked bad in its headers", recs)
	}
	// Cut short: 006's version not recorded; it runs again and does nothing.
	if _, err := db.ExecContext(ctx, `DELETE FROM outbox_migrations WHERE version = 6`); err != nil {
		t.Fatal(err)
	}
	if err := d.Migrate(ctx, db); err != nil {
		t.Fatalf("Migrate over a half-applied 006: %v", err)
	}
	var typ string
	var checks int
	if err := db.QueryRowContext(ctx, `SELECT data_type, (SELECT COUNT(*) FROM information_schema.table_constraints
		WHERE constraint_schema = DATABASE() AND table_name = 'outbox' AND constraint_name = 'outbox_part_ck')
		FROM information_schema.columns
		WHERE table_schema = DATABASE() AND table_name = 'outbox' AND column_name = 'headers'`).Scan(&typ, &checks); err != nil {
		t.Fatal(err)
	}
	if typ != "longtext" || checks != 1 {
		t.Fatalf("after 006: headers %s, %d part checks; want longtext and 1", typ, checks)
	}
	whole := ev("00000000-0000-7000-8000-000000000002", "b")
	insert(whole)
	recs = read()
	if len(recs) != 2 || recs[0].ID != cut.ID || recs[0].Bad == nil || recs[1].Bad != nil ||
		recs[1].Headers["X-Big"] != whole.Headers["X-Big"] {
		t.Fatalf("read after 006: %d rows; want the cut row still bad and the new one whole", len(recs))
	}
}
