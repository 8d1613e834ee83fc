package mysql_test

import (
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects/mysql"
)

// TestActivityPlan: on a table of 100,000 published rows and 5 pending,
// Activity of the table is one statement whose plan reads the outbox
// table through claim_idx only (no full scan), and the rows it reads (the
// session's Handler_read_* counters) are a few when a row is due and the
// pending rows' when none is (retries an hour away); as many after
// 100,000 more published rows. Activity then gives the retry time. The
// plans are logged.
func TestActivityPlan(t *testing.T) {
	plain, db, n := openCounting(t)
	ctx := t.Context()
	d, err := mysql.New()
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Migrate(ctx, plain); err != nil {
		t.Fatal(err)
	}
	const published, pending = 100000, 5
	base := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	fill(t, plain, base, 1, published+pending, published+1)
	activity := func(what string, bound int64) (time.Time, int64) {
		t.Helper()
		explainActivity(t, db, d, what)
		var next time.Time
		read, stmts, _, err := cost(t, db, n, func() error {
			got, err := d.Activity(ctx, db, []string{d.Table()})
			if err == nil {
				next, err = got[0].NextDue, got[0].Err
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if stmts != 1 || read > bound {
			t.Fatalf("%s: Activity sent %d statements (want 1) and read %d rows (want at most %d)", what, stmts, read, bound)
		}
		t.Logf("%s: Activity read %d rows", what, read)
		return next, read
	}
	if next, _ := activity("a row due", 4); !next.Equal(base) {
		t.Fatalf("a row due: NextDue %v, want %v", next, base)
	}

	retry := time.Now().Add(time.Hour).UTC().Truncate(time.Microsecond)
	for _, q := range []string{"UPDATE outbox SET next_attempt_at = ? WHERE state = 0", "ANALYZE TABLE outbox"} {
		var args []any
		if strings.HasPrefix(q, "UPDATE") {
			args = append(args, retry)
		}
		if _, err := plain.ExecContext(ctx, q, args...); err != nil {
			t.Fatal(err)
		}
	}
	bound := int64(4*pending + 4)
	next, read := activity("no row due", bound)
	if !next.Equal(retry) {
		t.Fatalf("no row due: NextDue %v, want %v", next, retry)
	}
	fill(t, plain, base, published+pending+1, 2*published+pending, 0)
	if _, r := activity("no row due, 100,000 more published rows", bound); r != read {
		t.Errorf("Activity read %d rows with %d published rows, %d with %d: the cost grows with the table",
			read, published, r, 2*published)
	}
}

// explainActivity logs EXPLAIN of activity.sql and fails the test when it
// reads the outbox table (o) other than through claim_idx.
func explainActivity(t *testing.T, db *sql.DB, d *mysql.Dialect, what string) {
	t.Helper()
	query, _, err := mysql.Bind(d, "activity.sql")
	if err != nil {
		t.Fatal(err)
	}
	plan := explain(t, db, query)
	var lines []string
	for _, m := range plan {
		lines = append(lines, fmt.Sprintf("select_type=%s table=%s type=%s key=%s rows=%s extra=%s",
			m["select_type"], m["table"], m["type"], m["key"], m["rows"], m["Extra"]))
		if m["table"] == "o" && (m["type"] == "ALL" || m["key"] != "outbox_claim_idx") {
			t.Errorf("%s: the probe reads the outbox table other than through claim_idx: %v", what, m)
		}
	}
	t.Logf("activity.sql, %s:\n%s", what, strings.Join(lines, "\n"))
	if len(plan) == 0 {
		t.Fatalf("%s: empty plan", what)
	}
}
