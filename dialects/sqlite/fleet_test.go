package sqlite_test

import (
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects/sqlite"
	"github.com/jitoutbox/jitoutbox/internal/sqlcount"
)

// TestActivityPlan: on a table of 5,000 published rows and 5 pending,
// Activity of the table is one statement whose plan reads the outbox
// table (o) through claim_idx only, whether a row is due or none is
// (retries an hour away, whose time Activity then gives). The plans are
// logged.
func TestActivityPlan(t *testing.T) {
	const published, pending = 5000, 5
	var n sqlcount.Counter
	db, err := sqlcount.Open("sqlite", dsn(filepath.Join(t.TempDir(), "activity.db")), &n)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ctx := t.Context()
	d, err := sqlite.New()
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Migrate(ctx, db); err != nil {
		t.Fatal(err)
	}
	base := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	if _, err := db.ExecContext(ctx, `WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < ?1 + ?2)
		INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload, content_type, created_at, state,
		                    next_attempt_at, part, published_at)
		SELECT 'id-' || i, 'o', 'a' || (i % 1000), 'e', x'70', 'text/plain', ?3, CASE WHEN i <= ?1 THEN 1 ELSE 0 END,
		       ?3, i % 64, CASE WHEN i <= ?1 THEN ?3 END
		FROM g`, published, pending, base.UnixMicro()); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `ANALYZE`); err != nil {
		t.Fatal(err)
	}
	activity := func(what string, want time.Time) {
		t.Helper()
		explainActivity(t, db, d, what)
		before := n.Statements.Load()
		got, err := d.Activity(ctx, db, []string{d.Table()})
		if err != nil || got[0].Err != nil || !got[0].NextDue.Equal(want) {
			t.Fatalf("%s: Activity = %+v, %v; want NextDue %v", what, got, err, want)
		}
		if s := n.Statements.Load() - before; s != 1 {
			t.Fatalf("%s: Activity sent %d statements, want 1", what, s)
		}
	}
	activity("a row due", base)
	retry := time.Now().Add(time.Hour).UTC().Truncate(time.Microsecond)
	if _, err := db.ExecContext(ctx, "UPDATE outbox SET next_attempt_at = ?1 WHERE state = 0", retry.UnixMicro()); err != nil {
		t.Fatal(err)
	}
	activity("no row due", retry)
}

// explainActivity logs the query plan of activity.sql and fails the test
// when it reads the outbox table (o) other than through claim_idx.
func explainActivity(t *testing.T, db *sql.DB, d *sqlite.Dialect, what string) {
	t.Helper()
	plan := queryPlan(t, db, d, "activity.sql", sql.Named("now", time.Now().UnixMicro()))
	for _, detail := range plan {
		if (strings.HasPrefix(detail, "SCAN o") || strings.HasPrefix(detail, "SEARCH o")) && !strings.Contains(detail, "outbox_claim_idx") {
			t.Errorf("%s: the probe reads the outbox table other than through claim_idx: %q", what, detail)
		}
	}
	t.Logf("activity.sql, %s:\n%s", what, strings.Join(plan, "\n"))
	if !strings.Contains(strings.Join(plan, "\n"), "outbox_claim_idx") {
		t.Fatalf("%s: the plan does not read claim_idx", what)
	}
}
