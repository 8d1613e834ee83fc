package sqlite

import (
	"testing"

	"github.com/jitoutbox/jitoutbox/dialects/internal/golden"
)

// TestGoldenSQL renders every statement the dialect loads, as it runs
// (INSERTs of two rows), for the default table name and another (SQLite
// takes no schema-qualified name), and compares it with testdata/golden byte for byte (-update
// rewrites the files).
func TestGoldenSQL(t *testing.T) {
	golden.Test(t, []string{"outbox", "jit_outbox"}, func(table string) map[string]string {
		d, err := New(WithTable(table))
		if err != nil {
			t.Fatal(err)
		}
		out := golden.Statements(t, d.st, nil, "insert.sql", "insert_handoff.sql", "insert_row.sql", "insert_handoff_tail.sql")
		out["insert.sql"], out["insert_handoff.sql"] = d.insert.SQL(2), d.handoff.SQL(2)
		return out
	})
}
