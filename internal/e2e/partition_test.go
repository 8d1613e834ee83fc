package e2e

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	gomysql "github.com/go-sql-driver/mysql"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/dialects/mysql"
	"github.com/jitoutbox/jitoutbox/dialects/postgres"
	"github.com/jitoutbox/jitoutbox/dialects/sqlite"
	"github.com/jitoutbox/jitoutbox/internal/testdb"
	"github.com/jitoutbox/jitoutbox/internal/testnats"
	"github.com/jitoutbox/jitoutbox/relay/natspub"
	"github.com/jitoutbox/jitoutbox/txoutbox"
)

// partDB is one database set up for the partition tests.
type partDB struct {
	name string
	db   *sql.DB
	dsn  string
	d    dialects.Dialect
	bind func(n int) string
	// lease: ownership is a lease (SQLite), not a session lock.
	lease bool
	// openAs opens another *sql.DB on the same database whose connections
	// the test can tell apart (PostgreSQL application_name, a MariaDB user
	// of its own); killSession kills, from the server side, the ownership
	// session connection of a relay using it (nil for SQLite).
	openAs      func(t *testing.T, name string) *sql.DB
	killSession func(t *testing.T, name string) int
}

// partDBs runs f as a subtest per database; a database whose variable is
// unset skips.
func partDBs(t *testing.T, sqliteToo bool, f func(t *testing.T, pd partDB)) {
	t.Run("postgres", func(t *testing.T) { f(t, postgresPartDB(t)) })
	t.Run("mariadb", func(t *testing.T) { f(t, mariaPartDB(t)) })
	if sqliteToo {
		t.Run("sqlite", func(t *testing.T) { f(t, sqlitePartDB(t)) })
	}
}

func postgresPartDB(t *testing.T) partDB {
	db, dsn := testdb.Postgres(t, "postgres")
	d, err := postgres.New()
	if err != nil {
		t.Fatal(err)
	}
	apps := map[string]string{}
	var mu sync.Mutex
	return partDB{
		name: "postgres", db: db, dsn: dsn, d: d,
		bind: func(n int) string { return "$" + strconv.Itoa(n) },
		openAs: func(t *testing.T, name string) *sql.DB {
			app := testnats.RandomName("jitpart_")
			mu.Lock()
			apps[name] = app
			mu.Unlock()
			db, err := sql.Open("postgres", withParam(t, dsn, "application_name", app))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			return db
		},
		// The session connection is the one holding granted advisory locks
		// (member and partition locks); the watch connection only waits.
		killSession: func(t *testing.T, name string) int {
			mu.Lock()
			app := apps[name]
			mu.Unlock()
			var n int
			err := db.QueryRowContext(context.Background(), `SELECT count(*) FROM (
				SELECT pg_terminate_backend(a.pid) FROM pg_stat_activity a
				WHERE a.application_name = $1 AND EXISTS (
					SELECT 1 FROM pg_locks l WHERE l.pid = a.pid AND l.locktype = 'advisory' AND l.granted)) k`, app).Scan(&n)
			if err != nil {
				t.Fatalf("pg_terminate_backend: %v", err)
			}
			return n
		},
	}
}

func mariaPartDB(t *testing.T) partDB {
	db, dsn := testdb.MySQL(t)
	d, err := mysql.New()
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := gomysql.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	users := map[string]string{}
	var mu sync.Mutex
	return partDB{
		name: "mariadb", db: db, dsn: dsn, d: d,
		bind: func(int) string { return "?" },
		// A user of its own per relay: the processlist tells its
		// connections apart. Names are generated here, never user input.
		openAs: func(t *testing.T, name string) *sql.DB {
			user, pw := testnats.RandomName("jitpart_"), testnats.RandomName("pw")
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			defer cancel()
			for _, q := range []string{
				"CREATE USER '" + user + "'@'%' IDENTIFIED BY '" + pw + "'",
				"GRANT ALL PRIVILEGES ON " + cfg.DBName + ".* TO '" + user + "'@'%'",
			} {
				if _, err := db.ExecContext(ctx, q); err != nil {
					t.Fatalf("%s: %v", strings.SplitN(q, " ", 3)[:2], err)
				}
			}
			t.Cleanup(func() { _, _ = db.ExecContext(context.Background(), "DROP USER '"+user+"'@'%'") })
			mu.Lock()
			users[name] = user
			mu.Unlock()
			c := *cfg
			c.User, c.Passwd = user, pw
			rdb, err := sql.Open("mysql", c.FormatDSN())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { rdb.Close() })
			return rdb
		},
		// MariaDB does not show who holds a GET_LOCK without a plugin, so
		// every connection of the relay's user is killed: the session
		// connection is one of them.
		killSession: func(t *testing.T, name string) int {
			mu.Lock()
			user := users[name]
			mu.Unlock()
			ctx := context.Background()
			rows, err := db.QueryContext(ctx, "SELECT id FROM information_schema.processlist WHERE user = ?", user)
			if err != nil {
				t.Fatalf("processlist: %v", err)
			}
			var ids []int64
			for rows.Next() {
				var id int64
				if err := rows.Scan(&id); err != nil {
					t.Fatal(err)
				}
				ids = append(ids, id)
			}
			rows.Close()
			n := 0
			for _, id := range ids {
				if _, err := db.ExecContext(ctx, fmt.Sprintf("KILL CONNECTION %d", id)); err == nil {
					n++
				}
			}
			return n
		},
	}
}

func sqlitePartDB(t *testing.T) partDB {
	path := filepath.Join(t.TempDir(), "outbox.db")
	dsn := testdb.SQLiteDSN(path)
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	d, err := sqlite.New()
	if err != nil {
		t.Fatal(err)
	}
	return partDB{name: "sqlite", db: db, dsn: dsn, d: d, lease: true,
		bind: func(int) string { return "?" }}
}

// relayArgs are a relay process's database flags.
func (pd partDB) relayArgs() []string {
	dialect := pd.name
	if dialect == "mariadb" {
		dialect = "mysql"
	}
	return []string{"-dialect", dialect, "-dsn", pd.dsn}
}

// owned reads the partitions whose owner column names a session of relay
// owner (tokens are "<owner>/<random>"). On lease dialects a dead owner
// stays named until its lease is taken over.
func (pd partDB) owned(t *testing.T, owner string) []int {
	t.Helper()
	rows, err := pd.db.QueryContext(context.Background(),
		"SELECT part FROM "+pd.d.Table()+"_partitions WHERE owner LIKE "+pd.bind(1)+" ORDER BY part", owner+"/%")
	if err != nil {
		t.Fatalf("read partition owners: %v", err)
	}
	defer rows.Close()
	var parts []int
	for rows.Next() {
		var p int
		if err := rows.Scan(&p); err != nil {
			t.Fatal(err)
		}
		parts = append(parts, p)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return parts
}

// waitOwned waits until ok(owned(owner)) or fails after limit.
func (pd partDB) waitOwned(t *testing.T, owner string, limit time.Duration, what string, ok func([]int) bool) []int {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		parts := pd.owned(t, owner)
		if ok(parts) {
			return parts
		}
		if time.Now().After(deadline) {
			t.Fatalf("relay %s: %s not reached within %v (owns %d partitions: %v)", owner, what, limit, len(parts), parts)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// aggsByPartition returns, for each of n partitions, an aggregate id of
// type "order" that starts with prefix and hashes to it.
func aggsByPartition(n int, prefix string) []string {
	aggs := make([]string, n)
	left := n
	for i := 0; left > 0; i++ {
		id := prefix + strconv.Itoa(i)
		if p := dialects.PartitionOf("order", id, n); aggs[p] == "" {
			aggs[p] = id
			left--
		}
	}
	return aggs
}

// partStream creates a JetStream stream whose duplicate window is tiny, so
// that every publish of an event, a republish included, is a stream
// message the recorder sees.
func partStream(t *testing.T, js jetstream.JetStream) (jetstream.Stream, string) {
	return testnats.Stream(t, js, func(c *jetstream.StreamConfig) { c.Duplicates = 100 * time.Millisecond })
}

// body is the payload of every event: its aggregate and its number within
// the aggregate (1, 2, ... in commit order).
type body struct {
	Agg string `json:"agg"`
	N   int64  `json:"n"`
}

// ledger is what a test committed: event id -> aggregate and number.
type ledger struct {
	mu     sync.Mutex
	events map[string]body
	next   map[string]int64
	at     map[string]time.Time // event id -> when its Commit returned
}

func newLedger() *ledger {
	return &ledger{events: map[string]body{}, next: map[string]int64{}, at: map[string]time.Time{}}
}

// commit commits one transaction with n events of aggregate agg (numbered
// after the aggregate's last) and records them; one goroutine per
// aggregate keeps the numbering the commit order.
func (l *ledger) commit(ctx context.Context, ob *txoutbox.Outbox, agg string, n int, critical bool) ([]string, error) {
	var opts []txoutbox.TxOption
	if critical {
		opts = append(opts, txoutbox.TimeCritical())
	}
	tx, err := ob.Begin(ctx, nil, opts...)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	l.mu.Lock()
	first := l.next[agg] + 1
	l.mu.Unlock()
	var ids []string
	var bodies []body
	for i := range n {
		b := body{Agg: agg, N: first + int64(i)}
		raw, _ := json.Marshal(b)
		id, err := tx.Add(txoutbox.Event{AggregateType: "order", AggregateID: agg, EventType: "order.changed", Payload: raw})
		if err != nil {
			return nil, err
		}
		ids, bodies = append(ids, id), append(bodies, b)
	}
	if err := tx.Commit(); err != nil {
		return nil, err
	}
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.next[agg] = first + int64(n) - 1
	for i, id := range ids {
		l.events[id] = bodies[i]
		l.at[id] = now
	}
	return ids, nil
}

func (l *ledger) ids() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	ids := make([]string, 0, len(l.events))
	for id := range l.events {
		ids = append(ids, id)
	}
	return ids
}

// produce commits transactions of 1-2 events on aggs, one every period,
// until ctx ends; it returns when it has stopped. A Commit error fails the
// test.
func (l *ledger) produce(ctx context.Context, t *testing.T, ob *txoutbox.Outbox, aggs []string, period time.Duration) {
	tick := time.NewTicker(period)
	defer tick.Stop()
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if _, err := l.commit(ctx, ob, aggs[i%len(aggs)], 1+i%2, i%3 == 0); err != nil {
			if ctx.Err() == nil {
				t.Errorf("producer: %v", err)
			}
			return
		}
	}
}

// recorder records every stream message: per event id the number of
// stream messages and the time of the first; first deliveries must come
// in each aggregate's number order.
type recorder struct {
	mu         sync.Mutex
	count      map[string]int
	first      map[string]time.Time
	last       map[string]int64 // aggregate -> number of its last first delivery
	violations []string
	changed    chan struct{}
}

func record(t *testing.T, ctx context.Context, stream jetstream.Stream) *recorder {
	t.Helper()
	r := newRecorder()
	cons, err := stream.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	cc, err := cons.Consume(func(m jetstream.Msg) {
		r.note(m.Headers().Get(natspub.HeaderEventID), m.Data(), time.Now())
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cc.Stop)
	return r
}

func newRecorder() *recorder {
	return &recorder{count: map[string]int{}, first: map[string]time.Time{}, last: map[string]int64{}, changed: make(chan struct{})}
}

// note records one delivery of event id with payload data (a body) at now.
func (r *recorder) note(id string, data []byte, now time.Time) {
	var b body
	_ = json.Unmarshal(data, &b)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.count[id]++
	if r.count[id] == 1 {
		r.first[id] = now
		if b.N <= r.last[b.Agg] {
			r.violations = append(r.violations, fmt.Sprintf("aggregate %s: %d after %d", b.Agg, b.N, r.last[b.Agg]))
		}
		r.last[b.Agg] = max(r.last[b.Agg], b.N)
	}
	close(r.changed)
	r.changed = make(chan struct{})
}

// await waits until every id has been delivered, failing after limit.
func (r *recorder) await(t *testing.T, limit time.Duration, ids []string) {
	t.Helper()
	timer := time.NewTimer(limit)
	defer timer.Stop()
	for {
		r.mu.Lock()
		var missing []string
		for _, id := range ids {
			if r.count[id] == 0 {
				missing = append(missing, id)
			}
		}
		ch := r.changed
		r.mu.Unlock()
		if len(missing) == 0 {
			return
		}
		select {
		case <-ch:
		case <-timer.C:
			t.Fatalf("%d of %d events not delivered within %v (e.g. %v)", len(missing), len(ids), limit, missing[:min(3, len(missing))])
		}
	}
}

// firstAt returns when id was first delivered.
func (r *recorder) firstAt(id string) time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.first[id]
}

// check fails the test on order violations or unknown events and returns
// the number of stream messages beyond the first per event (republishes).
func (r *recorder) check(t *testing.T, l *ledger) (dups int) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	for id, n := range r.count {
		if _, ok := l.events[id]; !ok {
			t.Errorf("event %q delivered but never committed", id)
		}
		dups += n - 1
	}
	for id := range l.events {
		if r.count[id] == 0 {
			t.Errorf("event %s (%+v) never delivered", id, l.events[id])
		}
	}
	if len(r.violations) > 0 {
		t.Errorf("%d order violations among first deliveries, e.g. %v", len(r.violations), r.violations[:min(5, len(r.violations))])
	}
	return dups
}

// percentiles returns p50, p90 and the maximum of ds.
func percentiles(ds []time.Duration) (p50, p90, pmax time.Duration) {
	if len(ds) == 0 {
		return 0, 0, 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2], s[len(s)*9/10], s[len(s)-1]
}
