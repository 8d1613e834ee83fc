package dialecttest

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/jitoutbox/jitoutbox/dialects"
)

// testTableNameLimit: a table name of MaxTableName characters works end to
// end (Migrate, insert, read, inspect), plain and schema-qualified where
// the dialect allows it; one more character is refused with an error
// wrapping ErrInvalidTable, a *TableNameError that names the limit on
// dialects with derived-name limits.
func testTableNameLimit(t *testing.T, tgt Target) {
	if tgt.MaxTableName == 0 {
		t.Skip("the target sets no MaxTableName")
	}
	over := strings.Repeat("t", tgt.MaxTableName+1)
	_, err := tgt.WithTable(over)
	if !errors.Is(err, dialects.ErrInvalidTable) {
		t.Fatalf("WithTable(%d characters) = %v, want ErrInvalidTable", len(over), err)
	}
	var tne *dialects.TableNameError
	if tgt.IdentLimit > 0 {
		if !errors.As(err, &tne) || tne.Max != tgt.MaxTableName || tne.IdentLimit != tgt.IdentLimit ||
			!strings.Contains(err.Error(), "at most "+strconv.Itoa(tgt.MaxTableName)) {
			t.Fatalf("WithTable(%d characters) = %v, want a *TableNameError saying the limit %d", len(over), err, tgt.MaxTableName)
		}
	}

	// Two tables at the limit in one database, differing in their last
	// character only: every derived name of each is whole and its own.
	db := tgt.Open(t)
	for _, name := range []string{strings.Repeat("t", tgt.MaxTableName-1) + "a", strings.Repeat("t", tgt.MaxTableName-1) + "b"} {
		d, err := tgt.WithTable(name)
		if err != nil {
			t.Fatalf("WithTable(%d characters): %v", len(name), err)
		}
		if err := d.Migrate(t.Context(), db); err != nil {
			t.Fatalf("Migrate at the limit: %v", err)
		}
		e := newEnv(t, tgt, db, d)
		e.loadParts()
		if err := d.Migrate(e.ctx, e.db); err != nil {
			t.Fatalf("second Migrate at the limit: %v", err)
		}
		if p, err := d.PendingMigrations(e.ctx, e.db); err != nil || len(p) != 0 {
			t.Fatalf("PendingMigrations after Migrate at the limit = %v, %v; want none", p, err)
		}
		ev := e.event("agg", "a")
		ev.IdempotencyKey = "k"
		e.insert(ev)
		r := e.readAll(0)
		wantIDs(t, "read at the limit", r, ev)
		s := e.own("x")
		e.fail(s.Token(), e.failure(r[0], "x", 0, true, true))
		if bl, err := d.Blockers(e.ctx, e.db, e.at(0), 10); err != nil || len(bl) != 1 {
			t.Fatalf("Blockers at the limit = %v, %v", bl, err)
		}
		n, err := d.Requeue(e.ctx, e.db, dialects.RequeueFilter{All: true}, e.at(0))
		wantN(t, "Requeue at the limit", n, err, 1)
	}
}

// testPendingMigrations: PendingMigrations lists every migration on an
// empty database without creating anything, the ones after 001 on a table
// made before versioned migrations, and none after Migrate.
func testPendingMigrations(t *testing.T, tgt Target) {
	d, err := tgt.New()
	if err != nil {
		t.Fatal(err)
	}
	db := tgt.Open(t)
	ctx := t.Context()
	all, err := d.PendingMigrations(ctx, db)
	if err != nil {
		t.Fatalf("PendingMigrations on an empty database: %v", err)
	}
	if len(all) < 3 {
		t.Fatalf("PendingMigrations on an empty database = %d migrations, want every one", len(all))
	}
	for i, m := range all {
		if m.Version != i+1 || m.Name == "" || strings.TrimSpace(m.SQL) == "" {
			t.Fatalf("migration %d = %d %q (%d bytes of SQL)", i, m.Version, m.Name, len(m.SQL))
		}
	}
	if !strings.Contains(all[0].SQL, d.Table()) {
		t.Fatalf("migration 001's SQL does not name the table:\n%s", all[0].SQL)
	}
	if !strings.Contains(all[1].SQL, "-- step: fill-partitions (Go)") {
		t.Fatalf("migration 002's SQL does not show its Go step:\n%s", all[1].SQL)
	}
	// Nothing was written: no version table, no outbox table.
	if _, err := db.ExecContext(ctx, "SELECT version FROM "+d.Table()+"_migrations"); err == nil {
		t.Fatal("PendingMigrations created the version table")
	}
	if again, err := d.PendingMigrations(ctx, db); err != nil || len(again) != len(all) {
		t.Fatalf("PendingMigrations again = %d, %v; want %d", len(again), err, len(all))
	}
	if err := d.Migrate(ctx, db); err != nil {
		t.Fatal(err)
	}
	if p, err := d.PendingMigrations(ctx, db); err != nil || len(p) != 0 {
		t.Fatalf("PendingMigrations after Migrate = %v, %v; want none", p, err)
	}

	if tgt.Legacy == nil {
		return
	}
	legacy, err := tgt.WithTable("legacy_plan")
	if err != nil {
		t.Fatal(err)
	}
	tgt.Legacy(t, db, legacy, nil)
	p, err := legacy.PendingMigrations(ctx, db)
	if err != nil || len(p) != len(all)-1 || p[0].Version != 2 {
		t.Fatalf("PendingMigrations on a version-1 table = %v, %v; want 002 onwards", p, err)
	}
}
