package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/internal/testdb"
	"github.com/jitoutbox/jitoutbox/txoutbox"
)

// tenantFixture is a database with an outbox table per tenant, found by
// pattern: a has two pending events and one dead (its aggregate blocked)
// and a live relay owning every partition; b one pending and one scheduled
// an hour ahead; c none; d is at an old schema version (its migration
// records after 003 deleted).
type tenantFixture struct {
	db      *sql.DB
	dsn     string
	dialect string
	pattern string
	tables  map[string]string // tenant -> table name
	deadID  string            // a's dead event
	// drop removes a tenant: its schema (PostgreSQL), database (MySQL) or
	// tables (SQLite).
	drop func(tenant string)
}

// tenantNames are the fixture's tenants in the order their tables sort.
var tenantNames = []string{"a", "b", "c", "d"}

func newTenantFixture(t *testing.T, tgt testdb.Target) *tenantFixture {
	t.Helper()
	db, dsn := tgt.Open(t)
	ctx := t.Context()
	var b [4]byte
	_, _ = rand.Read(b[:])
	prefix := "jt" + hex.EncodeToString(b[:])
	f := &tenantFixture{db: db, dsn: dsn, dialect: tgt.Dialect, tables: map[string]string{}}
	exec := func(ctx context.Context, q string) {
		t.Helper()
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	switch tgt.Dialect {
	case "sqlite":
		f.pattern = prefix + "_*"
		for _, n := range tenantNames {
			f.tables[n] = prefix + "_" + n
		}
		f.drop = func(tenant string) {
			rows, err := db.QueryContext(ctx, "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE ?", f.tables[tenant]+"%")
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for rows.Next() {
				var n string
				if err := rows.Scan(&n); err != nil {
					t.Fatal(err)
				}
				names = append(names, n)
			}
			if err := rows.Close(); err != nil {
				t.Fatal(err)
			}
			for _, n := range names {
				exec(ctx, "DROP TABLE "+n)
			}
		}
	default:
		kind := "SCHEMA"
		if tgt.Dialect == "mysql" {
			kind = "DATABASE"
		}
		f.pattern = prefix + "_*.outbox"
		for _, n := range tenantNames {
			exec(ctx, "CREATE "+kind+" "+prefix+"_"+n)
			f.tables[n] = prefix + "_" + n + ".outbox"
		}
		dropQ := func(tenant string) string {
			q := "DROP " + kind + " IF EXISTS " + prefix + "_" + tenant
			if kind == "SCHEMA" {
				q += " CASCADE"
			}
			return q
		}
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			defer cancel()
			for _, n := range tenantNames {
				_, _ = db.ExecContext(ctx, dropQ(n))
			}
		})
		f.drop = func(tenant string) { exec(ctx, dropQ(tenant)) }
	}
	ds := map[string]dialects.Dialect{}
	for _, n := range tenantNames {
		d, err := newDialect(tgt.Dialect, f.tables[n])
		if err != nil {
			t.Fatal(err)
		}
		if err := d.Migrate(ctx, db); err != nil {
			t.Fatalf("migrate %s: %v", f.tables[n], err)
		}
		ds[n] = d
	}

	// a: two pending events, one dead, a live relay.
	add(t, db, ds["a"], "1", "1", "2")
	sess := ownAll(t, db, ds["a"], "tenant-relay")
	recs := readAll(t, db, ds["a"], time.Now())
	if len(recs) != 3 || recs[0].AggregateID != "1" {
		t.Fatalf("read %+v of a, want 3 rows, 1's head first", recs)
	}
	fail(t, db, ds["a"], sess, recs[0], "poison <b>a</b>", time.Now(), true)
	f.deadID = recs[0].ID

	// b: one pending, one scheduled.
	ob, err := txoutbox.New(db, ds["b"], txoutbox.WithoutLazyWake())
	if err != nil {
		t.Fatal(err)
	}
	tx, err := ob.Begin(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, delay := range []time.Duration{0, time.Hour} {
		if _, err := tx.Add(txoutbox.Event{AggregateType: "order", AggregateID: string(rune('x' + i)), EventType: "x", Delay: delay}); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}

	// d: as if created by an older release and never migrated since.
	exec(ctx, "DELETE FROM "+f.tables["d"]+"_migrations WHERE version > 3")
	return f
}

// args are the global flags of the fixture's database with -all-tables and
// pattern, JSON output.
func (f *tenantFixture) args(pattern string) []string {
	return []string{"-dsn", f.dsn, "-dialect", f.dialect, "-all-tables", "-tables-pattern", pattern, "-json"}
}

// TestAllTablesStatus: status -all-tables prints a line per table the
// pattern finds, with its counts, relays and health; a table at an old
// schema version is listed with its error and the others are read; the
// exit status fails only when no table could be read.
func TestAllTablesStatus(t *testing.T) { consoleTargets(t, testAllTablesStatus) }

func testAllTablesStatus(t *testing.T, tgt testdb.Target) {
	f := newTenantFixture(t, tgt)

	var st allTablesJSON
	ctl(t, &st, append(f.args(f.pattern), "status")...)
	if st.Dialect != tgt.Dialect || st.Pattern != f.pattern || len(st.Tables) != len(tenantNames) || st.Unreadable != 1 {
		t.Fatalf("status -all-tables = %+v, want the 4 tables, 1 unreadable", st)
	}
	byTenant := map[string]tableStatusJSON{}
	for i, n := range tenantNames {
		if st.Tables[i].Table != f.tables[n] {
			t.Fatalf("table %d = %q, want %q (sorted)", i, st.Tables[i].Table, f.tables[n])
		}
		byTenant[n] = st.Tables[i]
	}
	P := dialects.DefaultPartitions
	for n, want := range map[string]tableStatusJSON{
		"a": {Health: healthOK, Pending: 2, Dead: 1, Blocked: 1, BlockedDead: 1, Relays: 1, Owned: P, Partitions: P},
		"b": {Health: healthOK, Pending: 2, Scheduled: 1, Partitions: P},
		"c": {Health: healthOK, Partitions: P},
	} {
		got := byTenant[n]
		want.Table = f.tables[n]
		if (got.OldestPending != nil) != (got.Pending > got.Scheduled) {
			t.Errorf("%s: oldest pending %v with %d pending, %d scheduled", n, got.OldestPending, got.Pending, got.Scheduled)
		}
		if got.OldestPending != nil && (got.OldestPendingAgeSeconds < 0 || got.OldestPendingAgeSeconds > 600) {
			t.Errorf("%s: oldest pending age %fs", n, got.OldestPendingAgeSeconds)
		}
		got.OldestPending, got.OldestPendingAgeSeconds = nil, 0
		if got != want {
			t.Errorf("%s = %+v\nwant %+v", n, got, want)
		}
	}
	if d := byTenant["d"]; d.Health != healthSchema || !strings.Contains(d.Error, "version") || d.Pending != 0 {
		t.Errorf("d (old schema version) = %+v, want health %s and the error", d, healthSchema)
	}

	// Text: a line per table, the unreadable one with its error.
	text := runOut(t, nil, append(f.args(f.pattern)[:7], "status")...)
	lines := strings.Split(strings.TrimSpace(text), "\n")
	if len(lines) != 6 || !strings.HasPrefix(lines[0], "TABLE") || !strings.Contains(lines[5], "4 tables matching "+f.pattern) {
		t.Fatalf("status -all-tables text:\n%s", text)
	}
	for i, n := range tenantNames {
		fields := strings.Fields(lines[i+1])
		if fields[0] != f.tables[n] {
			t.Fatalf("line %d = %q, want table %s", i+1, lines[i+1], f.tables[n])
		}
		switch n {
		case "a":
			if fields[1] != healthOK || fields[2] != "2" || !strings.Contains(lines[i+1], "1 (1 dead)") || !strings.Contains(lines[i+1], "64/64") {
				t.Errorf("a's line: %q", lines[i+1])
			}
		case "d":
			if fields[1] != healthSchema || !strings.Contains(lines[i+1], "version") {
				t.Errorf("d's line: %q", lines[i+1])
			}
		}
	}

	// Only d: nothing could be read, the command fails after printing it.
	var out bytes.Buffer
	err := run(t.Context(), append(f.args(strings.Replace(f.pattern, "*", "d", 1)), "status"), &out, &out)
	if !errors.Is(err, errNoTableRead) || !strings.Contains(out.String(), healthSchema) {
		t.Fatalf("status -all-tables of d alone = %v, want errNoTableRead after d's line:\n%s", err, out.String())
	}
	out.Reset()
	err = run(t.Context(), append(f.args(strings.Replace(f.pattern, "*", "none", 1)), "status"), &out, &out)
	if !errors.Is(err, errNoTableRead) || errors.Is(err, errUsage) {
		t.Fatalf("status -all-tables matching nothing = %v, want errNoTableRead", err)
	}
}

// runOut runs the CLI and returns its standard output.
func runOut(t *testing.T, env map[string]string, args ...string) string {
	t.Helper()
	out, err := runWith(t, env, args...)
	if err != nil {
		t.Fatalf("outboxctl %q: %v: %s", args, err, out)
	}
	return out
}

// TestAllTablesUsage: -all-tables goes with status and serve only;
// -table and -all-tables at the same level are refused, and the command
// line wins over the other's variable; -tables-pattern needs -all-tables;
// a malformed pattern is a usage error; status's one-table flags are
// refused with -all-tables.
func TestAllTablesUsage(t *testing.T) {
	dsn := "file:" + t.TempDir() + "/usage.db"
	for _, c := range []struct {
		env  map[string]string
		args []string
		want string
	}{
		{nil, []string{"-all-tables", "requeue", "-all"}, "acts on one table"},
		{nil, []string{"-all-tables", "list", "-state", "dead"}, "acts on one table"},
		{nil, []string{"-all-tables", "migrate"}, "acts on one table"},
		{map[string]string{"JITOUTBOX_ALL_TABLES": "1"}, []string{"purge", "-older-than", "1h"}, "acts on one table"},
		{nil, []string{"-all-tables", "-table", "outbox", "status"}, "not both"},
		{map[string]string{"JITOUTBOX_ALL_TABLES": "1", "JITOUTBOX_TABLE": "x"}, []string{"status"}, "both set"},
		{nil, []string{"-tables-pattern", "*", "status"}, "goes with -all-tables"},
		{nil, []string{"-all-tables", "status", "-blockers", "5"}, "for one table"},
		{nil, []string{"-all-tables", "status", "-retention", "1h"}, "for one table"},
		{nil, []string{"-all-tables", "-tables-pattern", "a.b.c", "status"}, "-tables-pattern"},
	} {
		out, err := runWith(t, c.env, append([]string{"-dsn", dsn}, c.args...)...)
		if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v %q = %v, want a usage error with %q: %s", c.env, c.args, err, c.want, out)
		}
	}

	// The command line wins over the other's variable: -table over
	// $JITOUTBOX_ALL_TABLES (one table's status), -all-tables over
	// $JITOUTBOX_TABLE; $JITOUTBOX_TABLES_PATTERN alone is ignored.
	runOut(t, nil, "-dsn", dsn, "migrate")
	out := runOut(t, map[string]string{"JITOUTBOX_ALL_TABLES": "1", "JITOUTBOX_TABLES_PATTERN": "zzz"}, "-dsn", dsn, "-json", "-table", "outbox", "status")
	if !strings.Contains(out, `"blockers"`) {
		t.Fatalf("-table with $JITOUTBOX_ALL_TABLES: %s", out)
	}
	out = runOut(t, map[string]string{"JITOUTBOX_TABLE": "nothing"}, "-dsn", dsn, "-json", "-all-tables", "status")
	if !strings.Contains(out, `"table": "outbox"`) || !strings.Contains(out, `"pattern": "*"`) {
		t.Fatalf("-all-tables with $JITOUTBOX_TABLE (default pattern on SQLite): %s", out)
	}
}

// TestReadTablesIsolation: a table that cannot be read (gone since it was
// found, or its dialect refused) gets its health and error; the tables
// around it are read.
func TestReadTablesIsolation(t *testing.T) {
	consoleTargets(t, func(t *testing.T, tgt testdb.Target) {
		db, d, _, _ := migratedTable(t, tgt)
		tbl := d.Table()
		add(t, db, d, "1", "2")
		names := []string{tbl, "gone_" + tbl, "bad-name", tbl}
		dialectOf := func(name string) (dialects.Dialect, error) { return newDialect(tgt.Dialect, name) }
		got := readTables(t.Context(), db, names, dialectOf, time.Now(), func(err error) error { return err })
		if len(got) != len(names) {
			t.Fatalf("%d results for %d tables", len(got), len(names))
		}
		for _, i := range []int{0, 3} {
			if g := got[i]; g.Table != tbl || !g.OK() || g.Pending != 2 || g.Partitions != dialects.DefaultPartitions {
				t.Errorf("result %d = %+v, want %s read with 2 pending", i, g, tbl)
			}
		}
		if g := got[1]; g.Table != names[1] || g.Health != healthSchema || g.Error == "" {
			t.Errorf("gone table = %+v, want %s with its error", g, healthSchema)
		}
		if g := got[2]; g.Table != "bad-name" || g.Health != healthError || !strings.Contains(g.Error, "bad-name") {
			t.Errorf("refused name = %+v, want %s with its error", g, healthError)
		}
	})
}
