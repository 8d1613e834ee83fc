package postgres_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"flag"
	"slices"
	"testing"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/dialects/postgres"
)

var statsBig = flag.Bool("stats.big", false, "TestStatsCost: 1,000,000 published rows and 1,000 pending (default 20,000 and 100)")

// TestStatsCost: on a table of published rows kept for Retention and a
// small backlog, the plans of stats.sql and inspect_past_retention.sql read
// the outbox table only through indexes (no Seq Scan of it), the rows those
// scans return or filter out (EXPLAIN ANALYZE) stay within a bound set by
// the pending rows and the caps of the counts and do not change when more
// published rows are added; Stats gives exact pending and dead counts and a
// published estimate within 1%, PastRetention its cap + 1. -stats.big uses
// 1,000,000 published rows (then 100,000 more) and 1,000 pending and logs
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
	fill(t, db, base, 1, published+pending, published+1)
	// Every published row is past a retention of a minute an hour later.
	now, retention := base.Add(time.Hour), time.Minute
	// Bounds on the rows read: Stats reads the pending rows twice (count,
	// oldest), up to the cap of cleanup index entries and a few index ends;
	// PastRetention up to its cap.
	statsBound := int64(dialects.StatsExactPublished+1) + 2*int64(pending) + 100
	pastBound := int64(dialects.PastRetentionCap+1) + 100
	statsRead := rowsRead(t, db, d, "stats.sql", statsBound, sql.Named("cap", dialects.StatsExactPublished+1))
	pastRead := rowsRead(t, db, d, "inspect_past_retention.sql", pastBound, sql.Named("before", now.Add(-retention)), sql.Named("cap", dialects.PastRetentionCap+1))
	more := min(published, 100000)
	fill(t, db, base, published+pending+1, published+pending+more, 0)
	if r := rowsRead(t, db, d, "stats.sql", statsBound, sql.Named("cap", dialects.StatsExactPublished+1)); r != statsRead {
		t.Errorf("stats.sql read %d rows with %d published rows kept, %d with %d: the cost grows with the table",
			statsRead, published, r, published+more)
	}
	if r := rowsRead(t, db, d, "inspect_past_retention.sql", pastBound, sql.Named("before", now.Add(-retention)), sql.Named("cap", dialects.PastRetentionCap+1)); r != pastRead {
		t.Errorf("inspect_past_retention.sql read %d rows with %d published rows kept, %d with %d: the cost grows with the table",
			pastRead, published, r, published+more)
	}
	t.Logf("PostgreSQL, %d then %d published rows kept, %d pending: stats.sql reads %d rows (bound %d), inspect_past_retention.sql %d (bound %d)",
		published, published+more, pending, statsRead, statsBound, pastRead, pastBound)
	kept := published + more
	var times []time.Duration
	for range 5 {
		start := time.Now()
		s, err := d.Stats(ctx, db)
		times = append(times, time.Since(start))
		if err != nil {
			t.Fatal(err)
		}
		if s.Pending != int64(pending) || s.Dead != 0 || !s.PublishedEstimated ||
			s.Published < int64(kept)*99/100 || s.Published > int64(kept)*101/100 ||
			!s.OldestPending.Equal(base.Add(time.Duration(published+1)*time.Microsecond)) ||
			!s.OldestPublished.Equal(base.Add(time.Microsecond)) {
			t.Fatalf("stats %+v", s)
		}
	}
	slices.Sort(times)
	t.Logf("PostgreSQL, %d published rows kept, %d pending: Stats median %v (min %v, max %v) over %d runs",
		kept, pending, times[len(times)/2], times[0], times[len(times)-1], len(times))
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
		kept, times[len(times)/2], times[0], times[len(times)-1], len(times))
}

// fill writes rows lo..hi into the outbox table, pending from pendingFrom
// on (0: none pending) and published before it (published at base + i
// µs), and vacuums and analyzes the table.
func fill(t *testing.T, db *sql.DB, base time.Time, lo, hi, pendingFrom int) {
	t.Helper()
	if pendingFrom == 0 {
		pendingFrom = hi + 1
	}
	if _, err := db.ExecContext(t.Context(), `INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload, content_type,
		    created_at, state, next_attempt_at, part, published_at)
		SELECT gen_random_uuid(), 'o', 'a' || (i % 1000), 'e', '\x70'::bytea, 'text/plain', $3::timestamptz + i * interval '1 microsecond',
		       CASE WHEN i < $4::int THEN 1 ELSE 0 END, $3::timestamptz, i % 64,
		       CASE WHEN i < $4::int THEN $3::timestamptz + i * interval '1 microsecond' END
		FROM generate_series($1::int, $2::int) i`, lo, hi, base, pendingFrom); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(t.Context(), `VACUUM ANALYZE outbox`); err != nil {
		t.Fatal(err)
	}
}

// planNode is a node of EXPLAIN (ANALYZE, FORMAT JSON).
type planNode struct {
	NodeType      string     `json:"Node Type"`
	Relation      string     `json:"Relation Name"`
	ActualRows    float64    `json:"Actual Rows"`
	ActualLoops   float64    `json:"Actual Loops"`
	RemovedFilter float64    `json:"Rows Removed by Filter"`
	Plans         []planNode `json:"Plans"`
}

// rowsRead runs EXPLAIN (ANALYZE, FORMAT JSON) of the dialect's SQL file
// and returns the rows its scans of the outbox table returned or removed
// by a filter, over all loops. It fails the test when a scan reads the
// table whole (Seq Scan) or the rows exceed bound.
func rowsRead(t *testing.T, db *sql.DB, d *postgres.Dialect, file string, bound int64, named ...sql.NamedArg) int64 {
	t.Helper()
	query, args, err := postgres.Bind(d, file, named...)
	if err != nil {
		t.Fatal(err)
	}
	var out string
	if err := db.QueryRowContext(t.Context(), "EXPLAIN (ANALYZE, FORMAT JSON) "+query, args...).Scan(&out); err != nil {
		t.Fatal(err)
	}
	var plans []struct {
		Plan planNode `json:"Plan"`
	}
	if err := json.Unmarshal([]byte(out), &plans); err != nil || len(plans) != 1 {
		t.Fatalf("%s: plan %q: %v", file, out, err)
	}
	var read float64
	var walk func(n planNode)
	walk = func(n planNode) {
		if n.Relation == d.Table() {
			if n.NodeType == "Seq Scan" {
				t.Errorf("the plan of %s reads the whole table:\n%s", file, out)
			}
			read += (n.ActualRows + n.RemovedFilter) * n.ActualLoops
		}
		for _, c := range n.Plans {
			walk(c)
		}
	}
	walk(plans[0].Plan)
	if int64(read) > bound {
		t.Errorf("%s read %d rows of the outbox table, want at most %d:\n%s", file, int64(read), bound, out)
	}
	return int64(read)
}
