package mysql

import (
	"io/fs"
	"path"
	"strings"
	"testing"

	"github.com/jitoutbox/jitoutbox/dialects/internal/golden"
	"github.com/jitoutbox/jitoutbox/dialects/internal/sqlkit"
)

// goldenTables are the tables the golden SQL is rendered for: the default
// name and a database-qualified one.
var goldenTables = []string{"outbox", "app.jit_outbox"}

// TestGoldenSQL renders every statement the dialect loads, as it runs
// (lists of two, INSERTs of two rows), and compares it with
// testdata/golden byte for byte (-update rewrites the files).
func TestGoldenSQL(t *testing.T) {
	got := map[string]string{}
	for _, table := range goldenTables {
		d, err := New(WithTable(table))
		if err != nil {
			t.Fatal(err)
		}
		for name, q := range goldenStatements(t, d) {
			got[name] += golden.Section(table, q)
		}
	}
	golden.Check(t, "testdata/golden", got)
}

// goldenStatements returns the statements of d by file name, as run.
func goldenStatements(t *testing.T, d *Dialect) map[string]string {
	t.Helper()
	out := map[string]string{
		"insert.sql":         d.insert.SQL(2),
		"insert_handoff.sql": d.handoff.SQL(2),
	}
	entries, err := fs.ReadDir(sqlFiles, "sql")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || name == "insert.sql" || name == "insert_row.sql" || name == "insert_handoff_tail.sql" {
			continue
		}
		b, err := sqlFiles.ReadFile(path.Join("sql", name))
		if err != nil {
			t.Fatal(err)
		}
		q := sqlkit.Render(string(b), d.table)
		for _, list := range []string{"{{parts}}", "{{seqs}}", "{{ids}}"} {
			q = expand(q, list, 2)
		}
		q = strings.ReplaceAll(q, "{{aggs}}", "(?, ?, ?), (?, ?, ?)")
		out[name] = q
	}
	return out
}
