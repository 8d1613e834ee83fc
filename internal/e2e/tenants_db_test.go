package e2e

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	gomysql "github.com/go-sql-driver/mysql"
	"github.com/google/uuid"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/dialects/mysql"
	"github.com/jitoutbox/jitoutbox/dialects/postgres"
	"github.com/jitoutbox/jitoutbox/internal/testdb"
	"github.com/jitoutbox/jitoutbox/internal/testnats"
	"github.com/jitoutbox/jitoutbox/relay"
)

// tenantPoolConns bounds each relay process's pool: three fleets and the
// test's own pool stay far below PostgreSQL's 100 connections, which
// other tests share. The pool keeps them all idle: with database/sql's
// default of 2 idle connections a busy fleet's pool closes and opens
// connections all along, and each new one prepares the fleet's statements
// again (Activity over 50 tables: ~33 ms to plan, ~1 ms once prepared);
// time-critical events woken across fleets then took ~4 times as long.
const tenantPoolConns = 6

// tenantServer is a database server holding one outbox table per tenant:
// a schema per tenant on PostgreSQL, a database on MariaDB, each named
// <prefix>_NNN with its table <prefix>_NNN.outbox.
type tenantServer struct {
	prefix string
	// admin is the test's pool: DDL, migrations, the test's inserts.
	admin *sql.DB
	// open opens the pool of one relay process.
	open    func(t *testing.T) *sql.DB
	dialect func(table string) (dialects.Dialect, error)
	// createDDL and dropDDL are DDL formats of a tenant's name; list lists
	// the tenants of a LIKE pattern.
	createDDL, dropDDL, list string
}

func postgresTenants(t *testing.T) tenantServer {
	dsn := testdb.PostgresDSN(t)
	ts := tenantServer{
		prefix: testnats.RandomName("jtn"),
		open:   func(t *testing.T) *sql.DB { return openPool(t, "postgres", dsn) },
		dialect: func(table string) (dialects.Dialect, error) {
			return postgres.New(postgres.WithTable(table), postgres.WithPartitions(tenantPartitions))
		},
		createDDL: "CREATE SCHEMA %s", dropDDL: "DROP SCHEMA %s CASCADE",
		list: "SELECT nspname FROM pg_namespace WHERE nspname LIKE $1",
	}
	ts.admin = ts.open(t)
	t.Cleanup(func() { ts.dropAll(t) })
	return ts
}

func mariaTenants(t *testing.T) tenantServer {
	cfg, err := gomysql.ParseDSN(testdb.MySQLDSN(t))
	if err != nil {
		t.Fatalf("parse %s: %v", testdb.EnvMySQL, err)
	}
	cfg.ParseTime, cfg.Loc = true, time.UTC
	dsn := cfg.FormatDSN()
	ts := tenantServer{
		prefix: testnats.RandomName("jtn"),
		open:   func(t *testing.T) *sql.DB { return openPool(t, "mysql", dsn) },
		dialect: func(table string) (dialects.Dialect, error) {
			return mysql.New(mysql.WithTable(table), mysql.WithPartitions(tenantPartitions))
		},
		createDDL: "CREATE DATABASE %s", dropDDL: "DROP DATABASE %s",
		list: "SELECT schema_name FROM information_schema.schemata WHERE schema_name LIKE ?",
	}
	ts.admin = ts.open(t)
	t.Cleanup(func() { ts.dropAll(t) })
	return ts
}

// openPool opens a pool of at most tenantPoolConns connections, all kept
// idle, closed when the test ends, and checks that the server answers.
func openPool(t *testing.T, driver, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatalf("open %s: %v", driver, err)
	}
	t.Cleanup(func() { db.Close() })
	db.SetMaxOpenConns(tenantPoolConns)
	db.SetMaxIdleConns(tenantPoolConns)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		t.Fatalf("%s is set but the server is unreachable: %v", driver, err)
	}
	return db
}

func (ts tenantServer) tenantName(i int) string { return fmt.Sprintf("%s_%03d", ts.prefix, i) }

// create makes tenant name and migrates its outbox table.
func (ts tenantServer) create(t *testing.T, ctx context.Context, name string) tenant {
	t.Helper()
	tn, err := ts.tryCreate(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	return tn
}

func (ts tenantServer) tryCreate(ctx context.Context, name string) (tenant, error) {
	if _, err := ts.admin.ExecContext(ctx, fmt.Sprintf(ts.createDDL, name)); err != nil {
		return tenant{}, fmt.Errorf("create tenant %s: %w", name, err)
	}
	d, err := ts.dialect(name + ".outbox")
	if err != nil {
		return tenant{}, err
	}
	if err := d.Migrate(ctx, ts.admin); err != nil {
		return tenant{}, fmt.Errorf("migrate %s: %w", d.Table(), err)
	}
	return tenant{name: name, db: ts.admin, d: d, parts: tenantPartitions}, nil
}

// createAll makes the tenants names, four at a time, in names' order.
func (ts tenantServer) createAll(t *testing.T, ctx context.Context, names []string) []tenant {
	t.Helper()
	out := make([]tenant, len(names))
	errs := make([]error, len(names))
	next := make(chan int)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for i := range next {
				out[i], errs[i] = ts.tryCreate(ctx, names[i])
			}
		})
	}
	for i := range names {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// drop drops tenant name with its outbox table.
func (ts tenantServer) drop(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	if _, err := ts.admin.ExecContext(ctx, fmt.Sprintf(ts.dropDDL, name)); err != nil {
		t.Fatalf("drop tenant %s: %v", name, err)
	}
}

// dropAll drops every tenant of the test (at its end).
func (ts tenantServer) dropAll(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	rows, err := ts.admin.QueryContext(ctx, ts.list, ts.prefix+`\_%`)
	if err != nil {
		t.Errorf("list tenants: %v", err)
		return
	}
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Error(err)
		}
		names = append(names, n)
	}
	rows.Close()
	for _, n := range names {
		if _, err := ts.admin.ExecContext(ctx, fmt.Sprintf(ts.dropDDL, n)); err != nil {
			t.Errorf("drop tenant %s: %v", n, err)
		}
	}
}

// tenant is one tenant's outbox table.
type tenant struct {
	name  string
	db    *sql.DB // the pool the test writes through
	d     dialects.Dialect
	parts int
}

// ageTenant puts tn's table at an older schema version: it forgets its
// newest migration.
func ageTenant(t *testing.T, ctx context.Context, tn tenant) {
	t.Helper()
	var v int64
	if err := tn.db.QueryRowContext(ctx, "SELECT max(version) FROM "+tn.d.Table()+"_migrations").Scan(&v); err != nil {
		t.Fatal(err)
	}
	if _, err := tn.db.ExecContext(ctx, "DELETE FROM "+tn.d.Table()+"_migrations WHERE version = "+strconv.FormatInt(v, 10)); err != nil {
		t.Fatal(err)
	}
}

// aggIDs names n aggregates of tn: "<tenant>-<kind><i>".
func aggIDs(tn tenant, kind string, n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("%s-%s%d", tn.name, kind, i)
	}
	return ids
}

// insert commits perAgg events of each of aggs into tn's table in one
// transaction (with the dialect's Insert), interleaved so that every
// batch a relay reads holds many aggregates, each aggregate's numbered
// after its last; it records them in l and returns their ids. One
// goroutine at a time writes an aggregate.
func (tn tenant) insert(ctx context.Context, l *ledger, aggs []string, perAgg int) ([]string, error) {
	evs := make([]dialects.Event, 0, len(aggs)*perAgg)
	bodies := make([]body, 0, cap(evs))
	l.mu.Lock()
	for i := range perAgg {
		for _, agg := range aggs {
			b := body{Agg: agg, N: l.next[agg] + 1 + int64(i)}
			raw, _ := json.Marshal(b)
			evs = append(evs, dialects.Event{
				ID: uuid.Must(uuid.NewV7()).String(), AggregateType: "order", AggregateID: agg,
				EventType: "order.changed", Payload: raw, ContentType: "application/json",
				CreatedAt: time.Now().UTC(), Partition: dialects.PartitionOf("order", agg, tn.parts),
			})
			bodies = append(bodies, b)
		}
	}
	l.mu.Unlock()
	tx, err := tn.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	for rest := evs; len(rest) > 0; {
		n := min(len(rest), tn.d.MaxInsertRows())
		if err := tn.d.Insert(ctx, tx, rest[:n]); err != nil {
			return nil, err
		}
		rest = rest[n:]
	}
	if err := tx.Commit(); err != nil {
		return nil, err
	}
	now := time.Now()
	ids := make([]string, len(evs))
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, ev := range evs {
		ids[i] = ev.ID
		l.events[ev.ID] = bodies[i]
		l.at[ev.ID] = now
		l.next[bodies[i].Agg] = max(l.next[bodies[i].Agg], bodies[i].N)
	}
	return ids, nil
}

// tenantFleet is one fleet of the test: a relay process's worth.
type tenantFleet struct {
	name string
	f    *relay.Fleet
	db   *sql.DB
	logs *logBook
	// stop ends the fleet's Run and checks that it returned nil.
	stop func()
}

// startTenantFleet runs a fleet named name over srcs (whose first is on
// db) until its stop is called or the test ends.
func startTenantFleet(t *testing.T, name string, db *sql.DB, pub relay.Publisher, pubs *publishLog, srcs ...relay.Source) tenantFleet {
	t.Helper()
	logs := &logBook{}
	f, err := relay.NewFleet(relay.FleetConfig{
		Sources:          srcs,
		Publisher:        pub,
		Relay:            tenantRelayConfig(name, logs, pubs),
		DiscoverInterval: tenantDiscover,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("%s: Fleet.Run: %v", name, err)
			}
		})
	}
	t.Cleanup(stop)
	return tenantFleet{name: name, f: f, db: db, logs: logs, stop: stop}
}

// tenantRelayConfig is the relay configuration of the tenant tests: short
// timings, logs kept in logs, publishes recorded in pubs.
func tenantRelayConfig(owner string, logs *logBook, pubs *publishLog) relay.Config {
	return relay.Config{
		Owner:             owner,
		Logger:            slog.New(slog.NewTextHandler(logs, nil)),
		PollInterval:      250 * time.Millisecond,
		RebalanceInterval: 2 * time.Second,
		PublishTimeout:    5 * time.Second,
		LeaseDuration:     15 * time.Second,
		Backoff:           func(int) time.Duration { return 50 * time.Millisecond },
		Hooks:             pubs.hooks(owner),
	}
}

// logBook keeps a fleet's log: slog's text handler writes each record
// as one line with one Write.
type logBook struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBook) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// lines returns the lines that hold every one of subs.
func (b *logBook) lines(subs ...string) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for l := range strings.Lines(b.buf.String()) {
		ok := true
		for _, s := range subs {
			ok = ok && strings.Contains(l, s)
		}
		if ok {
			out = append(out, strings.TrimSuffix(l, "\n"))
		}
	}
	return out
}

// troubles sums up the warnings and errors logged: each message with its
// count.
func (b *logBook) troubles() map[string]int {
	out := map[string]int{}
	for _, l := range b.lines() {
		if !strings.Contains(l, "level=WARN") && !strings.Contains(l, "level=ERROR") {
			continue
		}
		_, msg, _ := strings.Cut(l, "msg=")
		if q, err := strconv.QuotedPrefix(msg); err == nil {
			msg = q
		}
		out[msg]++
	}
	return out
}

// TestTenantsSQLiteFiles runs one fleet over five SQLite files, one per
// tenant, each a source of its own whose outbox table is found by name:
// every file's events are published in order; one file's table dropped
// mid-run stops cleanly (not served, no error, "table gone" logged once)
// while the others flow, and the fleet stops with Run returning nil.
func TestTenantsSQLiteFiles(t *testing.T) {
	ctx := context.Background()
	led, rec, pubs := newLedger(), newRecorder(), &publishLog{by: map[string][]string{}}
	mk := testdb.TableDialect("sqlite")
	var (
		tns  []tenant
		srcs []relay.Source
	)
	for i := range 5 {
		db, _ := testdb.SQLite(t)
		d, err := mk("outbox")
		if err != nil {
			t.Fatal(err)
		}
		if err := d.Migrate(ctx, db); err != nil {
			t.Fatal(err)
		}
		parts, err := d.Partitions(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("tenant-%d", i)
		tns = append(tns, tenant{name: name, db: db, d: d, parts: parts})
		srcs = append(srcs, relay.Source{Name: name, DB: db, Dialect: mk, Patterns: []string{"outbox"}})
	}
	fl := startTenantFleet(t, "sqlite-fleet", nil, rec, pubs, srcs...)
	insertRound(t, ctx, led, tns, 3, 5)
	rec.await(t, 60*time.Second, led.ids())

	gone := tns[2]
	dropSQLiteOutbox(t, ctx, gone.db)
	fleets := []tenantFleet{fl}
	waitTable(t, fleets, gone.name, "outbox", 30*time.Second, "the dropped table not served, with no error", func(s relay.TableState) bool {
		return !s.Serving && s.Err == nil
	})
	rest := append(tns[:2:2], tns[3:]...)
	insertRound(t, ctx, led, rest, 3, 5)
	rec.await(t, 60*time.Second, led.ids())
	fl.stop()

	checkDups(t, rec, led, pubs, fleets, "no such table")
	if n := len(fl.logs.lines("source="+gone.name, "table gone")); n != 1 {
		t.Errorf("\"table gone\" logged %d times for %s, want once", n, gone.name)
	}
	for _, s := range fl.f.Tables() {
		if s.Source != gone.name && (!s.Serving || s.Err != nil) {
			t.Errorf("%s: serving %v, err %v", s.Source, s.Serving, s.Err)
		}
	}
	t.Logf("warnings and errors logged: %v", fl.logs.troubles())
}

// dropSQLiteOutbox drops the outbox table of a SQLite file and its side
// tables.
func dropSQLiteOutbox(t *testing.T, ctx context.Context, db *sql.DB) {
	t.Helper()
	rows, err := db.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'table' AND (name = 'outbox' OR name LIKE 'outbox\_%' ESCAPE '\')`)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
	}
	rows.Close()
	for _, n := range names {
		if _, err := db.ExecContext(ctx, "DROP TABLE "+n); err != nil {
			t.Fatalf("drop %s: %v", n, err)
		}
	}
}
