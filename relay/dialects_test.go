package relay

import (
	"testing"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/dialects/mysql"
	"github.com/jitoutbox/jitoutbox/dialects/postgres"
	"github.com/jitoutbox/jitoutbox/dialects/sqlite"
	"github.com/jitoutbox/jitoutbox/internal/testdb"
)

// newDialect returns the real dialect for a test target.
func newDialect(t *testing.T, tgt testdb.Target) dialects.Dialect {
	t.Helper()
	var (
		d   dialects.Dialect
		err error
	)
	switch tgt.Dialect {
	case "sqlite":
		d, err = sqlite.New()
	case "postgres":
		d, err = postgres.New()
	case "mysql":
		d, err = mysql.New()
	default:
		t.Skipf("dialect %s not available yet", tgt.Dialect)
	}
	if err != nil {
		t.Fatalf("new %s dialect: %v", tgt.Dialect, err)
	}
	return d
}
