package sqlite_test

import (
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/goleak"
	_ "modernc.org/sqlite" // "sqlite" driver

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/dialects/dialecttest"
	"github.com/jitoutbox/jitoutbox/dialects/internal/sqlkit"
	"github.com/jitoutbox/jitoutbox/dialects/sqlite"
	"github.com/jitoutbox/jitoutbox/internal/migrate"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestConformance(t *testing.T) {
	dialecttest.Exercise(t, target())
}

func target() dialecttest.Target {
	return dialecttest.Target{
		Open:           func(t testing.TB) *sql.DB { return openSQLite(t) },
		New:            func() (dialects.Dialect, error) { return sqlite.New() },
		WithTable:      func(name string) (dialects.Dialect, error) { return sqlite.New(sqlite.WithTable(name)) },
		WithPartitions: func(n int) (dialects.Dialect, error) { return sqlite.New(sqlite.WithPartitions(n)) },
		Legacy:         createLegacy,
		Previous:       migratePrevious,
		MigrateNamed:   migrateNamed,
		MigrateTo: func(t testing.TB, db *sql.DB, d dialects.Dialect, version int) {
			if err := sqlite.MigrateTo(t.Context(), d.(*sqlite.Dialect), db, version); err != nil {
				t.Fatalf("migrate to %d: %v", version, err)
			}
		},
		// Deployed before the numbering was one across databases: 005 and
		// 006 were the part check and the critical index.
		OldNumberings: [][]string{
			{"outbox", "partitions", "idempotency_keys", "stats_indexes", "part_check"},
			{"outbox", "partitions", "idempotency_keys", "stats_indexes", "part_check", "critical_index"},
		},
		Leases:        true,
		Lease:         2 * time.Second,
		SerialWriters: true,
		MaxTableName:  63,
	}
}

// dsn is the DSN jitoutbox recommends for a SQLite file (see the package
// doc): WAL, a busy timeout, and immediate write transactions.
func dsn(path string) string {
	return "file:" + path + "?_pragma=journal_mode(WAL)&_pragma=busy_timeout(10000)&_pragma=synchronous(NORMAL)&_txlock=immediate"
}

// openSQLite opens a *sql.DB on a new file in t.TempDir(). It does what
// internal/testdb.SQLite does, which cannot be imported while the mysql
// dialect is being ported to the partition contract.
func openSQLite(t testing.TB) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", dsn(filepath.Join(t.TempDir(), "outbox.db")))
	if err != nil {
		t.Fatalf("open sqlite: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// execLegacySchema creates table as migration 001 made it (the schema
// before partitions, with no migrations table).
func execLegacySchema(t testing.TB, db *sql.DB, table string) {
	t.Helper()
	b, err := sqlFile("sql/migrations/001_outbox.sql")
	if err != nil {
		t.Fatal(err)
	}
	for _, stmt := range migrate.SplitStatements(sqlkit.Render(b, table)) {
		if _, err := db.ExecContext(t.Context(), stmt); err != nil {
			t.Fatalf("version 1 schema: %v\n%s", err, stmt)
		}
	}
}

// createLegacy creates d's table as migration 001 made it and writes rows
// into it with the columns of that version.
func createLegacy(t testing.TB, db *sql.DB, d dialects.Dialect, rows []dialecttest.LegacyRow) {
	t.Helper()
	execLegacySchema(t, db, d.Table())
	q := "INSERT INTO " + d.Table() + ` (id, aggregate_type, aggregate_id, event_type, payload, content_type,
		created_at, state, attempts, next_attempt_at, last_error, published_at)
		VALUES (?, ?, ?, ?, ?, 'text/plain', ?, ?, ?, ?, ?, ?)`
	for _, r := range rows {
		var lastErr, published any
		if r.LastError != "" {
			lastErr = r.LastError
		}
		if !r.PublishedAt.IsZero() {
			published = r.PublishedAt.UnixMicro()
		}
		if _, err := db.ExecContext(t.Context(), q, r.ID, r.AggregateType, r.AggregateID, r.AggregateType+".happened",
			[]byte("p"), r.CreatedAt.UnixMicro(), int(r.State), r.Attempts, r.NextAttemptAt.UnixMicro(), lastErr, published); err != nil {
			t.Fatalf("version 1 row: %v", err)
		}
	}
}

// migratePrevious migrates db to the previous release's schema (migration
// 004).
func migratePrevious(t testing.TB, db *sql.DB, d dialects.Dialect) {
	t.Helper()
	if err := sqlite.MigrateTo(t.Context(), d.(*sqlite.Dialect), db, 4); err != nil {
		t.Fatalf("migrate to 004: %v", err)
	}
}

// migrateNamed migrates db as code of an earlier numbering did: the
// migrations named names, recorded as versions 1, 2, 3...
func migrateNamed(t testing.TB, db *sql.DB, d dialects.Dialect, names ...string) {
	t.Helper()
	if err := sqlite.MigrateNamed(t.Context(), d.(*sqlite.Dialect), db, names...); err != nil {
		t.Fatalf("migrate %v: %v", names, err)
	}
}
