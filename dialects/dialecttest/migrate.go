package dialecttest

import (
	"strings"
	"testing"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/dialects/internal/sqlkit"
)

func testMigrate(t *testing.T, tgt Target) {
	e := setup(t, tgt)
	if err := e.d.Migrate(e.ctx, e.db); err != nil {
		t.Fatalf("second Migrate: %v", err)
	}
	if e.d.Table() != dialects.DefaultTable {
		t.Fatalf("Table() = %q, want %q", e.d.Table(), dialects.DefaultTable)
	}
	switch e.d.Name() {
	case "postgres", "mysql", "sqlite":
	default:
		t.Fatalf("Name() = %q", e.d.Name())
	}
	if e.d.MaxInsertRows() <= 0 {
		t.Fatalf("MaxInsertRows() = %d", e.d.MaxInsertRows())
	}
	// The schema works after the second Migrate and the claim lock row is
	// not duplicated (a claim would fail otherwise on some dialects).
	e.insert(e.events("a")...)
	if got := e.claim("o", 10, 0); len(got) != 1 {
		t.Fatalf("claim after double Migrate: %d rows", len(got))
	}
}

// testSchemaText applies Schema() by hand, statement by statement, the way
// a migration tool would, and checks the dialect works on it and that
// Migrate afterwards is a no-op.
func testSchemaText(t *testing.T, tgt Target) {
	d, err := tgt.New()
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	schema := d.Schema()
	if !strings.Contains(schema, d.Table()) || !strings.Contains(strings.ToUpper(schema), "CREATE TABLE") {
		t.Fatalf("Schema() lacks CREATE TABLE %s:\n%s", d.Table(), schema)
	}
	db := tgt.Open(t)
	ctx := t.Context()
	stmts := sqlkit.SplitStatements(schema)
	if len(stmts) < 2 {
		t.Fatalf("Schema() has %d statements", len(stmts))
	}
	for _, s := range stmts {
		if _, err := db.ExecContext(ctx, s); err != nil {
			t.Fatalf("applying Schema() statement %q: %v", s, err)
		}
	}
	if err := d.Migrate(ctx, db); err != nil {
		t.Fatalf("Migrate over hand-applied schema: %v", err)
	}
	e := &env{t: t, ctx: ctx, db: db, d: d, base: setupBase(), ids: newGen()}
	e.insert(e.events("a", "b")...)
	if got := e.claim("o", 10, 0); len(got) != 2 {
		t.Fatalf("claim on hand-applied schema: %d rows, want 2", len(got))
	}
}
