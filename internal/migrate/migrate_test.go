package migrate

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"go.uber.org/goleak"
	_ "modernc.org/sqlite"

	"github.com/jitoutbox/jitoutbox/dialects"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// render drops comment lines, as the dialects' renderers do.
func render(s string) string {
	var b strings.Builder
	for line := range strings.Lines(s) {
		if !strings.HasPrefix(strings.TrimSpace(line), "--") {
			b.WriteString(line)
		}
	}
	return strings.TrimSpace(b.String())
}

// files are version 1..4 of a small schema; 002 is an empty step.
func files() fstest.MapFS {
	return fstest.MapFS{
		"m/001_things.sql":   {Data: []byte("-- the table\nCREATE TABLE things (id INTEGER PRIMARY KEY, v TEXT);\n")},
		"m/002_nothing.sql":  {Data: []byte("-- Empty here: another database needs this version.\n")},
		"m/003_more.sql":     {Data: []byte("ALTER TABLE things ADD COLUMN w TEXT;\n-- step: fill\nCREATE INDEX things_w ON things (w);\n")},
		"m/004_index_v.sql":  {Data: []byte("CREATE INDEX things_v ON things (v);\n")},
		"f/things_count.sql": {Data: []byte("CREATE VIEW IF NOT EXISTS things_count AS SELECT count(*) AS n FROM things;\n")},
		"m/README":           {Data: []byte("not a migration")},
	}
}

func newMigrator(t *testing.T, fsys fstest.MapFS) *Migrator {
	t.Helper()
	migs, err := Load(fsys, "m", render)
	if err != nil {
		t.Fatal(err)
	}
	fns, err := LoadFunctions(fsys, "f", render)
	if err != nil {
		t.Fatal(err)
	}
	return &Migrator{
		Migrations:     migs,
		Functions:      fns,
		CreateVersions: "CREATE TABLE IF NOT EXISTS things_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)",
		ReadVersions:   "SELECT version, name FROM things_migrations",
		InsertVersion:  "INSERT INTO things_migrations (version, name, applied_at) VALUES (?1, ?2, ?3)",
		MoveVersion:    "UPDATE things_migrations SET version = ?1 WHERE version = ?2",
		VersionsExists: "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'things_migrations'",
		Steps: map[string]func(context.Context, dialects.Querier) error{
			"fill": func(ctx context.Context, q dialects.Querier) error {
				_, err := q.ExecContext(ctx, "UPDATE things SET w = 'filled:' || v")
				return err
			},
		},
		Name:   "test",
		Needed: 3,
	}
}

func openDB(t *testing.T) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "m.db"))
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return db
}

// versions returns the version table as "1:things,2:nothing,...".
func versions(t *testing.T, db *sql.DB) string {
	t.Helper()
	rows, err := db.Query("SELECT version, name FROM things_migrations ORDER BY version")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var v, name string
		if err := rows.Scan(&v, &name); err != nil {
			t.Fatal(err)
		}
		out = append(out, v+":"+name)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return strings.Join(out, ",")
}

func TestLoad(t *testing.T) {
	m := newMigrator(t, files())
	if len(m.Migrations) != 4 || m.Latest() != 4 || m.Required() != 3 {
		t.Fatalf("loaded %d migrations, latest %d, required %d", len(m.Migrations), m.Latest(), m.Required())
	}
	if got := m.Migrations[1]; got.Name != "nothing" || len(got.Parts) != 0 {
		t.Fatalf("the empty step: %+v", got)
	}
	parts := m.Migrations[2].Parts
	if len(parts) != 3 || parts[1].Step != "fill" || !strings.HasPrefix(parts[2].SQL, "CREATE INDEX") {
		t.Fatalf("003's parts: %+v", parts)
	}
	schema := m.Schema()
	if strings.Contains(schema, "--") || !strings.HasSuffix(schema, "things_count AS SELECT count(*) AS n FROM things;\n") {
		t.Fatalf("Schema() = %q: want no comments, the functions last", schema)
	}
	if plan := m.Migrations[1].Plan(); !strings.HasPrefix(plan.SQL, "-- empty") {
		t.Fatalf("Plan of the empty step: %+v", plan)
	}
	if plan := m.Migrations[2].Plan(); !strings.Contains(plan.SQL, "-- step: fill (Go)") || plan.Version != 3 {
		t.Fatalf("Plan of 003: %+v", plan)
	}
	gap := files()
	delete(gap, "m/002_nothing.sql")
	if _, err := Load(gap, "m", render); err == nil || !strings.Contains(err.Error(), "found 3 at position 2") {
		t.Fatalf("Load with a gap: %v", err)
	}
	dup := files()
	dup["m/005_more.sql"] = &fstest.MapFile{Data: []byte("SELECT 1;\n")}
	if _, err := Load(dup, "m", render); err == nil || !strings.Contains(err.Error(), `name "more" is taken`) {
		t.Fatalf("Load with a name twice: %v", err)
	}
}

func TestRunAppliesEachOnce(t *testing.T) {
	db := openDB(t)
	ctx := t.Context()
	m := newMigrator(t, files())
	if p, err := m.Pending(ctx, db); err != nil || len(p) != 4 {
		t.Fatalf("Pending on an empty database: %d, %v", len(p), err)
	}
	if _, err := db.Exec("SELECT 1 FROM things_migrations"); err == nil {
		t.Fatal("Pending created the version table")
	}
	// Up to 003 first, a row written between, then the rest.
	m3 := *m
	m3.Migrations = m.Migrations[:3]
	if err := m3.Run(ctx, db); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("INSERT INTO things (v) VALUES ('a')"); err != nil {
		t.Fatal(err)
	}
	if p, err := m.Pending(ctx, db); err != nil || len(p) != 1 || p[0].Name != "index_v" {
		t.Fatalf("Pending at 003: %+v, %v", p, err)
	}
	for range 2 {
		if err := m.Run(ctx, db); err != nil {
			t.Fatal(err)
		}
	}
	if got := versions(t, db); got != "1:things,2:nothing,3:more,4:index_v" {
		t.Fatalf("versions = %s", got)
	}
	var w sql.NullString
	var n int
	if err := db.QueryRow("SELECT w, (SELECT n FROM things_count) FROM things").Scan(&w, &n); err != nil || w.String != "" || n != 1 {
		t.Fatalf("row after Run: w %q, count %d, %v (the step ran before the row: w stays NULL)", w.String, n, err)
	}
	if p, err := m.Pending(ctx, db); err != nil || len(p) != 0 {
		t.Fatalf("Pending after Run: %+v, %v", p, err)
	}
}

// A database recorded under an older numbering (a migration added before
// others moved them up) is renumbered by name: nothing runs twice, the
// versions it lacks run.
func TestRunRenumbersByName(t *testing.T) {
	db := openDB(t)
	ctx := t.Context()
	// The old numbering had no 002: 001 things, 002 more, 003 index_v.
	old := files()
	delete(old, "m/002_nothing.sql")
	old["m/002_more.sql"], old["m/003_index_v.sql"] = old["m/003_more.sql"], old["m/004_index_v.sql"]
	delete(old, "m/003_more.sql")
	delete(old, "m/004_index_v.sql")
	if err := newMigrator(t, old).Run(ctx, db); err != nil {
		t.Fatal(err)
	}
	if got := versions(t, db); got != "1:things,2:more,3:index_v" {
		t.Fatalf("old numbering recorded %s", got)
	}
	if _, err := db.Exec("INSERT INTO things (v, w) VALUES ('a', 'kept')"); err != nil {
		t.Fatal(err)
	}
	m := newMigrator(t, files())
	p, err := m.Pending(ctx, db)
	if err != nil || len(p) != 1 || p[0].Version != 2 || p[0].Name != "nothing" {
		t.Fatalf("Pending on the old numbering: %+v, %v; want only 002_nothing", p, err)
	}
	// 003 re-run would fail (duplicate column w); the step would overwrite w.
	if err := m.Run(ctx, db); err != nil {
		t.Fatalf("Run on the old numbering: %v", err)
	}
	if got := versions(t, db); got != "1:things,2:nothing,3:more,4:index_v" {
		t.Fatalf("versions after renumbering = %s", got)
	}
	var w string
	if err := db.QueryRow("SELECT w FROM things").Scan(&w); err != nil || w != "kept" {
		t.Fatalf("row after renumbering: %q, %v", w, err)
	}
}

func TestReconcile(t *testing.T) {
	m := newMigrator(t, files())
	moves, applied, err := m.reconcile(map[int]string{1: "things", 2: "more", 3: "index_v", 9: "from_elsewhere"})
	if err != nil {
		t.Fatal(err)
	}
	if len(moves) != 2 || moves[0] != (move{from: 3, to: 4, name: "index_v"}) || moves[1] != (move{from: 2, to: 3, name: "more"}) {
		t.Fatalf("moves = %+v, want 3->4 then 2->3", moves)
	}
	if !applied[1] || applied[2] || !applied[3] || !applied[4] || !applied[9] {
		t.Fatalf("applied = %v", applied)
	}
	// A target held by a name this code does not know: refused before
	// anything is written.
	if _, _, err := m.reconcile(map[int]string{2: "more", 3: "unknown"}); err == nil || !strings.Contains(err.Error(), `3 is recorded as "unknown"`) {
		t.Fatalf("reconcile onto a taken version: %v", err)
	}
	// Downward moves run lowest first.
	moves, _, err = m.reconcile(map[int]string{1: "things", 4: "nothing", 5: "more"})
	if err != nil || len(moves) != 2 || moves[0].from != 4 || moves[1].from != 5 {
		t.Fatalf("downward moves = %+v, %v", moves, err)
	}
}

func TestRunErrors(t *testing.T) {
	db := openDB(t)
	ctx := t.Context()
	m := newMigrator(t, files())
	boom := errors.New("boom")
	m.Steps["fill"] = func(context.Context, dialects.Querier) error { return boom }
	if err := m.Run(ctx, db); !errors.Is(err, boom) || !strings.HasPrefix(err.Error(), "test: migrate 003_more: fill: ") {
		t.Fatalf("Run with a failing step: %v", err)
	}
	delete(m.Steps, "fill")
	if err := m.Run(ctx, openDB(t)); err == nil || !strings.Contains(err.Error(), `unknown step "fill"`) {
		t.Fatalf("Run with an unknown step: %v", err)
	}
}

// Upto and Renumbered give the migrators of earlier code: the first
// migrations only, or named ones numbered 1, 2, 3..., never the functions
// of this version; m itself is left as it was.
func TestEarlierMigrators(t *testing.T) {
	m := *newMigrator(t, files())
	m.Functions = []string{"SELECT 1"}
	names := func(m Migrator) string {
		var out []string
		for _, mig := range m.Migrations {
			out = append(out, fmt.Sprintf("%d:%s", mig.Version, mig.Name))
		}
		return strings.Join(out, ",")
	}
	if up := m.Upto(2); names(up) != "1:things,2:nothing" || up.Functions != nil {
		t.Fatalf("Upto(2) = %s, functions %v", names(up), up.Functions)
	}
	r, err := m.Renumbered("things", "more", "index_v")
	if err != nil || names(r) != "1:things,2:more,3:index_v" || r.Functions != nil {
		t.Fatalf("Renumbered = %s, functions %v, %v", names(r), r.Functions, err)
	}
	if _, err := m.Renumbered("things", "gone"); err == nil {
		t.Fatal("Renumbered with an unknown name: no error")
	}
	if names(m) != "1:things,2:nothing,3:more,4:index_v" || len(m.Functions) != 1 {
		t.Fatalf("m changed: %s, functions %v", names(m), m.Functions)
	}
}
