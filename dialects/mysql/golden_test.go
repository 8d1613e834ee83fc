package mysql

import (
	"database/sql"
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
	for _, name := range d.st.Files() {
		if name == "insert.sql" || name == "insert_row.sql" || name == "insert_handoff_tail.sql" {
			continue
		}
		out[name] = goldenSQL(t, d.st, name)
	}
	return out
}

// goldenSQL returns statement name of st as run: its named parameters
// turned into placeholders, each list of two elements (tuples of three
// for @aggs), or as written when it has positional ones (the migrator's).
func goldenSQL(t *testing.T, st *sqlkit.Statements, name string) string {
	t.Helper()
	q, err := st.Query(name)
	if err != nil {
		text, err := st.Text(name)
		if err != nil {
			t.Fatal(err)
		}
		return text
	}
	var args []sql.NamedArg
	for _, n := range q.Names() {
		var v any
		switch {
		case n == "aggs":
			v = [][]any{{0, "t", "a"}, {1, "t", "b"}}
		case q.IsList(n):
			v = []int{1, 2}
		}
		args = append(args, sql.Named(n, v))
	}
	text, _, err := q.Bind(args...)
	if err != nil {
		t.Fatal(err)
	}
	return text
}
