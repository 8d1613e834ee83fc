package txoutbox_test

import (
	"testing"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/internal/testdb"
)

// realDialects lists the real dialects for the sqlmock tests.
func realDialects(t *testing.T) map[string]dialects.Dialect {
	t.Helper()
	out := map[string]dialects.Dialect{}
	for _, name := range []string{"sqlite", "postgres", "mysql"} {
		out[name] = testdb.NewDialect(t, name)
	}
	return out
}

// isFake reports whether d is the test fake (no relay-side methods).
func isFake(d dialects.Dialect) bool {
	_, ok := d.(*fakeDialect)
	return ok
}
