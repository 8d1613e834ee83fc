package postgres_test

import (
	"context"
	"database/sql"
	"flag"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/dialects/internal/sqlkit"
	"github.com/jitoutbox/jitoutbox/dialects/postgres"
)

var statsBig = flag.Bool("stats.big", false, "TestStatsCost: 1,000,000 published rows and 1,000 pending (default 20,000 and 100)")

// TestStatsCost: on a table of published rows kept for Retention and a
// small backlog, the plan of stats.sql reads the outbox table only through
// indexes (no Seq Scan of it), and Stats gives exact pending and dead
// counts and a published estimate within 1%; the plan of
// inspect_past_retention.sql has no Seq Scan of the outbox table either,
// and PastRetention stops at its cap. -stats.big uses 1,000,000 published rows and 1,000 pending and logs
// the time per call.
func TestStatsCost(t *testing.T) {
	published, pending := 20000, 100
	if *statsBig {
		published, pending = 1000000, 1000
	}
	db := openPostgres(t, "pgx")
	ctx := context.Background()
	d, err := postgres.New()
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Migrate(ctx, db); err != nil {
		t.Fatal(err)
	}
	base := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	if _, err := db.ExecContext(ctx, `INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload, content_type,
		    created_at, state, next_attempt_at, part, published_at)
		SELECT gen_random_uuid(), 'o', 'a' || (i % 1000), 'e', '\x70'::bytea, 'text/plain', $3::timestamptz + i * interval '1 microsecond',
		       CASE WHEN i <= $1::int THEN 1 ELSE 0 END, $3::timestamptz, i % 64,
		       CASE WHEN i <= $1 THEN $3::timestamptz + i * interval '1 microsecond' END
		FROM generate_series(1, $1::int + $2::int) i`, published, pending, base); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `VACUUM ANALYZE outbox`); err != nil {
		t.Fatal(err)
	}
	// Every published row is past a retention of a minute an hour later.
	now, retention := base.Add(time.Hour), time.Minute
	checkPlan(t, db, d, "stats.sql", dialects.StatsExactPublished+1)
	checkPlan(t, db, d, "inspect_past_retention.sql", now.Add(-retention), dialects.PastRetentionCap+1)
	var times []time.Duration
	for range 5 {
		start := time.Now()
		s, err := d.Stats(ctx, db)
		times = append(times, time.Since(start))
		if err != nil {
			t.Fatal(err)
		}
		if s.Pending != int64(pending) || s.Dead != 0 || !s.PublishedEstimated ||
			s.Published < int64(published)*99/100 || s.Published > int64(published)*101/100 ||
			!s.OldestPending.Equal(base.Add(time.Duration(published+1)*time.Microsecond)) ||
			!s.OldestPublished.Equal(base.Add(time.Microsecond)) {
			t.Fatalf("stats %+v", s)
		}
	}
	slices.Sort(times)
	t.Logf("PostgreSQL, %d published rows kept, %d pending: Stats median %v (min %v, max %v) over %d runs",
		published, pending, times[len(times)/2], times[0], times[len(times)-1], len(times))
	times = times[:0]
	for range 5 {
		start := time.Now()
		past, err := d.PastRetention(ctx, db, now, retention)
		times = append(times, time.Since(start))
		if err != nil {
			t.Fatal(err)
		}
		if past != dialects.PastRetentionCap+1 {
			t.Fatalf("PastRetention = %d, want the cap + 1 (%d)", past, dialects.PastRetentionCap+1)
		}
	}
	slices.Sort(times)
	t.Logf("PostgreSQL, %d published rows kept: PastRetention median %v (min %v, max %v) over %d runs",
		published, times[len(times)/2], times[0], times[len(times)-1], len(times))
}

// checkPlan fails the test when the plan of the dialect's SQL file reads
// the outbox table whole (a Seq Scan of it).
func checkPlan(t *testing.T, db *sql.DB, d *postgres.Dialect, file string, args ...any) {
	t.Helper()
	b, err := os.ReadFile("sql/" + file)
	if err != nil {
		t.Fatal(err)
	}
	var plan []string
	rows, err := db.QueryContext(t.Context(), "EXPLAIN "+sqlkit.Render(string(b), d.Table()), args...)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, line)
	}
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}
	if len(plan) == 0 {
		t.Fatalf("%s: empty plan", file)
	}
	for _, l := range plan {
		if strings.Contains(l, "Seq Scan on outbox ") || strings.HasSuffix(l, "Seq Scan on outbox") {
			t.Errorf("the plan of %s reads the whole table:\n%s", file, strings.Join(plan, "\n"))
			break
		}
	}
}
