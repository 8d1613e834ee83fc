package sqlite_test

import (
	"database/sql"
	"testing"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/dialects/dialecttest"
	"github.com/jitoutbox/jitoutbox/dialects/sqlite"
	"github.com/jitoutbox/jitoutbox/internal/testdb"
)

func TestInspect(t *testing.T) {
	dialecttest.ExerciseInspect(t, dialecttest.Target{
		Open: func(t testing.TB) *sql.DB {
			db, _ := testdb.SQLite(t)
			return db
		},
		New:       func() (dialects.Dialect, error) { return sqlite.New() },
		WithTable: func(name string) (dialects.Dialect, error) { return sqlite.New(sqlite.WithTable(name)) },
	})
}
