package mysql

import (
	"testing"

	"github.com/jitoutbox/jitoutbox/dialects/internal/golden"
	"github.com/jitoutbox/jitoutbox/dialects/internal/sqlkit"
)

// TestGoldenSQL renders every statement the dialect loads, as it runs
// (lists of two, tuples of three for @aggs, INSERTs of two rows), for the
// default table name and a database-qualified one, and compares it with
// testdata/golden byte for byte (-update rewrites the files).
func TestGoldenSQL(t *testing.T) {
	lists := func(q *sqlkit.Query, name string) any {
		switch {
		case name == "aggs":
			return [][]any{{0, "t", "a"}, {1, "t", "b"}}
		case q.IsList(name):
			return []int{1, 2}
		}
		return nil
	}
	golden.Test(t, []string{"outbox", "app.jit_outbox"}, func(table string) map[string]string {
		d, err := New(WithTable(table))
		if err != nil {
			t.Fatal(err)
		}
		out := golden.Statements(t, d.st, lists, "insert.sql", "insert_row.sql", "insert_handoff_tail.sql")
		out["insert.sql"], out["insert_handoff.sql"] = d.insert.SQL(2), d.handoff.SQL(2)
		return out
	})
}
