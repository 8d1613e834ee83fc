package sqlite_test

import (
	"database/sql"
	"testing"

	"go.uber.org/goleak"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/dialects/dialecttest"
	"github.com/jitoutbox/jitoutbox/dialects/sqlite"
	"github.com/jitoutbox/jitoutbox/internal/testdb"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestConformance(t *testing.T) {
	dialecttest.Exercise(t, dialecttest.Target{
		Open: func(t testing.TB) *sql.DB {
			db, _ := testdb.SQLite(t)
			return db
		},
		New:       func() (dialects.Dialect, error) { return sqlite.New() },
		WithTable: func(name string) (dialects.Dialect, error) { return sqlite.New(sqlite.WithTable(name)) },
	})
}
