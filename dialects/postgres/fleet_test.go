package postgres_test

import (
	"database/sql"
	"strings"
	"testing"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects/postgres"
)

// TestActivityPlan: on a table of 100,000 published rows and 5 pending,
// the probe of Activity (activity.sql) reads the outbox table through
// claim_idx only (no Seq Scan, which rowsRead refuses): a row or two when
// a row is due, the pending rows when none is (retries an hour away); as
// many after 100,000 more published rows. Activity then gives the retry
// time. The plans are logged.
func TestActivityPlan(t *testing.T) {
	db := openPostgres(t, "pgx")
	ctx := t.Context()
	d, err := postgres.New()
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Migrate(ctx, db); err != nil {
		t.Fatal(err)
	}
	const published, pending = 100000, 5
	base := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	fill(t, db, base, 1, published+pending, published+1)
	logPlan(t, db, d, "a row due")
	if r := rowsRead(t, db, d, "activity.sql", 2); r < 1 {
		t.Fatalf("activity.sql read %d rows of a table with a due row", r)
	}

	retry := time.Now().Add(time.Hour).UTC().Truncate(time.Microsecond)
	if _, err := db.ExecContext(ctx, "UPDATE outbox SET next_attempt_at = $1 WHERE state = 0", retry); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "VACUUM ANALYZE outbox"); err != nil {
		t.Fatal(err)
	}
	logPlan(t, db, d, "no row due")
	bound := int64(2 * pending)
	read := rowsRead(t, db, d, "activity.sql", bound)
	fill(t, db, base, published+pending+1, 2*published+pending, 0)
	if r := rowsRead(t, db, d, "activity.sql", bound); r != read {
		t.Errorf("activity.sql read %d rows with %d published rows, %d with %d: the cost grows with the table",
			read, published, r, 2*published)
	}
	got, err := d.Activity(ctx, db, []string{d.Table()})
	if err != nil || got[0].Err != nil || !got[0].NextDue.Equal(retry) {
		t.Fatalf("Activity = %+v, %v; want NextDue %v", got, err, retry)
	}
}

// logPlan logs EXPLAIN (ANALYZE) of activity.sql.
func logPlan(t *testing.T, db *sql.DB, d *postgres.Dialect, what string) {
	t.Helper()
	query, _, err := postgres.Bind(d, "activity.sql")
	if err != nil {
		t.Fatal(err)
	}
	plan := column[string](t, db, "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) "+query)
	t.Logf("activity.sql, %s:\n%s", what, strings.Join(plan, "\n"))
}
