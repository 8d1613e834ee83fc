package mysql

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	driver "github.com/go-sql-driver/mysql"

	"github.com/jitoutbox/jitoutbox/dialects"
)

// TestReadPlan checks on a 100,000-row backlog that read.sql walks an
// index in seq order and stops at the limit: no sort of the pending rows.
// (An internal test: it explains the dialect's own statement. It opens
// its database itself, as internal/testdb imports this package.)
func TestReadPlan(t *testing.T) {
	db, d := migratedInternal(t)
	ctx := context.Background()
	// MariaDB's sequence engine makes the backlog in one statement.
	if _, err := db.ExecContext(ctx, `INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, created_at, next_attempt_at, part)
		SELECT UUID(), 'o', CONCAT('a', seq MOD 1000), 'e', NOW(6), NOW(6), seq MOD 64 FROM seq_1_to_100000`); err != nil {
		t.Skipf("no sequence engine (MySQL?): %v", err)
	}
	if _, err := db.ExecContext(ctx, `ANALYZE TABLE outbox`); err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{1, 2, 4, 16, 64} {
		parts := make([]int, n)
		for i := range parts {
			parts[i] = i * (64 / n)
		}
		now := time.Now().UTC()
		query, args, err := d.read.Bind(sql.Named("parts", parts), sql.Named("after", 0), sql.Named("now", now), sql.Named("limit", 500))
		if err != nil {
			t.Fatal(err)
		}
		rows, err := db.QueryContext(ctx, "EXPLAIN "+query, args...)
		if err != nil {
			t.Fatal(err)
		}
		first := true
		for rows.Next() {
			var m map[string]string
			if m, err = scanMap(rows); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(m["Extra"], "filesort") || strings.Contains(m["Extra"], "temporary") {
				t.Errorf("%d partitions: %v", n, m)
			}
			if first && !strings.HasSuffix(m["key"], "_claim_idx") && !strings.HasSuffix(m["key"], "_part_idx") {
				t.Errorf("%d partitions: read uses key %q: %v", n, m["key"], m)
			}
			first = false
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
		start := time.Now()
		res, err := d.Read(ctx, db, dialects.ReadRequest{Partitions: parts, Limit: 500, Now: now})
		if err != nil || len(res.Records) != 500 {
			t.Fatalf("%d partitions: read %d rows, %v", n, len(res.Records), err)
		}
		t.Logf("%d partitions: read 500 rows in %v", n, time.Since(start))
	}
}

// scanMap scans one EXPLAIN row into column name -> text.
func scanMap(rows *sql.Rows) (map[string]string, error) {
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	vals := make([]sql.NullString, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := rows.Scan(ptrs...); err != nil {
		return nil, err
	}
	m := make(map[string]string, len(cols))
	for i, c := range cols {
		m[c] = vals[i].String
	}
	return m, nil
}

// migratedInternal opens the test database (openInternal) and migrates a
// dialect made with opts on it.
func migratedInternal(t *testing.T, opts ...Option) (*sql.DB, *Dialect) {
	t.Helper()
	db := openInternal(t)
	d, err := New(opts...)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Migrate(context.Background(), db); err != nil {
		t.Fatal(err)
	}
	return db, d
}

// openInternal opens a fresh database for the package's internal tests
// from JITOUTBOX_MYSQL_DSN (unset skips), dropped on cleanup.
func openInternal(t *testing.T) *sql.DB {
	t.Helper()
	dsn := os.Getenv("JITOUTBOX_MYSQL_DSN")
	if dsn == "" {
		t.Skip("JITOUTBOX_MYSQL_DSN not set: skipping MySQL/MariaDB suite")
	}
	cfg, err := driver.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	cfg.ParseTime, cfg.Loc = true, time.UTC
	ctx := context.Background()
	admin, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "jit_" + hex.EncodeToString(b[:])
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatal(err)
	}
	cfg.DBName = name
	db, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		db.Close()
		_, _ = admin.ExecContext(context.Background(), "DROP DATABASE "+name)
		admin.Close()
	})
	return db
}

// TestInsertHandoffPaths runs the hand-over on both paths, whatever the
// server: INSERT ... RETURNING (MariaDB) and INSERT then SELECT by id
// (MySQL 8, and any server not yet identified).
func TestInsertHandoffPaths(t *testing.T) {
	db, d := migratedInternal(t, WithPartitions(4))
	ctx := context.Background()
	for i, server := range []int32{serverMariaDB, serverMySQL} {
		if server == serverMariaDB && d.server.Load() != serverMariaDB {
			continue // a MySQL server: RETURNING is not there
		}
		d.server.Store(server)
		ev := func(n int, agg string) dialects.Event {
			return dialects.Event{ID: fmt.Sprintf("00000000-0000-7000-8000-%012d", 10*i+n), AggregateType: "o", AggregateID: agg,
				EventType: "e", CreatedAt: time.Now(), Partition: dialects.PartitionOf("o", agg, 4)}
		}
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		a, b := fmt.Sprint("a", i), fmt.Sprint("b", i)
		recs, err := d.InsertHandoff(ctx, tx, []dialects.Event{ev(1, a), ev(2, a), ev(3, b)})
		if err != nil || len(recs) != 3 || recs[0].Seq >= recs[1].Seq || recs[2].AggregateID != b {
			t.Fatalf("server %d: first hand-over = %+v, %v", server, recs, err)
		}
		// a now has pending rows: its next event is left to the read.
		recs, err = d.InsertHandoff(ctx, tx, []dialects.Event{ev(4, a)})
		if err != nil || len(recs) != 0 {
			t.Fatalf("server %d: hand-over behind a pending row = %+v, %v", server, recs, err)
		}
		// Of several aggregates, only the busy ones are left to the read:
		// a (pending rows) and c (a block); d is free.
		c, dd := fmt.Sprint("c", i), fmt.Sprint("d", i)
		if _, err := tx.ExecContext(ctx, "INSERT INTO outbox_blocked (part, aggregate_type, aggregate_id, seq, dead, `until`) VALUES (?, 'o', ?, 1, FALSE, NOW(6))",
			dialects.PartitionOf("o", c, 4), c); err != nil {
			t.Fatal(err)
		}
		recs, err = d.InsertHandoff(ctx, tx, []dialects.Event{ev(5, a), ev(6, c), ev(7, dd)})
		if err != nil || len(recs) != 1 || recs[0].AggregateID != dd {
			t.Fatalf("server %d: hand-over of a busy, a blocked and a free aggregate = %+v, %v", server, recs, err)
		}
		recs, err = d.InsertHandoff(ctx, tx, []dialects.Event{ev(8, c)})
		if err != nil || len(recs) != 0 {
			t.Fatalf("server %d: hand-over of a blocked aggregate = %+v, %v", server, recs, err)
		}
		// One free event: its record has the row's seq.
		e := fmt.Sprint("e", i)
		recs, err = d.InsertHandoff(ctx, tx, []dialects.Event{ev(9, e)})
		if err != nil || len(recs) != 1 || recs[0].ID != ev(9, e).ID {
			t.Fatalf("server %d: hand-over of one free event = %+v, %v", server, recs, err)
		}
		var seq int64
		if err := tx.QueryRowContext(ctx, "SELECT seq FROM outbox WHERE id = ?", recs[0].ID).Scan(&seq); err != nil || seq != recs[0].Seq {
			t.Fatalf("server %d: handed-over seq %d, the row's %d (%v)", server, recs[0].Seq, seq, err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestReadCriticalPlan checks on a 100,000-row backlog of ordinary rows
// that read_critical.sql finds its candidates in critical_idx, in seq
// order (no sort of the pending rows; the outer sort is of the window's
// candidates at most).
func TestReadCriticalPlan(t *testing.T) {
	db, d := migratedInternal(t)
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, `INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, critical, created_at, next_attempt_at, part)
		SELECT UUID(), 'o', CONCAT('a', seq MOD 1000), 'e', seq MOD 10000 = 0, NOW(6), NOW(6), seq MOD 64 FROM seq_1_to_100000`); err != nil {
		t.Skipf("no sequence engine (MySQL?): %v", err)
	}
	if _, err := db.ExecContext(ctx, `ANALYZE TABLE outbox`); err != nil {
		t.Fatal(err)
	}
	sixteen := make([]int, 16)
	for i := range sixteen {
		sixteen[i] = i
	}
	now := time.Now().UTC()
	// A relay's owned partitions, and the one or two a wake names (where a
	// plan by part_idx would walk the partition's whole backlog).
	for _, parts := range [][]int{sixteen, {5}, {5, 9}} {
		criticalPlan(t, db, d, parts, now)
	}
}

func criticalPlan(t *testing.T, db *sql.DB, d *Dialect, parts []int, now time.Time) {
	ctx := context.Background()
	query, args, err := d.readCritical.Bind(sql.Named("parts", parts), sql.Named("now", now),
		sql.Named("window", dialects.CriticalWindow), sql.Named("limit", 500))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := db.QueryContext(ctx, "EXPLAIN "+query, args...)
	if err != nil {
		t.Fatal(err)
	}
	var plan []map[string]string
	for rows.Next() {
		m, err := scanMap(rows)
		if err != nil {
			t.Fatal(err)
		}
		plan = append(plan, m)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	found := false
	for _, m := range plan {
		if m["select_type"] != "DERIVED" {
			continue
		}
		found = true
		if !strings.HasSuffix(m["key"], "_critical_idx") || strings.Contains(m["Extra"], "filesort") {
			t.Errorf("%d partitions: the candidates are not read from critical_idx in seq order: %v", len(parts), m)
		}
	}
	if !found {
		t.Errorf("%d partitions: no DERIVED step in the plan: %v", len(parts), plan)
	}
	start := time.Now()
	res, err := d.ReadCritical(ctx, db, dialects.CriticalRequest{Partitions: parts, Limit: 500, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("critical read of %d partitions: %d rows in %v", len(parts), len(res.Records), time.Since(start))
}

// TestReadsMakeNoDiskTable checks that the reads that window their
// candidates in a derived table (the critical read, the read ahead) create
// no on-disk temporary table: MariaDB writes a derived table holding BLOB
// or TEXT columns (payload, headers) to disk, which made a one-row critical
// read wait tens of milliseconds while a drain wrote.
func TestReadsMakeNoDiskTable(t *testing.T) {
	db, d := migratedInternal(t)
	db.SetMaxOpenConns(1) // SHOW SESSION STATUS reads the reads' own session
	ctx := context.Background()
	now := time.Now().UTC()
	var evs []dialects.Event
	for i := range 20 {
		evs = append(evs, dialects.Event{ID: fmt.Sprintf("00000000-0000-7000-8000-%012d", i), AggregateType: "o",
			AggregateID: strconv.Itoa(i % 5), EventType: "e", Payload: []byte(`{"n":1}`), ContentType: "application/json",
			Headers: map[string]string{"k": "v"}, Critical: i%2 == 0, CreatedAt: now, Partition: 3})
	}
	if err := d.Insert(ctx, db, evs); err != nil {
		t.Fatal(err)
	}
	diskTables := func() int {
		t.Helper()
		var name string
		var n int
		if err := db.QueryRowContext(ctx, `SHOW SESSION STATUS LIKE 'Created_tmp_disk_tables'`).Scan(&name, &n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := diskTables()
	res, err := d.ReadCritical(ctx, db, dialects.CriticalRequest{Partitions: []int{3}, Limit: 500, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	recs := res.Records
	if res.Candidates != 10 {
		t.Errorf("critical read: %d candidates, want the 10 time-critical rows", res.Candidates)
	}
	if len(recs) != 3 || string(recs[0].Payload) != `{"n":1}` || recs[0].Headers["k"] != "v" {
		t.Fatalf("critical read: %d rows (want the 3 that are first of their aggregates), first %+v", len(recs), recs)
	}
	ahead, err := d.Read(ctx, db, dialects.ReadRequest{Partitions: []int{3}, After: recs[0].Seq, Horizon: recs[0].Seq + 100, Limit: 500, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if len(ahead.Records) != 19 || ahead.Records[0].Headers["k"] != "v" {
		t.Fatalf("read ahead: %d rows, want the 19 after the first", len(ahead.Records))
	}
	if n := diskTables() - before; n != 0 {
		t.Errorf("the critical read and the read ahead created %d on-disk temporary tables, want none", n)
	}
}
