package mysql_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"os"
	"strconv"
	"testing"
	"time"

	driver "github.com/go-sql-driver/mysql"
	"go.uber.org/goleak"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/dialects/dialecttest"
	"github.com/jitoutbox/jitoutbox/dialects/internal/sqlkit"
	"github.com/jitoutbox/jitoutbox/dialects/mysql"
	"github.com/jitoutbox/jitoutbox/internal/migrate"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestConformance(t *testing.T) {
	dialecttest.Exercise(t, target(true))
}

// TestConformanceWithoutParseTime runs the suite on a connection without
// parseTime=true: the dialect scans DATETIME text itself.
func TestConformanceWithoutParseTime(t *testing.T) {
	dialecttest.Exercise(t, target(false))
}

func target(parseTime bool) dialecttest.Target {
	return dialecttest.Target{
		Open: func(t testing.TB) *sql.DB {
			db, _ := openMySQL(t, parseTime)
			return db
		},
		New:            func() (dialects.Dialect, error) { return mysql.New() },
		WithTable:      func(name string) (dialects.Dialect, error) { return mysql.New(mysql.WithTable(name)) },
		WithPartitions: func(n int) (dialects.Dialect, error) { return mysql.New(mysql.WithPartitions(n)) },
		Legacy:         createLegacy,
		Previous:       migratePrevious,
		MigrateTo: func(t testing.TB, db *sql.DB, d dialects.Dialect, version int) {
			if err := mysql.MigrateTo(t.Context(), d.(*mysql.Dialect), db, version); err != nil {
				t.Fatalf("migrate to %d: %v", version, err)
			}
		},
		MigrateNamed: migrateNamed,
		// Deployed before the numbering was one across databases: 004 and
		// 005 were the part check and the critical index.
		OldNumberings: [][]string{
			{"outbox", "partitions", "idempotency_keys", "headers_longtext_part_check"},
			{"outbox", "partitions", "idempotency_keys", "headers_longtext_part_check", "critical_index"},
		},
		KillSession: killSession,
		LockHolders: lockHolders,
		Schema: func(name string) (string, string) {
			return "CREATE DATABASE " + name, "DROP DATABASE " + name
		},
		MaxTableName: mysql.MaxTableName,
		IdentLimit:   64,
	}
}

// createLegacy creates d's table as migration 001 made it (the schema
// before partitions, with no migrations table) and writes rows into it.
func createLegacy(t testing.TB, db *sql.DB, d dialects.Dialect, rows []dialecttest.LegacyRow) {
	t.Helper()
	for _, stmt := range migrate.SplitStatements(schema001(t, d.Table())) {
		if _, err := db.ExecContext(t.Context(), stmt); err != nil {
			t.Fatalf("version 1 schema: %v\n%s", err, stmt)
		}
	}
	q := "INSERT INTO " + d.Table() + ` (id, aggregate_type, aggregate_id, event_type, payload, content_type,
		created_at, state, attempts, next_attempt_at, last_error, published_at)
		VALUES (?, ?, ?, ?, ?, 'text/plain', ?, ?, ?, ?, ?, ?)`
	for _, r := range rows {
		var lastErr, published any
		if r.LastError != "" {
			lastErr = r.LastError
		}
		if !r.PublishedAt.IsZero() {
			published = r.PublishedAt.UTC()
		}
		if _, err := db.ExecContext(t.Context(), q, r.ID, r.AggregateType, r.AggregateID, r.AggregateType+".happened",
			[]byte("p"), r.CreatedAt.UTC(), int(r.State), r.Attempts, r.NextAttemptAt.UTC(), lastErr, published); err != nil {
			t.Fatalf("version 1 row: %v", err)
		}
	}
}

// schema001 is migration 001 rendered for table.
func schema001(t testing.TB, table string) string {
	t.Helper()
	b, err := os.ReadFile("sql/migrations/001_outbox.sql")
	if err != nil {
		t.Fatal(err)
	}
	return sqlkit.Render(string(b), table)
}

// killSession kills the server connection of s: the one holding its
// member lock ("jitoutbox.<namespace>.m<relays id>") in the default table.
func killSession(t testing.TB, db *sql.DB, s dialects.Session) {
	t.Helper()
	var database string
	if err := db.QueryRowContext(t.Context(), "SELECT DATABASE()").Scan(&database); err != nil {
		t.Fatal(err)
	}
	prefix := "jitoutbox." + strconv.Itoa(int(sqlkit.LockNamespace(database+"."+dialects.DefaultTable))) + ".m"
	var id sql.NullInt64
	if err := db.QueryRowContext(t.Context(), `SELECT IS_USED_LOCK(CONCAT(?, id)) FROM `+dialects.DefaultTable+`_relays
		WHERE token = ?`, prefix, s.Token()).Scan(&id); err != nil || !id.Valid {
		t.Fatalf("find the session's connection: %v (id %v)", err, id)
	}
	// KILL takes no placeholder; id is the server's own number.
	if _, err := db.ExecContext(t.Context(), "KILL CONNECTION "+strconv.FormatInt(id.Int64, 10)); err != nil {
		t.Fatalf("kill the session's connection: %v", err)
	}
}

// lockHolders returns the query of the connections holding a partition
// lock or a member lock of d's table.
func lockHolders(t testing.TB, db *sql.DB, d dialects.Dialect) (string, []any) {
	t.Helper()
	prefix, err := mysql.LockPrefix(t.Context(), d.(*mysql.Dialect), db)
	if err != nil {
		t.Fatal(err)
	}
	return `SELECT DISTINCT h FROM (
			SELECT IS_USED_LOCK(CONCAT(?, 'p', part)) AS h FROM ` + d.Table() + `_partitions
			UNION ALL
			SELECT IS_USED_LOCK(CONCAT(?, 'm', id)) FROM ` + d.Table() + `_relays
		) x WHERE h IS NOT NULL`, []any{prefix, prefix}
}

// openMySQL opens a *sql.DB on a fresh database (dropped on cleanup) from
// JITOUTBOX_MYSQL_DSN; unset skips. It does what internal/testdb.MySQL
// does, which cannot be imported while the sqlite dialect is being ported
// to the partition contract.
func openMySQL(t testing.TB, parseTime bool) (*sql.DB, string) {
	t.Helper()
	base := os.Getenv("JITOUTBOX_MYSQL_DSN")
	if base == "" {
		t.Skip("JITOUTBOX_MYSQL_DSN not set: skipping MySQL/MariaDB suite")
	}
	cfg, err := driver.ParseDSN(base)
	if err != nil {
		t.Fatalf("parse JITOUTBOX_MYSQL_DSN: %v", err)
	}
	cfg.ParseTime, cfg.Loc = true, time.UTC
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	adminDSN := cfg.FormatDSN()
	admin, err := sql.Open("mysql", adminDSN)
	if err != nil {
		t.Fatalf("open mysql: %v", err)
	}
	defer admin.Close()
	var rb [6]byte
	_, _ = rand.Read(rb[:])
	name := "jit_" + hex.EncodeToString(rb[:])
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("JITOUTBOX_MYSQL_DSN is set but MySQL/MariaDB is unusable: create database: %v", err)
	}
	cfg.DBName, cfg.ParseTime = name, parseTime
	dsn := cfg.FormatDSN()
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatalf("open mysql: %v", err)
	}
	t.Cleanup(func() {
		db.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		admin, err := sql.Open("mysql", adminDSN)
		if err != nil {
			return
		}
		defer admin.Close()
		_, _ = admin.ExecContext(ctx, "DROP DATABASE "+name)
	})
	return db, dsn
}

// migratePrevious migrates db to the previous release's schema (migration
// 003).
func migratePrevious(t testing.TB, db *sql.DB, d dialects.Dialect) {
	t.Helper()
	if err := mysql.MigrateTo(t.Context(), d.(*mysql.Dialect), db, 3); err != nil {
		t.Fatalf("migrate to 003: %v", err)
	}
}

// migrateNamed migrates db as code of an earlier numbering did: the
// migrations named names, recorded as versions 1, 2, 3...
func migrateNamed(t testing.TB, db *sql.DB, d dialects.Dialect, names ...string) {
	t.Helper()
	if err := mysql.MigrateNamed(t.Context(), d.(*mysql.Dialect), db, names...); err != nil {
		t.Fatalf("migrate %v: %v", names, err)
	}
}
