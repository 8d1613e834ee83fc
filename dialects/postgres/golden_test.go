package postgres

import (
	"testing"

	"github.com/jitoutbox/jitoutbox/dialects/internal/golden"
	"github.com/jitoutbox/jitoutbox/dialects/internal/sqlkit"
)

// goldenTables are the tables the golden SQL is rendered for: the default
// name and a schema-qualified one.
var goldenTables = []string{"outbox", "app.jit_outbox"}

// TestGoldenSQL renders every statement the dialect loads, as it runs
// (INSERTs of two rows), and compares it with
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
	for _, name := range d.st.Files() {
		if name == "insert.sql" || name == "insert_handoff.sql" || name == "insert_row.sql" || name == "insert_handoff_tail.sql" {
			continue
		}
		out[name] = goldenSQL(t, d.st, name)
	}
	return out
}

// goldenSQL returns statement name of st as run: its named parameters
// turned into placeholders, or as written when it has positional ones
// (the migrator's).
func goldenSQL(t *testing.T, st *sqlkit.Statements, name string) string {
	t.Helper()
	if q, err := st.Query(name); err == nil {
		return q.SQL()
	}
	text, err := st.Text(name)
	if err != nil {
		t.Fatal(err)
	}
	return text
}
