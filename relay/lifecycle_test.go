package relay

import (
	"context"
	"database/sql"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/dialects/sqlite"
	"github.com/jitoutbox/jitoutbox/internal/testdb"
	"github.com/jitoutbox/jitoutbox/notify"
	"github.com/jitoutbox/jitoutbox/txoutbox"
)

func TestConfigValidation(t *testing.T) {
	e := sqliteEnv(t)
	pub := newRecorder(nil)
	cases := []struct {
		name string
		cfg  Config
		want string // "" for valid
	}{
		{"zero value", Config{}, ""},
		{"negative batch", Config{BatchSize: -1}, "BatchSize"},
		{"negative poll", Config{PollInterval: -time.Second}, "PollInterval"},
		{"negative lazy", Config{LazyDelay: -time.Second}, "LazyDelay"},
		{"negative attempts", Config{MaxAttempts: -1}, "MaxAttempts"},
		{"negative cleanup batch", Config{CleanupBatch: -1}, "CleanupBatch"},
		{"negative cleanup interval", Config{CleanupInterval: -1}, "CleanupInterval"},
		{"negative rebalance", Config{RebalanceInterval: -1}, "RebalanceInterval"},
		{"lease not above timeout", Config{LeaseDuration: 5 * time.Second, PublishTimeout: 5 * time.Second}, "LeaseDuration"},
		{"lease below default timeout", Config{LeaseDuration: time.Second}, "LeaseDuration"},
		{"nil source", Config{Sources: []notify.Source{notify.NewLocal(), nil}}, "Sources[1]"},
		{"long owner", Config{Owner: strings.Repeat("x", 201)}, "Owner"},
		{"negative retention disables cleanup", Config{Retention: -1}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := New(e.db, e.d, pub, c.cfg)
			if c.want == "" {
				if err != nil {
					t.Fatalf("New: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("New: %v; want ErrInvalidConfig naming %s", err, c.want)
			}
		})
	}
	for name, f := range map[string]func() error{
		"nil db":        func() error { _, err := New(nil, e.d, pub, Config{}); return err },
		"nil dialect":   func() error { _, err := New(e.db, nil, pub, Config{}); return err },
		"nil publisher": func() error { _, err := New(e.db, e.d, nil, Config{}); return err },
	} {
		if err := f(); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%s: %v, want ErrInvalidConfig", name, err)
		}
	}
}

func TestDefaults(t *testing.T) {
	c := Config{}.withDefaults()
	if c.BatchSize != 500 || c.PollInterval != 30*time.Second || c.LazyDelay != 250*time.Millisecond ||
		c.LeaseDuration != 60*time.Second || c.RebalanceInterval != 30*time.Second || c.PublishTimeout != 10*time.Second || c.MaxAttempts != 10 ||
		c.Retention != 7*24*time.Hour || c.CleanupInterval != 10*time.Minute || c.CleanupBatch != 1000 ||
		c.Owner == "" || c.Logger == nil || c.Clock == nil || c.Backoff == nil {
		t.Errorf("defaults: %+v", c)
	}
	if o2 := (Config{}).withDefaults().Owner; o2 == c.Owner {
		t.Errorf("default owners collide: %q", o2)
	}
	for attempt, want := range map[int]time.Duration{1: time.Second, 2: 5 * time.Second, 3: 30 * time.Second, 4: 2 * time.Minute, 5: 5 * time.Minute, 50: 5 * time.Minute} {
		got := DefaultBackoff(attempt)
		if got < want*8/10 || got > want*12/10 {
			t.Errorf("DefaultBackoff(%d) = %v, want %v ±20%%", attempt, got, want)
		}
	}
	if d := nextTroubleDelay(0, time.Second); d != minTroubleDelay {
		t.Errorf("first trouble delay %v", d)
	}
	if d := nextTroubleDelay(800*time.Millisecond, time.Second); d != time.Second {
		t.Errorf("trouble delay not capped: %v", d)
	}
}

func TestRunTwice(t *testing.T) {
	e := sqliteEnv(t)
	r := newRelay(t, e, newRecorder(nil), testConfig("r1"))
	cycles := armCycles(r)
	stop := start(t, r)
	nextCycle(t, cycles, "start", func(s cycleSignal) bool { return true })
	if err := r.Run(context.Background()); !errors.Is(err, ErrRunning) {
		t.Fatalf("second Run: %v, want ErrRunning", err)
	}
	stop()
	// After a clean stop the relay may run again.
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	nextCycle(t, cycles, "restart", func(s cycleSignal) bool { return s.Reason == reasonStart })
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run after restart: %v", err)
	}
}

// A relay run a second time starts from nothing of its first run: with a
// second relay taking over in between, every event is published once.
func TestReRunPublishesOnce(t *testing.T) {
	forEachTarget(t, func(t *testing.T, e env) {
		rec := newRecorder(nil)
		cfg := testConfig("r1")
		cfg.PollInterval = 100 * time.Millisecond
		r1 := newRelay(t, e, rec, cfg)
		ob := relayOutbox(t, e, r1)
		stop1 := start(t, r1)
		waitOwnsAll(t, e, r1)
		for i := range 10 {
			commit(t, ob, "a"+strconv.Itoa(i%3), i, 1, false, txoutbox.TimeCritical())
		}
		stop1()
		cfg2 := testConfig("r2")
		cfg2.PollInterval = 100 * time.Millisecond
		r2 := newRelay(t, e, rec, cfg2)
		start(t, r2)
		for i := 10; i < 25; i++ {
			commit(t, ob, "a"+strconv.Itoa(i%3), i, 1, false, txoutbox.TimeCritical())
		}
		start(t, r1)
		for i := 25; i < 50; i++ {
			commit(t, ob, "a"+strconv.Itoa(i%3), i, 1, false, txoutbox.TimeCritical())
		}
		waitFor(t, 30*time.Second, "50 published", func() bool { return rec.published() >= 50 })
		time.Sleep(300 * time.Millisecond) // a duplicate would come within a few polls
		rec.check(t)
		if n := rec.published(); n != 50 {
			t.Errorf("published %d, want 50", n)
		}
	})
}

type failingSource struct{}

func (failingSource) Listen(context.Context, *notify.Wakes) error {
	return errors.New("listen refused")
}

func TestRunFailsWhenSourceFails(t *testing.T) {
	e := sqliteEnv(t)
	cfg := testConfig("r1")
	cfg.Sources = []notify.Source{notify.NewLocal(), failingSource{}}
	r := newRelay(t, e, newRecorder(nil), cfg)
	if err := r.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "listen refused") {
		t.Fatalf("Run: %v, want the listen error", err)
	}
}

// A stopping relay finishes its batch in flight (the confirmed event is
// marked) and ends its session: another session takes every partition at
// once, and no attempt was counted.
func TestStopReleasesInFlightBatch(t *testing.T) {
	forEachTarget(t, func(t *testing.T, e env) {
		e.insert(t, e.interleaved(3, 2))
		entered := make(chan struct{}, 1)
		var accepted atomic.Int32
		pub := PublisherFunc(func(ctx context.Context, batch []Message, errs []error) {
			// Accept the first message, then hang until the relay stops.
			accepted.Add(1)
			select {
			case entered <- struct{}{}:
			default:
			}
			<-ctx.Done()
			for i := 1; i < len(errs); i++ {
				errs[i] = ctx.Err()
			}
		})
		cfg := testConfig("r1")
		r := newRelay(t, e, pub, cfg)
		stop := start(t, r)
		<-entered
		stop()
		if n := accepted.Load(); n != 1 {
			t.Fatalf("Publish called %d times, want 1", n)
		}
		st := e.stats(t)
		if st.Published != 1 || st.Pending != 5 {
			t.Errorf("after stop: %+v, want the confirmed event marked and 5 pending", st)
		}
		ctx := context.Background()
		other, err := e.d.OpenSession(ctx, e.db, "other", 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer other.Close()
		all := make([]int, e.parts)
		for i := range all {
			all[i] = i
		}
		if got, err := other.Take(ctx, all, time.Now()); err != nil || len(got) != e.parts {
			t.Errorf("another session took %d partitions at once (err %v), want all %d", len(got), err, e.parts)
		}
		if n := e.maxAttempts(t); n != 0 {
			t.Errorf("stop counted an attempt: max attempts %d", n)
		}
	})
}

// flaky fails Read while failing is set.
type flaky struct {
	dialects.Dialect
	mu      sync.Mutex
	failing bool
	reads   int
}

func (f *flaky) Read(ctx context.Context, db *sql.DB, req dialects.ReadRequest) (dialects.ReadResult, error) {
	f.mu.Lock()
	f.reads++
	failing := f.failing
	f.mu.Unlock()
	if failing {
		return dialects.ReadResult{}, errors.New("database is down")
	}
	return f.Dialect.Read(ctx, db, req)
}

// readCount returns how many reads f has served or failed.
func (f *flaky) readCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.reads
}

func TestDatabaseErrorBacksOff(t *testing.T) {
	e := sqliteEnv(t)
	e.insert(t, e.events("o", 0, 3))
	fd := &flaky{Dialect: e.d, failing: true}
	e.d = fd
	rec := newRecorder(nil)
	cfg := testConfig("r1")
	cfg.PollInterval = 300 * time.Millisecond
	r := newRelay(t, e, rec, cfg)
	cycles := armCycles(r)
	start(t, r)
	began := time.Now()
	for range 5 {
		s := nextCycle(t, cycles, "failing cycle", func(s cycleSignal) bool { return s.Reason != reasonStart })
		if s.DBError == nil {
			t.Fatalf("cycle %+v without the database error", s)
		}
	}
	if el := time.Since(began); el < 600*time.Millisecond {
		t.Errorf("5 failing cycles in %v: no back-off", el)
	}
	fd.mu.Lock()
	fd.failing = false
	fd.mu.Unlock()
	waitFor(t, 10*time.Second, "published after recovery", func() bool { return rec.published() == 3 })
}

// Relays that share a table without a cross-process wake would leave the
// time-critical events committed elsewhere for their partitions to the
// poll: the relay says so, naming the fix, instead of waiting silently.
func TestWarnsWithoutCrossProcessWake(t *testing.T) {
	e := sqliteEnv(t)
	var logs syncBuffer
	cfg := testConfig("lonely")
	cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	r1 := newRelay(t, e, newRecorder(nil), cfg)
	start(t, r1)
	waitOwnsAll(t, e, r1)
	if strings.Contains(logs.String(), "cross-process wake") {
		t.Fatalf("a relay alone warned: %s", logs.String())
	}
	cfg2 := testConfig("other")
	cfg2.Sources = []notify.Source{notify.NewLocal()}
	start(t, newRelay(t, e, newRecorder(nil), cfg2))
	waitFor(t, 10*time.Second, "the warning", func() bool {
		s := logs.String()
		return strings.Contains(s, "cross-process wake") && strings.Contains(s, "pgnotify")
	})
}

// Run refuses, with a typed error and before writing anything, a table
// that Migrate has not brought to this version and a dialect configured
// with another partition count than the table's.
func TestRunRefusesSchemaAndPartitionMismatch(t *testing.T) {
	e := sqliteEnv(t)
	d8, err := sqlite.New(sqlite.WithPartitions(8))
	if err != nil {
		t.Fatal(err)
	}
	r, err := New(e.db, d8, newRecorder(nil), testConfig("p8"))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Run(context.Background()); !errors.Is(err, dialects.ErrPartitionMismatch) {
		t.Fatalf("Run with 8 partitions on a %d-partition table: %v, want ErrPartitionMismatch", e.parts, err)
	}
	other, err := sqlite.New(sqlite.WithTable("never_migrated"))
	if err != nil {
		t.Fatal(err)
	}
	r, err = New(e.db, other, newRecorder(nil), testConfig("old"))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Run(context.Background()); !errors.Is(err, dialects.ErrSchemaVersion) {
		t.Fatalf("Run on a table that was never migrated: %v, want ErrSchemaVersion", err)
	}
	var n int
	if err := e.db.QueryRow("SELECT COUNT(*) FROM " + e.d.Table() + "_relays").Scan(&n); err != nil || n != 0 {
		t.Fatalf("refused relays left %d relay rows (err %v)", n, err)
	}
}

// A relay started while its database cannot be reached does not exit: it
// logs, retries with back-off, and publishes once the database is there.
func TestRunWaitsForTheDatabase(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "not-yet")
	path := filepath.Join(dir, "outbox.db")
	db, err := sql.Open("sqlite", testdb.SQLiteDSN(path))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	d := testdb.NewDialect(t, "sqlite")
	rec := newRecorder(nil)
	var logs syncBuffer
	cfg := testConfig("r1")
	cfg.RebalanceInterval = 200 * time.Millisecond // the retry's back-off limit
	cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	r, err := New(db, d, rec, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}()
	waitFor(t, 10*time.Second, "a logged retry", func() bool {
		return strings.Contains(logs.String(), "cannot read the outbox table's partitions; retrying")
	})
	select {
	case err := <-done:
		t.Fatalf("Run returned while the database was unreachable: %v", err)
	default:
	}
	// The database appears, migrated by someone else: built in another
	// directory and moved into place at once (a reachable table without
	// its schema would be ErrSchemaVersion, a different error).
	ready := filepath.Join(t.TempDir(), "ready")
	if err := os.MkdirAll(ready, 0o755); err != nil {
		t.Fatal(err)
	}
	bdb, err := sql.Open("sqlite", testdb.SQLiteDSN(filepath.Join(ready, "outbox.db")))
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Migrate(ctx, bdb); err != nil {
		t.Fatal(err)
	}
	if err := bdb.Close(); err != nil { // checkpoints the WAL into outbox.db
		t.Fatal(err)
	}
	if err := os.Rename(ready, dir); err != nil {
		t.Fatal(err)
	}
	mdb, err := sql.Open("sqlite", testdb.SQLiteDSN(path))
	if err != nil {
		t.Fatal(err)
	}
	defer mdb.Close()
	parts, err := d.Partitions(ctx, mdb)
	if err != nil {
		t.Fatal(err)
	}
	e := env{db: mdb, d: d, parts: parts}
	e.insert(t, e.events("a", 0, 2))
	waitFor(t, 30*time.Second, "published after the database came", func() bool { return rec.published() == 2 })
}
