package postgres_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // "pgx" driver
	_ "github.com/lib/pq"              // "postgres" driver
	"go.uber.org/goleak"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/dialects/dialecttest"
	"github.com/jitoutbox/jitoutbox/dialects/internal/sqlkit"
	"github.com/jitoutbox/jitoutbox/dialects/postgres"
	"github.com/jitoutbox/jitoutbox/internal/migrate"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestConformance(t *testing.T) {
	for _, driver := range []struct{ name, driver string }{{"libpq", "postgres"}, {"pgx", "pgx"}} {
		t.Run(driver.name, func(t *testing.T) {
			dialecttest.Exercise(t, target(driver.driver))
		})
	}
}

func target(driver string) dialecttest.Target {
	return dialecttest.Target{
		Open:           func(t testing.TB) *sql.DB { return openPostgres(t, driver) },
		New:            func() (dialects.Dialect, error) { return postgres.New() },
		WithTable:      func(name string) (dialects.Dialect, error) { return postgres.New(postgres.WithTable(name)) },
		WithPartitions: func(n int) (dialects.Dialect, error) { return postgres.New(postgres.WithPartitions(n)) },
		Legacy:         createLegacy,
		Previous:       migratePrevious,
		MigrateTo: func(t testing.TB, db *sql.DB, d dialects.Dialect, version int) {
			if err := postgres.MigrateTo(t.Context(), d.(*postgres.Dialect), db, version); err != nil {
				t.Fatalf("migrate to %d: %v", version, err)
			}
		},
		KillSession: killSession,
		LockHolders: lockHolders,
		Schema: func(name string) (string, string) {
			return "CREATE SCHEMA " + name, "DROP SCHEMA " + name + " CASCADE"
		},
		MaxTableName: postgres.MaxTableName,
		IdentLimit:   63,
	}
}

// createLegacy creates d's table as the leased relay's migration 001 made
// it (testdata/001_outbox_leased.sql: the schema before partitions, with
// its claim functions and no migrations table) and writes rows into it.
func createLegacy(t testing.TB, db *sql.DB, d dialects.Dialect, rows []dialecttest.LegacyRow) {
	t.Helper()
	b, err := os.ReadFile("testdata/001_outbox_leased.sql")
	if err != nil {
		t.Fatal(err)
	}
	for _, stmt := range migrate.SplitStatements(sqlkit.Render(string(b), d.Table())) {
		if _, err := db.ExecContext(t.Context(), stmt); err != nil {
			t.Fatalf("version 1 schema: %v\n%s", err, stmt)
		}
	}
	q := "INSERT INTO " + d.Table() + ` (id, aggregate_type, aggregate_id, event_type, payload, content_type,
		created_at, state, attempts, next_attempt_at, last_error, published_at)
		VALUES ($1::text::uuid, $2, $3, $4, $5, 'text/plain', $6, $7, $8, $9, $10, $11)`
	for _, r := range rows {
		var lastErr, published any
		if r.LastError != "" {
			lastErr = r.LastError
		}
		if !r.PublishedAt.IsZero() {
			published = r.PublishedAt
		}
		if _, err := db.ExecContext(t.Context(), q, r.ID, r.AggregateType, r.AggregateID, r.AggregateType+".happened",
			[]byte("p"), r.CreatedAt, int(r.State), r.Attempts, r.NextAttemptAt, lastErr, published); err != nil {
			t.Fatalf("version 1 row: %v", err)
		}
	}
}

// killSession terminates the backend of s's connection: the one holding
// its member lock (the table's member namespace, its relays row id) in the
// default table.
func killSession(t testing.TB, db *sql.DB, s dialects.Session) {
	t.Helper()
	d, err := postgres.New()
	if err != nil {
		t.Fatal(err)
	}
	member, err := postgres.MemberNamespace(t.Context(), d, db)
	if err != nil {
		t.Fatal(err)
	}
	var killed bool
	err = db.QueryRowContext(t.Context(), `
		SELECT pg_terminate_backend(l.pid)
		FROM pg_locks l JOIN `+dialects.DefaultTable+`_relays r ON l.objid = (r.id % 2147483647)::int::oid
		WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
		  AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
		  AND l.classid = $1::int::oid AND r.token = $2`, member, s.Token()).Scan(&killed)
	if err != nil || !killed {
		t.Fatalf("terminate the session's backend: %v (killed %v)", err, killed)
	}
}

// lockHolders returns the query of the backends holding an advisory
// lock in d's table's namespaces.
func lockHolders(t testing.TB, db *sql.DB, d dialects.Dialect) (string, []any) {
	t.Helper()
	part, member, err := postgres.LockNamespaces(t.Context(), d.(*postgres.Dialect), db)
	if err != nil {
		t.Fatal(err)
	}
	return `SELECT DISTINCT pid FROM pg_locks
		WHERE locktype = 'advisory' AND granted AND objsubid = 2
		  AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
		  AND classid IN ($1::int::oid, $2::int::oid)`, []any{part, member}
}

// openPostgres opens a *sql.DB on a fresh schema (dropped on cleanup) with
// driver, from JITOUTBOX_POSTGRES_DSN; unset skips. It does what
// internal/testdb.Postgres does, which cannot be imported while the mysql
// and sqlite dialects are being ported to the partition contract.
func openPostgres(t testing.TB, driver string) *sql.DB {
	t.Helper()
	base := os.Getenv("JITOUTBOX_POSTGRES_DSN")
	if base == "" {
		t.Skip("JITOUTBOX_POSTGRES_DSN not set: skipping PostgreSQL suite")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	admin, err := sql.Open(driver, base)
	if err != nil {
		t.Fatalf("open postgres: %v", err)
	}
	defer admin.Close()
	var rb [6]byte
	_, _ = rand.Read(rb[:])
	schema := "jit_" + hex.EncodeToString(rb[:])
	if _, err := admin.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("JITOUTBOX_POSTGRES_DSN is set but PostgreSQL is unusable: create schema: %v", err)
	}
	dsn := base + " search_path=" + schema
	if strings.HasPrefix(base, "postgres://") || strings.HasPrefix(base, "postgresql://") {
		u, err := url.Parse(base)
		if err != nil {
			t.Fatalf("parse JITOUTBOX_POSTGRES_DSN: %v", err)
		}
		q := u.Query()
		q.Set("search_path", schema)
		u.RawQuery = q.Encode()
		dsn = u.String()
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatalf("open postgres: %v", err)
	}
	t.Cleanup(func() {
		db.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		admin, err := sql.Open(driver, base)
		if err != nil {
			return
		}
		defer admin.Close()
		_, _ = admin.ExecContext(ctx, "DROP SCHEMA "+schema+" CASCADE")
	})
	return db
}

// Tables of one name in two schemas of one database (two services, each
// with its own search_path and the default table name) never share locks
// (advisory locks are per database): each table's relays take all of its
// partitions.
func TestLocksPerTableNotPerName(t *testing.T) {
	ctx := t.Context()
	for i := range 2 {
		db := openPostgres(t, "postgres") // a fresh schema first on its search_path
		d, err := postgres.New()
		if err != nil {
			t.Fatal(err)
		}
		if err := d.Migrate(ctx, db); err != nil {
			t.Fatal(err)
		}
		s, err := d.OpenSession(ctx, db, "r", time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		all := make([]int, dialects.DefaultPartitions)
		for i := range all {
			all[i] = i
		}
		got, err := s.Take(ctx, all, time.Now())
		if err != nil || len(got) != len(all) {
			t.Fatalf("service %d: took %d of %d partitions (%v): another schema's relay holds its locks", i, len(got), len(all), err)
		}
	}
}

// TestReadCriticalPlan checks on a backlog of ordinary rows that
// read_critical.sql finds its candidates in critical_idx (the pending
// time-critical rows only), not by walking the backlog.
func TestReadCriticalPlan(t *testing.T) {
	db := openPostgres(t, "postgres")
	ctx := t.Context()
	d, err := postgres.New()
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Migrate(ctx, db); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload, critical, created_at, next_attempt_at, part)
		SELECT gen_random_uuid(), 'o', 'a' || (g % 1000), 'e', '\x01', g % 10000 = 0, now(), now(), g % 64 FROM generate_series(1, 100000) g`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `ANALYZE outbox`); err != nil {
		t.Fatal(err)
	}
	// A relay's owned partitions, and the one a wake names.
	for _, parts := range []string{"{0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15}", "{5}"} {
		query, args, err := postgres.Bind(d, "read_critical.sql", sql.Named("parts", parts),
			sql.Named("now", time.Now()), sql.Named("window", dialects.CriticalWindow), sql.Named("limit", 500))
		if err != nil {
			t.Fatal(err)
		}
		text := strings.Join(column[string](t, db, "EXPLAIN "+query, args...), "\n")
		if !strings.Contains(text, "outbox_critical_idx") {
			t.Fatalf("partitions %s: the critical read does not read critical_idx:\n%s", parts, text)
		}
		t.Logf("partitions %s, plan:\n%s", parts, text)
	}
}

// migratePrevious migrates db to the previous release's schema (migration
// 005) and installs the functions relays of this version call (see
// dialecttest.Target.Previous).
func migratePrevious(t testing.TB, db *sql.DB, d dialects.Dialect) {
	t.Helper()
	if err := postgres.MigrateTo(t.Context(), d.(*postgres.Dialect), db, 5); err != nil {
		t.Fatalf("migrate to 005: %v", err)
	}
	if err := postgres.InstallFunctions(t.Context(), d.(*postgres.Dialect), db); err != nil {
		t.Fatalf("install this version's functions: %v", err)
	}
}
