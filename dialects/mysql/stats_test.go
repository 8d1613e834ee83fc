package mysql_test

import (
	"database/sql"
	"flag"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/dialects/mysql"
	"github.com/jitoutbox/jitoutbox/internal/sqlcount"
)

var statsBig = flag.Bool("stats.big", false, "TestStatsCost: 1,000,000 published rows and 1,000 pending (default 20,000 and 100)")

// rowsRead returns the session's Handler_read_* counters summed: the rows
// (index entries and table rows) the storage engine handed to the server
// on this connection so far. db must hold one connection.
func rowsRead(t *testing.T, db *sql.DB) int64 {
	t.Helper()
	rows, err := db.QueryContext(t.Context(), "SHOW SESSION STATUS LIKE 'Handler_read%'")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var sum int64
	for rows.Next() {
		var name string
		var v int64
		if err := rows.Scan(&name, &v); err != nil {
			t.Fatal(err)
		}
		sum += v
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return sum
}

// TestStatsCost: on a table of published rows kept for Retention and a
// small backlog, Stats and PastRetention (a scrape) are one statement
// each whose plan reads no table whole, and the rows each reads (the
// server's own Handler_read_* counters of the session) are bounded by the
// pending rows and the caps of their counts (dialects.StatsExactPublished,
// dialects.PastRetentionCap) and do not change when more published rows
// are added. Stats gives exact pending and dead counts and a published
// estimate within 1%; PastRetention its cap + 1. -stats.big uses
// 1,000,000 published rows (then 100,000 more) and 1,000 pending and logs
// the time per call.
func TestStatsCost(t *testing.T) {
	published, pending := 20000, 100
	if *statsBig {
		published, pending = 1000000, 1000
	}
	more := min(published, 100000) // published rows added for the second measure
	plain, db, n := openCounting(t)
	ctx := t.Context()
	d, err := mysql.New()
	if err != nil {
		t.Fatal(err)
	}
	// Migrations run PREPARE, which the prepared statement protocol of
	// the counting connection cannot carry: migrate and fill on a plain one.
	if err := d.Migrate(ctx, plain); err != nil {
		t.Fatal(err)
	}
	base := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	fill(t, plain, base, 1, published+pending, published+1)
	// Every published row is past a retention of a minute an hour later.
	now, retention := base.Add(time.Hour), time.Minute

	for file, named := range map[string][]sql.NamedArg{
		"stats.sql":                  {sql.Named("cap", dialects.StatsExactPublished+1)},
		"inspect_past_retention.sql": {sql.Named("before", now.Add(-retention)), sql.Named("cap", dialects.PastRetentionCap+1)},
	} {
		query, args, err := mysql.Bind(d, file, named...)
		if err != nil {
			t.Fatal(err)
		}
		checkPlan(t, db, query, args...)
	}

	calls := []struct {
		name string
		// bound on the rows read: Stats reads the pending rows twice
		// (count, oldest); each capped count reads up to its cap of index
		// entries and as many rows of the derived table that counts them
		// (Handler_read_rnd_next); plus a few index ends and blocked rows.
		bound int64
		call  func(wantPublished int) error
	}{
		{"Stats", 2*int64(dialects.StatsExactPublished+1) + 3*int64(pending) + 100, func(wantPublished int) error {
			s, err := d.Stats(ctx, db)
			if err == nil && (s.Pending != int64(pending) || s.Dead != 0 || !s.PublishedEstimated ||
				s.Published < int64(wantPublished)*99/100 || s.Published > int64(wantPublished)*101/100 ||
				!s.OldestPending.Equal(base.Add(time.Duration(published+1)*time.Microsecond)) ||
				!s.OldestPublished.Equal(base.Add(time.Microsecond))) {
				err = fmt.Errorf("stats %+v", s)
			}
			return err
		}},
		{"PastRetention", 2*int64(dialects.PastRetentionCap+1) + 100, func(int) error {
			past, err := d.PastRetention(ctx, db, now, retention)
			if err == nil && past != dialects.PastRetentionCap+1 {
				err = fmt.Errorf("PastRetention = %d, want the cap + 1 (%d)", past, dialects.PastRetentionCap+1)
			}
			return err
		}},
	}
	times := map[string][]time.Duration{}
	measure := func(wantPublished int) map[string]int64 {
		t.Helper()
		reads := map[string]int64{}
		for _, c := range calls {
			for i := range 5 {
				r, stmts, took, err := cost(t, db, n, func() error { return c.call(wantPublished) })
				if err != nil {
					t.Fatalf("%s: %v", c.name, err)
				}
				if stmts != 1 {
					t.Fatalf("%s sent %d statements, want 1", c.name, stmts)
				}
				if r > c.bound {
					t.Fatalf("%s read %d rows, want at most %d (%d published rows kept, %d pending)",
						c.name, r, c.bound, wantPublished, pending)
				}
				if i > 0 && r != reads[c.name] {
					t.Fatalf("%s read %d rows, then %d on the same table", c.name, reads[c.name], r)
				}
				reads[c.name] = r
				times[c.name] = append(times[c.name], took)
			}
		}
		return reads
	}
	read1 := measure(published)
	fill(t, plain, base, published+pending+1, published+pending+more, 0)
	read2 := measure(published + more)
	for _, c := range calls {
		if read2[c.name] != read1[c.name] {
			t.Errorf("%s read %d rows with %d published rows kept, %d with %d: the cost grows with the table",
				c.name, read1[c.name], published, read2[c.name], published+more)
		}
		ts := times[c.name]
		slices.Sort(ts)
		t.Logf("MariaDB/MySQL, %d then %d published rows kept, %d pending: %s read %d rows (bound %d), median %v (min %v, max %v) over %d runs",
			published, published+more, pending, c.name, read1[c.name], c.bound, ts[len(ts)/2], ts[0], ts[len(ts)-1], len(ts))
	}
}

// openCounting opens a fresh database (plain) and a second handle on it
// (db) with one connection that counts the statements it sends in n.
func openCounting(t *testing.T) (plain, db *sql.DB, n *sqlcount.Counter) {
	t.Helper()
	plain, dsn := openMySQL(t, true)
	n = new(sqlcount.Counter)
	db, err := sqlcount.Open("mysql", dsn, n)
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1) // the session counters are one connection's
	t.Cleanup(func() { db.Close() })
	return plain, db, n
}

// cost runs f on db (opened by openCounting) and returns the rows the
// server read for it (Handler_read_* deltas, less those of SHOW STATUS
// itself), the statements it sent and its duration.
func cost(t *testing.T, db *sql.DB, n *sqlcount.Counter, f func() error) (read, stmts int64, took time.Duration, err error) {
	t.Helper()
	show := -rowsRead(t, db)
	show += rowsRead(t, db)
	readBefore := rowsRead(t, db)
	before := n.Statements.Load()
	start := time.Now()
	err = f()
	took = time.Since(start)
	stmts = n.Statements.Load() - before
	read = rowsRead(t, db) - readBefore - show
	return read, stmts, took, err
}

// fill writes rows lo..hi into the outbox table, pending from pendingFrom
// on (0: none pending) and published before it (published at base + i
// µs), with seq i, in one INSERT from a numbers table (portable to MySQL 8, which has
// no sequence engine), and analyzes the table.
func fill(t *testing.T, db *sql.DB, base time.Time, lo, hi, pendingFrom int) {
	t.Helper()
	ctx := t.Context()
	var digits strings.Builder
	for i := range 1000 {
		if i > 0 {
			digits.WriteByte(',')
		}
		fmt.Fprintf(&digits, "(%d)", i)
	}
	for _, q := range []string{"CREATE TABLE IF NOT EXISTS nums (n INT NOT NULL PRIMARY KEY)",
		"INSERT IGNORE INTO nums (n) VALUES " + digits.String()} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if pendingFrom == 0 {
		pendingFrom = hi + 1
	}
	// seq is given: a bulk INSERT ... SELECT reserves AUTO_INCREMENT
	// values in blocks and would leave a gap before the next fill.
	if _, err := db.ExecContext(ctx, `INSERT INTO outbox (seq, id, aggregate_type, aggregate_id, event_type, payload, content_type,
		    created_at, state, next_attempt_at, part, published_at)
		SELECT i, UUID(), 'o', CONCAT('a', i MOD 1000), 'e', 'p', 'text/plain', DATE_ADD(?, INTERVAL i MICROSECOND),
		       IF(i < ?, 1, 0), ?, i MOD 64, IF(i < ?, DATE_ADD(?, INTERVAL i MICROSECOND), NULL)
		FROM (SELECT a.n * 1000000 + b.n * 1000 + c.n + 1 AS i FROM nums a CROSS JOIN nums b CROSS JOIN nums c
		      WHERE a.n BETWEEN (? - 1) DIV 1000000 AND (? - 1) DIV 1000000) g
		WHERE i BETWEEN ? AND ?`, base, pendingFrom, base, pendingFrom, base, lo, hi, lo, hi); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "ANALYZE TABLE outbox"); err != nil {
		t.Fatal(err)
	}
}

// checkPlan fails the test when EXPLAIN of query shows a full scan (type
// ALL) of the outbox table; derived tables and the blocked table may be
// read whole.
func checkPlan(t *testing.T, db *sql.DB, query string, args ...any) {
	t.Helper()
	var plan []string
	full := false
	for _, m := range explain(t, db, query, args...) {
		plan = append(plan, fmt.Sprint(m))
		if m["table"] == "outbox" && m["type"] == "ALL" {
			full = true
		}
	}
	if full || len(plan) == 0 {
		t.Errorf("the plan reads the outbox table whole:\n%s", strings.Join(plan, "\n"))
	}
}

// explain returns the rows of EXPLAIN of query, each a column name to its
// value ("" for NULL).
func explain(t *testing.T, db *sql.DB, query string, args ...any) []map[string]string {
	t.Helper()
	rows, err := db.QueryContext(t.Context(), "EXPLAIN "+query, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	var plan []map[string]string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		m := map[string]string{}
		for i, c := range cols {
			m[c] = vals[i].String
		}
		plan = append(plan, m)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return plan
}
