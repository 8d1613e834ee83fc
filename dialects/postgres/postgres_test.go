package postgres_test

import (
	"database/sql"
	"testing"

	"go.uber.org/goleak"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/dialects/dialecttest"
	"github.com/jitoutbox/jitoutbox/dialects/postgres"
	"github.com/jitoutbox/jitoutbox/internal/testdb"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestConformance(t *testing.T) {
	for _, driver := range []struct{ name, driver string }{{"libpq", "postgres"}, {"pgx", "pgx"}} {
		t.Run(driver.name, func(t *testing.T) {
			dialecttest.Exercise(t, dialecttest.Target{
				Open: func(t testing.TB) *sql.DB {
					db, _ := testdb.Postgres(t, driver.driver)
					return db
				},
				New:       func() (dialects.Dialect, error) { return postgres.New() },
				WithTable: func(name string) (dialects.Dialect, error) { return postgres.New(postgres.WithTable(name)) },
			})
		})
	}
}
