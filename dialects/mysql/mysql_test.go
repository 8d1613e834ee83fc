package mysql_test

import (
	"database/sql"
	"testing"

	driver "github.com/go-sql-driver/mysql"
	"go.uber.org/goleak"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/dialects/dialecttest"
	"github.com/jitoutbox/jitoutbox/dialects/mysql"
	"github.com/jitoutbox/jitoutbox/internal/testdb"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestConformance(t *testing.T) {
	dialecttest.Exercise(t, dialecttest.Target{
		Open: func(t testing.TB) *sql.DB {
			db, _ := testdb.MySQL(t)
			return db
		},
		New:       func() (dialects.Dialect, error) { return mysql.New() },
		WithTable: func(name string) (dialects.Dialect, error) { return mysql.New(mysql.WithTable(name)) },
	})
}

// TestConformanceWithoutParseTime runs the suite on a connection without
// parseTime=true: the dialect scans DATETIME text itself.
func TestConformanceWithoutParseTime(t *testing.T) {
	dialecttest.Exercise(t, dialecttest.Target{
		Open: func(t testing.TB) *sql.DB {
			_, dsn := testdb.MySQL(t)
			cfg, err := driver.ParseDSN(dsn)
			if err != nil {
				t.Fatalf("parse dsn: %v", err)
			}
			cfg.ParseTime = false
			db, err := sql.Open("mysql", cfg.FormatDSN())
			if err != nil {
				t.Fatalf("open: %v", err)
			}
			t.Cleanup(func() { db.Close() })
			return db
		},
		New:       func() (dialects.Dialect, error) { return mysql.New() },
		WithTable: func(name string) (dialects.Dialect, error) { return mysql.New(mysql.WithTable(name)) },
	})
}
