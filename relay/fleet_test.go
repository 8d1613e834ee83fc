package relay

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/internal/dbinstance"
	"github.com/jitoutbox/jitoutbox/internal/testdb"
	"github.com/jitoutbox/jitoutbox/notify"
)

// fleetEnv is one test database with outbox tables made by name.
type fleetEnv struct {
	tgt testdb.Target
	db  *sql.DB
	mk  func(table string) (dialects.Dialect, error)
}

// table migrates an outbox table and returns its env.
func (fe fleetEnv) table(t *testing.T, name string) env {
	t.Helper()
	d, err := fe.mk(name)
	if err != nil {
		t.Fatalf("dialect %s: %v", name, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := d.Migrate(ctx, fe.db); err != nil {
		t.Fatalf("migrate %s: %v", name, err)
	}
	parts, err := d.Partitions(ctx, fe.db)
	if err != nil {
		t.Fatalf("partitions %s: %v", name, err)
	}
	return env{db: fe.db, d: d, parts: parts}
}

// drop drops an outbox table and its side tables.
func (fe fleetEnv) drop(t *testing.T, name string) {
	t.Helper()
	ctx := context.Background()
	var q string
	switch fe.tgt.Dialect {
	case "postgres":
		q = `SELECT tablename FROM pg_tables WHERE schemaname = current_schema() AND (tablename = $1 OR tablename LIKE $1 || '\_%')`
	case "mysql":
		q = `SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE() AND (table_name = ? OR table_name LIKE CONCAT(?, '\_%'))`
	default:
		q = `SELECT name FROM sqlite_master WHERE type = 'table' AND (name = ?1 OR name LIKE ?1 || '\_%' ESCAPE '\')`
	}
	args := []any{name}
	if fe.tgt.Dialect == "mysql" {
		args = append(args, name)
	}
	rows, err := fe.db.QueryContext(ctx, q, args...)
	if err != nil {
		t.Fatalf("list tables of %s: %v", name, err)
	}
	var tables []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, s)
	}
	rows.Close()
	if len(tables) == 0 {
		t.Fatalf("drop %s: no tables found", name)
	}
	for _, s := range tables {
		stmt := "DROP TABLE " + s
		if fe.tgt.Dialect == "postgres" {
			stmt += " CASCADE"
		}
		if _, err := fe.db.ExecContext(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
}

// fleetConfig returns a fleet config for one source on fe, with short
// timings.
func fleetConfig(fe fleetEnv, owner string, pub Publisher, tables, patterns []string) FleetConfig {
	cfg := FleetConfig{
		Sources:          []Source{{Name: "main", DB: fe.db, Dialect: fe.mk, Tables: tables, Patterns: patterns}},
		Publisher:        pub,
		Relay:            testConfig(owner),
		DiscoverInterval: 100 * time.Millisecond,
	}
	cfg.Relay.PollInterval = 100 * time.Millisecond
	return cfg
}

// startFleet runs f until the returned stop is called (or the test ends).
func startFleet(t *testing.T, f *Fleet) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Fleet.Run: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// ownersOf returns how many partitions each live relay name owns in e's table.
func ownersOf(t *testing.T, e env) map[string]int {
	t.Helper()
	o, err := e.d.Ownership(context.Background(), e.db, time.Now())
	if err != nil {
		t.Fatalf("ownership: %v", err)
	}
	names := map[string]string{}
	for _, r := range o.Relays {
		names[r.Token] = r.Name
	}
	out := map[string]int{}
	for _, p := range o.Partitions {
		if p.Live {
			out[names[p.Owner]]++
		}
	}
	return out
}

// ownsAll returns a condition for waitFor: the relay named owner owns
// every partition of every table.
func ownsAll(t *testing.T, envs []env, owner string) func() bool {
	return func() bool {
		for _, e := range envs {
			if ownersOf(t, e)[owner] != e.parts {
				return false
			}
		}
		return true
	}
}

func serving(f *Fleet, table string) (TableState, bool) {
	for _, s := range f.Tables() {
		if s.Table == table || strings.HasSuffix(s.Table, "."+table) {
			return s, true
		}
	}
	return TableState{}, false
}

// forEachLockTarget runs fn on every database whose sessions hold locks
// (SQLite's leases rebalance every relay on its own), with the outbox
// tables named migrated.
func forEachLockTarget(t *testing.T, names []string, fn func(t *testing.T, fe fleetEnv, envs []env)) {
	for _, tgt := range testdb.Targets() {
		if tgt.Dialect == "sqlite" {
			continue
		}
		t.Run(tgt.Name, func(t *testing.T) {
			db, _ := tgt.Open(t)
			fe := fleetEnv{tgt: tgt, db: db, mk: testdb.TableDialect(tgt.Dialect)}
			var envs []env
			for _, n := range names {
				envs = append(envs, fe.table(t, n))
			}
			fn(t, fe, envs)
		})
	}
}

// split reports whether every table's partitions are all owned, some by
// each of the relays named a and b, and what each table's owners are.
func split(t *testing.T, envs []env, a, b string) (bool, []string) {
	var seen []string
	ok := true
	for _, e := range envs {
		o := ownersOf(t, e)
		seen = append(seen, fmt.Sprintf("%s %v", e.d.Table(), o))
		if o[a] == 0 || o[b] == 0 || o[a]+o[b] != e.parts {
			ok = false
		}
	}
	return ok, seen
}

// TestFleetServesManyTables runs two fleets (two processes' worth) over
// tables named and found by pattern: every event of every table is
// published once and in aggregate order, each table's partitions are split
// between the fleets, a table created while they run starts flowing, a
// dropped one stops without an error, and when one fleet stops the other
// takes every partition of every table.
func TestFleetServesManyTables(t *testing.T) {
	for _, tgt := range testdb.Targets() {
		t.Run(tgt.Name, func(t *testing.T) {
			db, _ := tgt.Open(t)
			fe := fleetEnv{tgt: tgt, db: db, mk: testdb.TableDialect(tgt.Dialect)}
			envs := map[string]env{}
			for _, n := range []string{"fleet_a", "fleet_b", "tenant_c", "tenant_d"} {
				envs[n] = fe.table(t, n)
			}
			rec := newRecorder(nil)
			tables, patterns := []string{"fleet_a", "fleet_b"}, []string{"tenant_*"}
			f1, err := NewFleet(fleetConfig(fe, "fleet-1", rec, tables, patterns))
			if err != nil {
				t.Fatal(err)
			}
			f2, err := NewFleet(fleetConfig(fe, "fleet-2", rec, tables, patterns))
			if err != nil {
				t.Fatal(err)
			}
			startFleet(t, f1)
			stop2 := startFleet(t, f2)

			want := 0
			for n, e := range envs {
				for a := range 4 {
					e.insert(t, e.events(fmt.Sprintf("%s-%d", n, a), 0, 10))
					want += 10
				}
			}
			waitFor(t, 30*time.Second, "every event published", func() bool { return rec.published() == want })
			waitFor(t, 10*time.Second, "partitions split between the fleets", func() bool {
				ok, _ := split(t, slices.Collect(maps.Values(envs)), "fleet-1", "fleet-2")
				return ok
			})

			// A new tenant's table is found and flows.
			e := fe.table(t, "tenant_e")
			e.insert(t, e.events("tenant_e-0", 0, 10))
			want += 10
			waitFor(t, 30*time.Second, "the new table's events published", func() bool { return rec.published() == want })

			// A dropped tenant stops cleanly.
			fe.drop(t, "tenant_d")
			waitFor(t, 30*time.Second, "the dropped table no longer served", func() bool {
				s, ok := serving(f1, "tenant_d")
				return ok && !s.Serving && s.Err == nil
			})

			// One fleet stops: the other takes every partition of every table.
			stop2()
			delete(envs, "tenant_d")
			envs["tenant_e"] = e
			waitFor(t, 30*time.Second, "the remaining fleet owns every partition", ownsAll(t, slices.Collect(maps.Values(envs)), "fleet-1"))
			for n, e := range envs {
				e.insert(t, e.events(n+"-0", 10, 5))
				want += 5
			}
			waitFor(t, 30*time.Second, "events after the stop published", func() bool { return rec.published() == want })
			rec.check(t)
			for _, s := range f1.Tables() {
				if s.Err != nil {
					t.Errorf("table %s: %v", s.Table, s.Err)
				}
			}
		})
	}
}

// slowCloseDialect is a table whose sessions take delay to close: a fleet
// whose tables stop slowly (a batch to finish, a loaded database).
type slowCloseDialect struct {
	dialects.Dialect
	delay time.Duration
}

func (d slowCloseDialect) OpenSessionOn(ctx context.Context, l *dialects.Locker, relay string, lease time.Duration) (dialects.Session, error) {
	s, err := d.Dialect.OpenSessionOn(ctx, l, relay, lease)
	if err != nil {
		return nil, err
	}
	return slowCloseSession{Session: s, delay: d.delay}, nil
}

// startInTurn runs a fleet of first until its relay owns every partition
// of envs, then a fleet of second; it returns the first fleet's stop.
func startInTurn(t *testing.T, envs []env, first, second FleetConfig) (stop func()) {
	t.Helper()
	f1, err := NewFleet(first)
	if err != nil {
		t.Fatal(err)
	}
	f2, err := NewFleet(second)
	if err != nil {
		t.Fatal(err)
	}
	stop = startFleet(t, f1)
	waitFor(t, 10*time.Second, first.Relay.Owner+" owns every partition", ownsAll(t, envs, first.Relay.Owner))
	startFleet(t, f2)
	return stop
}

// wrapped returns a Source.Dialect of fe that passes each table's dialect
// through wrap.
func (fe fleetEnv) wrapped(wrap func(table string, d dialects.Dialect) dialects.Dialect) func(string) (dialects.Dialect, error) {
	return func(table string) (dialects.Dialect, error) {
		d, err := fe.mk(table)
		if err != nil {
			return nil, err
		}
		return wrap(table, d), nil
	}
}

// slowClosing returns a Source.Dialect of fe whose tables named by slow
// close their sessions after 500 ms.
func slowClosing(fe fleetEnv, slow func(table string) bool) func(string) (dialects.Dialect, error) {
	return fe.wrapped(func(table string, d dialects.Dialect) dialects.Dialect {
		if !slow(table) {
			return d
		}
		return slowCloseDialect{Dialect: d, delay: 500 * time.Millisecond}
	})
}

type slowCloseSession struct {
	dialects.Session
	delay time.Duration
}

func (s slowCloseSession) Close() error {
	time.Sleep(s.delay)
	return s.Session.Close()
}

// TestFleetStopsAnchorLast checks that a fleet that stops closes its
// anchor table's session after every other table's, however slowly those
// close: the other fleet hears of the departure through the anchor only,
// and takes then the partitions of every table, which must all be free by
// then. An anchor closed first would leave them to the other fleet's next
// unprompted rebalance (fleetRebalanceEvery).
func TestFleetStopsAnchorLast(t *testing.T) {
	tables := []string{"laststop_a", "laststop_b", "laststop_c"}
	forEachLockTarget(t, tables, func(t *testing.T, fe fleetEnv, envs []env) {
		rec := newRecorder(nil)
		cfg2 := fleetConfig(fe, "fleet-2", rec, tables, nil)
		// The anchor closes at once, the others slowly.
		cfg2.Sources[0].Dialect = slowClosing(fe, func(table string) bool { return table != tables[0] })
		// fleet-2 owns every partition, then fleet-1 joins: fleet-2
		// keeps at least half of each table, whatever has moved when
		// it stops.
		stop2 := startInTurn(t, envs, cfg2, fleetConfig(fe, "fleet-1", rec, tables, nil))
		waitFor(t, 10*time.Second, "fleet-1 serves every table", func() bool {
			return !slices.ContainsFunc(envs, func(e env) bool { return !serves(t, e, "fleet-1") })
		})
		stop2()
		// No event was published, so no busy check is due: before
		// fleetRebalanceEvery, only the anchor's signal moves fleet-1's
		// tables.
		waitFor(t, 10*time.Second, "the remaining fleet owns every partition", ownsAll(t, envs, "fleet-1"))
	})
}

// TestFleetAnchorsDiffer checks that a fleet takes the partitions of a
// departed fleet in every table when the two chose different anchors (their
// Tables lists differ, or a table found by pattern sorts before an older
// anchor): the departing fleet closes the other fleet's anchor among its
// first tables and its own anchor last, so the other fleet hears of the
// departure before some of its tables are free, and must look again.
func TestFleetAnchorsDiffer(t *testing.T) {
	tables := []string{"anchors_a", "anchors_b", "anchors_c"}
	forEachLockTarget(t, tables, func(t *testing.T, fe fleetEnv, envs []env) {
		rec := newRecorder(nil)
		// fleet-1's anchor is anchors_a. A table short of its share asks
		// through its own fleet's anchor, which fleet-2 does not watch: the
		// split relies on fleet-1 opening anchors_b (fleet-2's anchor, whose
		// watch then tells fleet-2's tables) after its other tables.
		cfg1 := fleetConfig(fe, "fleet-1", rec, tables, nil)
		cfg1.Sources[0].Dialect = fe.wrapped(func(table string, d dialects.Dialect) dialects.Dialect {
			if table != tables[1] {
				return d
			}
			return gatedDialect{Dialect: d, gate: func() bool {
				return serves(t, envs[0], "fleet-1") && serves(t, envs[2], "fleet-1")
			}}
		})
		// fleet-2's anchor is anchors_b, and it closes anchors_c slowly:
		// anchors_a (fleet-1's anchor) is free at once, anchors_b only
		// after anchors_c.
		cfg2 := fleetConfig(fe, "fleet-2", rec, []string{tables[1], tables[0], tables[2]}, nil)
		cfg2.Sources[0].Dialect = slowClosing(fe, func(table string) bool { return table == tables[2] })
		stop2 := startInTurn(t, envs, cfg2, cfg1)
		// Each fleet holds its share of every table: neither is short, so
		// nothing but the departure makes fleet-1 look again. A session
		// opening interrupts only a wait in progress: while the split is
		// not there, a short-lived session on anchors_b tells fleet-2's
		// watch again (fleet-1's asks cannot: they go through anchors_a).
		var knocked time.Time
		waitFor(t, 20*time.Second, "the fleets split every table", func() bool {
			ok, _ := split(t, envs, "fleet-1", "fleet-2")
			if !ok && time.Since(knocked) > time.Second {
				knocked = time.Now()
				s, err := envs[1].d.OpenSession(context.Background(), envs[1].db, "knock", time.Minute)
				if err != nil {
					t.Fatalf("knock: %v", err)
				}
				_ = s.Close()
			}
			return ok
		})
		stop2()
		waitFor(t, 10*time.Second, "the remaining fleet owns every partition", ownsAll(t, envs, "fleet-1"))
	})
}

// gatedDialect is a table whose sessions open once gate holds.
type gatedDialect struct {
	dialects.Dialect
	gate func() bool
}

func (d gatedDialect) OpenSessionOn(ctx context.Context, l *dialects.Locker, relay string, lease time.Duration) (dialects.Session, error) {
	for !d.gate() {
		select {
		case <-time.After(10 * time.Millisecond):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return d.Dialect.OpenSessionOn(ctx, l, relay, lease)
}

// serves reports whether a live session of the relay named name is on e.
func serves(t *testing.T, e env, name string) bool {
	o, err := e.d.Ownership(context.Background(), e.db, time.Now())
	if err != nil {
		t.Errorf("ownership: %v", err)
		return false
	}
	return slices.ContainsFunc(o.Relays, func(r dialects.RelaySession) bool { return r.Name == name })
}

// lossyDialect is a table whose sessions open after delay and whose
// first drops Nudges (counted over every table of the fleet) reach
// nobody: another relay's anchor between two waits.
type lossyDialect struct {
	dialects.Dialect
	delay time.Duration
	drops *atomic.Int32
}

func (d lossyDialect) OpenSessionOn(ctx context.Context, l *dialects.Locker, relay string, lease time.Duration) (dialects.Session, error) {
	select {
	case <-time.After(d.delay):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	s, err := d.Dialect.OpenSessionOn(ctx, l, relay, lease)
	if err != nil {
		return nil, err
	}
	return lossySession{Session: s, drops: d.drops}, nil
}

type lossySession struct {
	dialects.Session
	drops *atomic.Int32
}

func (s lossySession) Nudge(ctx context.Context) error {
	if s.drops.Add(-1) >= 0 {
		return nil
	}
	return s.Session.Nudge(ctx)
}

// TestFleetShareAskedAgain checks that a fleet table short of its share
// asks until it gets it: fleet-1 joins fleet-2, which owns every
// partition, but its tables other than the anchor open their sessions
// after fleet-2 has seen the join, and the first nudges asking fleet-2 to
// look again are lost. Asked once, the tables would stay unsplit until
// fleet-2's next unprompted rebalance (fleetRebalanceEvery).
func TestFleetShareAskedAgain(t *testing.T) {
	tables := []string{"ask_a", "ask_b", "ask_c"}
	forEachLockTarget(t, tables, func(t *testing.T, fe fleetEnv, envs []env) {
		rec := newRecorder(nil)
		f2, err := NewFleet(fleetConfig(fe, "fleet-2", rec, tables, nil))
		if err != nil {
			t.Fatal(err)
		}
		var drops atomic.Int32
		drops.Store(3)
		cfg1 := fleetConfig(fe, "fleet-1", rec, tables, nil)
		cfg1.Sources[0].Dialect = fe.wrapped(func(table string, d dialects.Dialect) dialects.Dialect {
			delay := time.Second
			if table == tables[0] { // the anchor joins first
				delay = 0
			}
			return lossyDialect{Dialect: d, delay: delay, drops: &drops}
		})
		f1, err := NewFleet(cfg1)
		if err != nil {
			t.Fatal(err)
		}
		startFleet(t, f2)
		waitFor(t, 10*time.Second, "fleet-2 owns every partition", ownsAll(t, envs, "fleet-2"))
		startFleet(t, f1)
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			ok, seen := split(t, envs, "fleet-1", "fleet-2")
			if ok {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("after 10 s the partitions are not split between the fleets: %v", seen)
			}
		}
		if n := drops.Load(); n >= 0 {
			t.Errorf("%d of 3 nudges still to drop: the test did not lose the first requests", n+1)
		}
	})
}

// TestFleetOneLockConnection checks that a fleet's connections grow with
// databases, not tables: twelve tables of one database are served with
// one connection held for their locks and one watching; the pool's other
// connections serve one statement at a time.
func TestFleetOneLockConnection(t *testing.T) {
	for _, tgt := range testdb.Targets() {
		if tgt.Dialect == "sqlite" {
			continue // no connection holds SQLite's leases
		}
		t.Run(tgt.Name, func(t *testing.T) {
			db, _ := tgt.Open(t)
			fe := fleetEnv{tgt: tgt, db: db, mk: testdb.TableDialect(tgt.Dialect)}
			var envs []env
			var names []string
			for i := range 12 {
				n := fmt.Sprintf("conn_%02d", i)
				envs = append(envs, fe.table(t, n))
				names = append(names, n)
			}
			rec := newRecorder(nil)
			f, err := NewFleet(fleetConfig(fe, "fleet-conn", rec, names, nil))
			if err != nil {
				t.Fatal(err)
			}
			startFleet(t, f)
			for i, e := range envs {
				e.insert(t, e.events(fmt.Sprintf("agg-%d", i), 0, 3))
			}
			waitFor(t, 30*time.Second, "every event published", func() bool { return rec.published() == 3*len(envs) })
			waitFor(t, 10*time.Second, "every partition owned", ownsAll(t, envs, "fleet-conn"))
			// Held for good: the lock connection and the anchor's watch.
			// The poll and the relays' reads and marks (some still in
			// flight after their events are published) take a pool
			// connection per statement: between statements only the held
			// ones are in use, and a connection per table never lets go.
			least := math.MaxInt
			for deadline := time.Now().Add(10 * time.Second); least > 2 && time.Now().Before(deadline); {
				least = min(least, db.Stats().InUse)
				time.Sleep(time.Millisecond)
			}
			if least > 2 {
				t.Errorf("the fleet holds %d connections for %d tables; want at most 2", least, len(envs))
			}
			rec.check(t)
		})
	}
}

// TestFleetConfigErrors checks that NewFleet refuses bad configurations.
func TestFleetConfigErrors(t *testing.T) {
	db, _ := testdb.SQLite(t)
	mk := testdb.TableDialect("sqlite")
	pub := newRecorder(nil)
	ok := Source{Name: "a", DB: db, Dialect: mk, Tables: []string{"outbox"}}
	cases := map[string]FleetConfig{
		"no sources":     {Publisher: pub},
		"no name":        {Publisher: pub, Sources: []Source{{DB: db, Dialect: mk, Tables: []string{"outbox"}}}},
		"duplicate name": {Publisher: pub, Sources: []Source{ok, ok}},
		"no db":          {Publisher: pub, Sources: []Source{{Name: "a", Dialect: mk, Tables: []string{"outbox"}}}},
		"no dialect":     {Publisher: pub, Sources: []Source{{Name: "a", DB: db, Tables: []string{"outbox"}}}},
		"no tables":      {Publisher: pub, Sources: []Source{{Name: "a", DB: db, Dialect: mk}}},
		"no publisher":   {Sources: []Source{ok}},
		"bad table":      {Publisher: pub, Sources: []Source{{Name: "a", DB: db, Dialect: mk, Tables: []string{"no such; table"}}}},
		"relay sources":  {Publisher: pub, Sources: []Source{ok}, Relay: Config{Sources: []notify.Source{failingSource{}}}},
		"bad relay":      {Publisher: pub, Sources: []Source{ok}, Relay: Config{BatchSize: -1}},
		"bad discover":   {Publisher: pub, Sources: []Source{ok}, DiscoverInterval: -time.Second},
	}
	for name, cfg := range cases {
		if _, err := NewFleet(cfg); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%s: got %v, want ErrInvalidConfig", name, err)
		}
	}
	f, err := NewFleet(FleetConfig{Publisher: pub, Sources: []Source{ok}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Relay("b", "outbox"); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("Relay of an unknown source: got %v", err)
	}
	r1, err := f.Relay("a", "outbox")
	if err != nil {
		t.Fatal(err)
	}
	if r2, _ := f.Relay("a", "outbox"); r2 != r1 {
		t.Error("Relay returned two relays for one table")
	}
}

// TestFleetIsolation checks that a table at another schema version and a
// database that stops affect only themselves: the other tables flow, and
// Tables says which table is unhealthy and why.
func TestFleetIsolation(t *testing.T) {
	tgt := testdb.Targets()[1] // postgres-libpq
	db, _ := tgt.Open(t)
	fe := fleetEnv{tgt: tgt, db: db, mk: testdb.TableDialect("postgres")}
	a, b := fe.table(t, "iso_a"), fe.table(t, "iso_b")
	fe.table(t, "iso_old")
	// iso_old forgets its last migration: its schema is at an older version.
	if _, err := db.Exec(`DELETE FROM iso_old_migrations WHERE version = (SELECT max(version) FROM iso_old_migrations)`); err != nil {
		t.Fatal(err)
	}

	inst := dbinstance.PostgreSQL(t)
	ctx := context.Background()
	if err := inst.Start(ctx); err != nil {
		t.Fatal(err)
	}
	downDB, err := sql.Open("postgres", inst.DSN())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { downDB.Close() })
	down := fleetEnv{tgt: tgt, db: downDB, mk: fe.mk}.table(t, "outbox")

	// The stopped database may see events it published again (a mark the
	// stop cut off): its own recorder counts distinct events; the healthy
	// one's checks everything.
	rec, recDown := newRecorder(nil), newRecorder(nil)
	cfg := fleetConfig(fe, "fleet-iso", rec, []string{"iso_a", "iso_b", "iso_old"}, nil)
	cfg.Sources = append(cfg.Sources, Source{Name: "down", DB: downDB, Dialect: fe.mk, Tables: []string{"outbox"}, Publisher: recDown})
	f, err := NewFleet(cfg)
	if err != nil {
		t.Fatal(err)
	}
	startFleet(t, f)
	distinct := func(r *recorder) int {
		r.mu.Lock()
		defer r.mu.Unlock()
		return len(r.count)
	}
	a.insert(t, a.events("a", 0, 5))
	b.insert(t, b.events("b", 0, 5))
	down.insert(t, down.events("down", 0, 5))
	waitFor(t, 30*time.Second, "every table's events published", func() bool { return rec.published() == 10 && distinct(recDown) == 5 })
	waitFor(t, 10*time.Second, "the old table reported", func() bool {
		s, ok := serving(f, "iso_old")
		return ok && !s.Serving && errors.Is(s.Err, dialects.ErrSchemaVersion)
	})

	if err := inst.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the stopped database's table reported", func() bool {
		for _, s := range f.Tables() {
			if s.Source == "down" && s.Err != nil {
				return true
			}
		}
		return false
	})
	a.insert(t, a.events("a", 5, 5))
	b.insert(t, b.events("b", 5, 5))
	waitFor(t, 30*time.Second, "events published while the other database is down", func() bool { return rec.published() == 20 })
	for _, s := range f.Tables() {
		if s.Source == "main" && s.Table != "iso_old" && s.Err != nil {
			t.Errorf("table %s of the healthy database: %v", s.Table, s.Err)
		}
	}

	if err := inst.Start(ctx); err != nil {
		t.Fatal(err)
	}
	down.insert(t, down.events("down", 5, 5))
	waitFor(t, 60*time.Second, "the restarted database's events published", func() bool { return distinct(recDown) == 10 })
	waitFor(t, 30*time.Second, "the restarted database's table healthy", func() bool {
		s, ok := serving(f, "outbox")
		return ok && s.Serving && s.Err == nil
	})
	rec.check(t)
}

// TestFleetLogsNameTheTable: a line a table's relay logs says which source
// and table it is about (a fleet's relays share one Logger).
func TestFleetLogsNameTheTable(t *testing.T) {
	db, _ := testdb.SQLite(t)
	fe := fleetEnv{tgt: testdb.Targets()[0], db: db, mk: testdb.TableDialect("sqlite")}
	e := fe.table(t, "outbox_logs")
	fe.table(t, "outbox_quiet")
	var buf syncBuffer
	pub := newRecorder(func(Message) error { return Permanent(errors.New("refused")) })
	cfg := fleetConfig(fe, "f1", pub, []string{"outbox_logs", "outbox_quiet"}, nil)
	cfg.Relay.Logger = slog.New(slog.NewJSONHandler(&buf, nil))
	f, err := NewFleet(cfg)
	if err != nil {
		t.Fatal(err)
	}
	startFleet(t, f)
	e.insert(t, e.events("a1", 0, 1))
	waitFor(t, 30*time.Second, "the dead-letter log line", func() bool {
		return strings.Contains(buf.String(), "event dead-lettered")
	})
	for line := range strings.SplitSeq(buf.String(), "\n") {
		if !strings.Contains(line, "event dead-lettered") {
			continue
		}
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if rec["source"] != "main" || rec["table"] != "outbox_logs" {
			t.Fatalf("log line names source %v, table %v; want main, outbox_logs: %s", rec["source"], rec["table"], line)
		}
	}
}
