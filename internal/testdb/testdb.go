// Package testdb opens the databases that jitoutbox's tests, benchmarks and
// examples run against, from the same environment variables everywhere:
//
//	JITOUTBOX_POSTGRES_DSN  e.g. postgres://postgres@127.0.0.1:5432/test?sslmode=disable
//	JITOUTBOX_MYSQL_DSN     e.g. root@tcp(127.0.0.1:3306)/test
//	JITOUTBOX_NATS_URL      e.g. nats://127.0.0.1:4222
//
// A variable that is unset skips the suites that need it, with a message that
// says so. A variable that is set but whose server cannot be reached fails the
// test: CI sets them, and an unreachable server must never pass as a skip.
//
// Each call isolates the caller: PostgreSQL gets a fresh schema (dropped on
// cleanup, search_path pointing at it), MySQL a fresh database, SQLite a file
// in t.TempDir().
package testdb

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	_ "github.com/jackc/pgx/v5/stdlib" // "pgx" driver
	"github.com/jitoutbox/jitoutbox/dialects"
	mysqldialect "github.com/jitoutbox/jitoutbox/dialects/mysql"
	"github.com/jitoutbox/jitoutbox/dialects/postgres"
	"github.com/jitoutbox/jitoutbox/dialects/sqlite"
	_ "github.com/lib/pq"  // "postgres" driver
	_ "modernc.org/sqlite" // "sqlite" driver
)

// Environment variable names.
const (
	EnvPostgres = "JITOUTBOX_POSTGRES_DSN"
	EnvMySQL    = "JITOUTBOX_MYSQL_DSN"
	EnvNATS     = "JITOUTBOX_NATS_URL"
)

// TB is the part of testing.TB used here (so benchmarks can use it too).
type TB = testing.TB

func randName(prefix string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// PostgresDSN returns the base DSN or skips t when it is unset.
func PostgresDSN(t TB) string {
	t.Helper()
	dsn := os.Getenv(EnvPostgres)
	if dsn == "" {
		t.Skipf("%s not set: skipping PostgreSQL suite", EnvPostgres)
	}
	return dsn
}

// MySQLDSN returns the base DSN or skips t when it is unset.
func MySQLDSN(t TB) string {
	t.Helper()
	dsn := os.Getenv(EnvMySQL)
	if dsn == "" {
		t.Skipf("%s not set: skipping MySQL/MariaDB suite", EnvMySQL)
	}
	return dsn
}

// NATSURL returns the NATS URL, or "" when it is unset (callers then start an
// embedded server).
func NATSURL() string { return os.Getenv(EnvNATS) }

// Postgres opens a *sql.DB on a fresh schema using driverName ("postgres" for
// lib/pq, "pgx" for pgx's stdlib). It returns the DB and the DSN that selects
// the schema (for child processes).
func Postgres(t TB, driverName string) (*sql.DB, string) {
	t.Helper()
	base := PostgresDSN(t)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	admin, err := sql.Open(driverName, base)
	if err != nil {
		t.Fatalf("testdb: open postgres: %v", err)
	}
	defer admin.Close()
	if err := admin.PingContext(ctx); err != nil {
		t.Fatalf("testdb: %s is set but PostgreSQL is unreachable: %v", EnvPostgres, err)
	}
	schema := randName("jit_")
	if _, err := admin.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("testdb: create schema: %v", err)
	}
	dsn, err := withSearchPath(base, schema)
	if err != nil {
		t.Fatalf("testdb: %v", err)
	}
	db, err := sql.Open(driverName, dsn)
	if err != nil {
		t.Fatalf("testdb: open postgres: %v", err)
	}
	t.Cleanup(func() {
		db.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		admin, err := sql.Open(driverName, base)
		if err != nil {
			return
		}
		defer admin.Close()
		_, _ = admin.ExecContext(ctx, "DROP SCHEMA "+schema+" CASCADE")
	})
	return db, dsn
}

// withSearchPath adds search_path=schema to a URL or key=value DSN.
func withSearchPath(dsn, schema string) (string, error) {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err != nil {
			return "", fmt.Errorf("parse %s: invalid URL", EnvPostgres)
		}
		q := u.Query()
		q.Set("search_path", schema)
		u.RawQuery = q.Encode()
		return u.String(), nil
	}
	return dsn + " search_path=" + schema, nil
}

// MySQL opens a *sql.DB on a fresh database. It returns the DB and its DSN.
func MySQL(t TB) (*sql.DB, string) {
	t.Helper()
	base := MySQLDSN(t)
	cfg, err := mysql.ParseDSN(base)
	if err != nil {
		t.Fatalf("testdb: parse %s: %v", EnvMySQL, err)
	}
	cfg.ParseTime = true
	cfg.Loc = time.UTC
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	admin, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatalf("testdb: open mysql: %v", err)
	}
	defer admin.Close()
	if err := admin.PingContext(ctx); err != nil {
		t.Fatalf("testdb: %s is set but MySQL/MariaDB is unreachable: %v", EnvMySQL, err)
	}
	name := randName("jit_")
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("testdb: create database: %v", err)
	}
	adminDSN := cfg.FormatDSN()
	cfg.DBName = name
	dsn := cfg.FormatDSN()
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatalf("testdb: open mysql: %v", err)
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

// SQLiteDSN returns a DSN for a SQLite file in dir with the settings jitoutbox
// recommends: WAL, a busy timeout, and immediate write transactions.
func SQLiteDSN(path string) string {
	return "file:" + path + "?_pragma=journal_mode(WAL)&_pragma=busy_timeout(10000)&_pragma=synchronous(NORMAL)&_txlock=immediate"
}

// SQLite opens a *sql.DB on a new file in t.TempDir(). It returns the DB and
// its DSN.
func SQLite(t TB) (*sql.DB, string) {
	t.Helper()
	dsn := SQLiteDSN(filepath.Join(t.TempDir(), "outbox.db"))
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		t.Fatalf("testdb: open sqlite: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db, dsn
}

// Target names one database a suite runs against.
type Target struct {
	// Name is "sqlite", "postgres-libpq", "postgres-pgx" or "mysql".
	Name string
	// Dialect is "sqlite", "postgres" or "mysql".
	Dialect string
	// Open opens an isolated database for t, returning it and its DSN.
	Open func(t TB) (*sql.DB, string)
}

// Targets lists every database a conformance suite should run against.
// Targets whose variable is unset are still listed; their Open skips.
func Targets() []Target {
	return []Target{
		{Name: "sqlite", Dialect: "sqlite", Open: SQLite},
		{Name: "postgres-libpq", Dialect: "postgres", Open: func(t TB) (*sql.DB, string) { return Postgres(t, "postgres") }},
		{Name: "postgres-pgx", Dialect: "postgres", Open: func(t TB) (*sql.DB, string) { return Postgres(t, "pgx") }},
		{Name: "mysql", Dialect: "mysql", Open: MySQL},
	}
}

// NewDialect returns the dialect with default options for name ("sqlite",
// "postgres" or "mysql", as in Target.Dialect).
func NewDialect(t TB, name string) dialects.Dialect {
	t.Helper()
	var (
		d   dialects.Dialect
		err error
	)
	switch name {
	case "sqlite":
		d, err = sqlite.New()
	case "postgres":
		d, err = postgres.New()
	case "mysql":
		d, err = mysqldialect.New()
	default:
		t.Fatalf("testdb: unknown dialect %q", name)
	}
	if err != nil {
		t.Fatalf("testdb: new %s dialect: %v", name, err)
	}
	return d
}

// TableDialect returns a function that makes the dialect name ("sqlite",
// "postgres" or "mysql") for one table, as relay.Source.Dialect wants.
func TableDialect(name string) func(table string) (dialects.Dialect, error) {
	return func(table string) (dialects.Dialect, error) {
		switch name {
		case "sqlite":
			return sqlite.New(sqlite.WithTable(table))
		case "postgres":
			return postgres.New(postgres.WithTable(table))
		case "mysql":
			return mysqldialect.New(mysqldialect.WithTable(table))
		}
		return nil, fmt.Errorf("testdb: unknown dialect %q", name)
	}
}
