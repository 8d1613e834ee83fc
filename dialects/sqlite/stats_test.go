package sqlite_test

import (
	"context"
	"database/sql"
	"flag"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/dialects/sqlite"
	"github.com/jitoutbox/jitoutbox/internal/sqlcount"
)

var statsBig = flag.Bool("stats.big", false, "TestStatsCost: 1,000,000 published rows and 1,000 pending (default 20,000 and 100)")

// TestStatsCost: on a table of published rows kept for Retention and a
// small backlog, Stats is one statement whose plan reads no table whole
// (every access of the outbox table goes through an index), and gives
// exact pending and dead counts and a published estimate within 1%;
// PastRetention is one statement whose plan reads the outbox table only
// through an index, and it stops at its cap. -stats.big uses 1,000,000
// published rows and 1,000 pending and logs the time per call.
func TestStatsCost(t *testing.T) {
	published, pending := 20000, 100
	if *statsBig {
		published, pending = 1000000, 1000
	}
	var n sqlcount.Counter
	db, err := sqlcount.Open("sqlite", dsn(filepath.Join(t.TempDir(), "stats.db")), &n)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ctx := context.Background()
	d, err := sqlite.New()
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Migrate(ctx, db); err != nil {
		t.Fatal(err)
	}
	base := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC).UnixMicro()
	if _, err := db.ExecContext(ctx, `WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < ?1 + ?2)
		INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload, content_type, created_at, state,
		                    next_attempt_at, part, published_at)
		SELECT 'id-' || i, 'o', 'a' || (i % 1000), 'e', x'70', 'text/plain', ?3 + i,
		       CASE WHEN i <= ?1 THEN 1 ELSE 0 END, ?3 + i, i % 64, CASE WHEN i <= ?1 THEN ?3 + i END
		FROM g`, published, pending, base); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `ANALYZE`); err != nil {
		t.Fatal(err)
	}

	// Every published row is past a retention of a minute an hour later.
	now, retention := time.UnixMicro(base).Add(time.Hour), time.Minute
	checkPlan(t, db, d, "stats.sql", sql.Named("cap", dialects.StatsExactPublished+1), sql.Named("now", time.Now().UnixMicro()))
	checkPlan(t, db, d, "inspect_past_retention.sql", sql.Named("before", now.Add(-retention).UnixMicro()),
		sql.Named("cap", dialects.PastRetentionCap+1))

	var times []time.Duration
	for range 5 {
		before := n.Statements.Load()
		start := time.Now()
		s, err := d.Stats(ctx, db)
		times = append(times, time.Since(start))
		if err != nil {
			t.Fatal(err)
		}
		if got := n.Statements.Load() - before; got != 1 {
			t.Fatalf("Stats sent %d statements, want 1", got)
		}
		if s.Pending != int64(pending) || s.Dead != 0 || !s.PublishedEstimated ||
			s.Published < int64(published)*99/100 || s.Published > int64(published)*101/100 ||
			s.OldestPending.UnixMicro() != base+int64(published)+1 || s.OldestPublished.UnixMicro() != base+1 {
			t.Fatalf("stats %+v", s)
		}
	}
	slices.Sort(times)
	t.Logf("SQLite, %d published rows kept, %d pending: Stats median %v (min %v, max %v) over %d runs",
		published, pending, times[len(times)/2], times[0], times[len(times)-1], len(times))
	times = times[:0]
	for range 5 {
		before := n.Statements.Load()
		start := time.Now()
		past, err := d.PastRetention(ctx, db, now, retention)
		times = append(times, time.Since(start))
		if err != nil {
			t.Fatal(err)
		}
		if got := n.Statements.Load() - before; got != 1 {
			t.Fatalf("PastRetention sent %d statements, want 1", got)
		}
		if past != dialects.PastRetentionCap+1 {
			t.Fatalf("PastRetention = %d, want the cap + 1 (%d)", past, dialects.PastRetentionCap+1)
		}
	}
	slices.Sort(times)
	t.Logf("SQLite, %d published rows kept: PastRetention median %v (min %v, max %v) over %d runs",
		published, times[len(times)/2], times[0], times[len(times)-1], len(times))
}

// checkPlan fails the test when the query plan of the dialect's SQL file
// reads the outbox table whole.
func checkPlan(t *testing.T, db *sql.DB, d *sqlite.Dialect, file string, named ...sql.NamedArg) {
	t.Helper()
	plan := queryPlan(t, db, d, file, named...)
	for _, p := range plan {
		// "SCAN outbox" alone reads the table whole; "SCAN outbox USING
		// ... INDEX" walks an index (the partial ones hold few rows). The
		// blocked table (outbox_blocked) is small and read whole.
		if (p == "SCAN outbox" || strings.HasPrefix(p, "SCAN outbox ")) && !strings.Contains(p, "INDEX") {
			t.Errorf("full scan in the plan of %s: %q\n%s", file, p, strings.Join(plan, "\n"))
		}
	}
}

// queryPlan returns the details of EXPLAIN QUERY PLAN of the dialect's SQL
// file, bound with named; it fails the test on an empty plan.
func queryPlan(t *testing.T, db *sql.DB, d *sqlite.Dialect, file string, named ...sql.NamedArg) []string {
	t.Helper()
	query, args, err := sqlite.Bind(d, file, named...)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := db.QueryContext(t.Context(), "EXPLAIN QUERY PLAN "+query, args...)
	if err != nil {
		t.Fatal(err)
	}
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}
	if len(plan) == 0 {
		t.Fatalf("%s: empty plan", file)
	}
	return plan
}
