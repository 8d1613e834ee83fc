package txoutbox_test

import (
	"testing"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/dialects/mysql"
	"github.com/jitoutbox/jitoutbox/dialects/postgres"
	"github.com/jitoutbox/jitoutbox/dialects/sqlite"
	"github.com/jitoutbox/jitoutbox/internal/testdb"
)

// dialectFor returns the dialect the integration suite uses for a target.
func dialectFor(t *testing.T, tg testdb.Target) dialects.Dialect {
	t.Helper()
	var (
		d   dialects.Dialect
		err error
	)
	switch tg.Dialect {
	case "sqlite":
		d, err = sqlite.New()
	case "postgres":
		d, err = postgres.New()
	case "mysql":
		d, err = mysql.New()
	default:
		t.Fatalf("unknown dialect %s", tg.Dialect)
	}
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// realDialects lists the real dialects for the sqlmock tests.
func realDialects(t *testing.T) map[string]dialects.Dialect {
	t.Helper()
	out := map[string]dialects.Dialect{}
	d, err := sqlite.New()
	if err != nil {
		t.Fatal(err)
	}
	out["sqlite"] = d
	pg, err := postgres.New()
	if err != nil {
		t.Fatal(err)
	}
	out["postgres"] = pg
	my, err := mysql.New()
	if err != nil {
		t.Fatal(err)
	}
	out["mysql"] = my
	return out
}

// isFake reports whether d is the test fake (no relay-side methods).
func isFake(d dialects.Dialect) bool {
	_, ok := d.(*fakeDialect)
	return ok
}
