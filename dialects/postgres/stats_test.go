package postgres_test

import (
	"context"
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
// counts and a published estimate within 1%. -stats.big uses 1,000,000
// published rows and 1,000 pending and logs the time per Stats.
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
	b, err := os.ReadFile("sql/stats.sql")
	if err != nil {
		t.Fatal(err)
	}
	var plan []string
	rows, err := db.QueryContext(ctx, "EXPLAIN "+sqlkit.Render(string(b), d.Table()), dialects.StatsExactPublished+1)
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
	for _, l := range plan {
		if strings.Contains(l, "Seq Scan on outbox ") || strings.HasSuffix(l, "Seq Scan on outbox") {
			t.Errorf("the stats plan reads the whole table:\n%s", strings.Join(plan, "\n"))
			break
		}
	}
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
}
