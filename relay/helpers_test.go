package relay

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/internal/testdb"
	"github.com/jitoutbox/jitoutbox/notify"
	"github.com/jitoutbox/jitoutbox/txoutbox"
)

// env is one migrated test database and its dialect.
type env struct {
	db    *sql.DB
	d     dialects.Dialect
	parts int // the table's partition count
}

// forEachTarget runs fn against every database target.
func forEachTarget(t *testing.T, fn func(t *testing.T, e env)) {
	t.Helper()
	for _, tgt := range testdb.Targets() {
		t.Run(tgt.Name, func(t *testing.T) {
			fn(t, openEnv(t, tgt))
		})
	}
}

func openEnv(t *testing.T, tgt testdb.Target) env {
	t.Helper()
	db, _ := tgt.Open(t)
	d := testdb.NewDialect(t, tgt.Dialect)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := d.Migrate(ctx, db); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	parts, err := d.Partitions(ctx, db)
	if err != nil {
		t.Fatalf("partitions: %v", err)
	}
	return env{db: db, d: d, parts: parts}
}

func sqliteEnv(t *testing.T) env { return openEnv(t, testdb.Targets()[0]) }

// events builds n events of aggregate agg whose payloads are "agg/i".
func (e env) events(agg string, from, n int) []dialects.Event {
	evs := make([]dialects.Event, n)
	for i := range evs {
		now := time.Now().UTC()
		evs[i] = dialects.Event{
			ID:            uuid.Must(uuid.NewV7()).String(),
			AggregateType: "order",
			AggregateID:   agg,
			EventType:     "order.changed",
			Payload:       []byte(agg + "/" + strconv.Itoa(from+i)),
			ContentType:   "text/plain",
			CreatedAt:     now,
			Partition:     dialects.PartitionOf("order", agg, e.parts),
		}
	}
	return evs
}

// insert commits events in one transaction.
func (e env) insert(t testing.TB, evs []dialects.Event) {
	t.Helper()
	ctx := context.Background()
	tx, err := e.db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatalf("begin: %v", err)
	}
	for len(evs) > 0 {
		n := min(len(evs), e.d.MaxInsertRows())
		if err := e.d.Insert(ctx, tx, evs[:n]); err != nil {
			_ = tx.Rollback()
			t.Fatalf("insert: %v", err)
		}
		evs = evs[n:]
	}
	if err := tx.Commit(); err != nil {
		t.Fatalf("commit: %v", err)
	}
}

// interleaved builds events for aggs aggregates, perAgg each, interleaved so
// that every batch holds many aggregates.
func (e env) interleaved(aggs, perAgg int) []dialects.Event {
	var out []dialects.Event
	for i := range perAgg {
		for a := range aggs {
			out = append(out, e.events("a"+strconv.Itoa(a), i, 1)...)
		}
	}
	return out
}

func (e env) stats(t *testing.T) dialects.Stats {
	t.Helper()
	s, err := e.d.Stats(context.Background(), e.db)
	if err != nil {
		t.Fatalf("stats: %v", err)
	}
	return s
}

// logPending logs the rows still pending (state 0): seq, id, partition,
// attempts, lock columns and last error.
func (e env) logPending(t *testing.T) {
	t.Helper()
	rows, err := e.db.Query("SELECT seq, id, aggregate_id, part, state, attempts, COALESCE(last_error, '') FROM " + e.d.Table() + " WHERE state = 0 ORDER BY seq LIMIT 20")
	if err != nil {
		t.Logf("pending rows: %v", err)
		return
	}
	defer rows.Close()
	for rows.Next() {
		var seq int64
		var id, agg, lastErr string
		var part, state, attempts int
		if err := rows.Scan(&seq, &id, &agg, &part, &state, &attempts, &lastErr); err != nil {
			t.Logf("pending rows: %v", err)
			return
		}
		t.Logf("pending: seq %d id %s agg %s part %d state %d attempts %d err %q", seq, id, agg, part, state, attempts, lastErr)
	}
}

func (e env) maxAttempts(t *testing.T) int {
	t.Helper()
	var n sql.NullInt64
	if err := e.db.QueryRow("SELECT MAX(attempts) FROM " + e.d.Table()).Scan(&n); err != nil {
		t.Fatalf("max attempts: %v", err)
	}
	return int(n.Int64)
}

// recorder is a Publisher that records what it accepted and checks the
// per-aggregate contract.
type recorder struct {
	mu         sync.Mutex
	fail       func(Message) error // nil: accept everything
	calls      int
	got        []Message
	count      map[string]int
	last       map[string]int      // aggregate -> last payload index accepted
	by         map[string][]string // event id -> the publishers (as) that accepted it
	violations []string
}

// as returns a Publisher that records into r under name, so that a
// violation names the relay that published each copy.
func (r *recorder) as(name string) Publisher { return namedRecorder{r, name} }

type namedRecorder struct {
	*recorder
	name string
}

func (n namedRecorder) Publish(ctx context.Context, batch []Message, errs []error) {
	n.publish(ctx, n.name, batch, errs)
}

func newRecorder(fail func(Message) error) *recorder {
	return &recorder{fail: fail, count: map[string]int{}, last: map[string]int{}}
}

func payloadIndex(m Message) int {
	_, s, _ := strings.Cut(string(m.Payload), "/")
	i, _ := strconv.Atoi(s)
	return i
}

func (r *recorder) Publish(ctx context.Context, batch []Message, errs []error) {
	r.publish(ctx, "", batch, errs)
}

func (r *recorder) publish(_ context.Context, name string, batch []Message, errs []error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls++
	seen := map[string]bool{}
	for i, m := range batch {
		k := m.AggregateType + "/" + m.AggregateID
		if seen[k] {
			r.violations = append(r.violations, "two events of "+k+" in one Publish call")
		}
		seen[k] = true
		if r.fail != nil {
			if err := r.fail(m); err != nil {
				errs[i] = err
				continue
			}
		}
		if last, ok := r.last[k]; ok && payloadIndex(m) <= last {
			r.violations = append(r.violations, fmt.Sprintf("%s: index %d after %d", k, payloadIndex(m), last))
		}
		r.last[k] = payloadIndex(m)
		r.count[m.ID]++
		if r.by == nil {
			r.by = map[string][]string{}
		}
		r.by[m.ID] = append(r.by[m.ID], fmt.Sprintf("%s(seq %d attempt %d at %s)", name, m.Seq, m.Attempt, time.Now().Format("15:04:05.000000")))
		if r.count[m.ID] > 1 {
			r.violations = append(r.violations, fmt.Sprintf("published twice: %s %s/%s by %v", m.ID, m.AggregateType, m.AggregateID, r.by[m.ID]))
		}
		r.got = append(r.got, m)
	}
}

func (r *recorder) published() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.got)
}

func (r *recorder) publishCalls() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls
}

func (r *recorder) check(t *testing.T) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, v := range r.violations {
		if i == 10 {
			t.Errorf("... %d more", len(r.violations)-10)
			break
		}
		t.Error(v)
	}
}

func (r *recorder) snapshot() []Message {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Message(nil), r.got...)
}

// waitFor polls cond until it holds or the timeout passes.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// statsSettle waits until the relay's counters satisfy ok. The relay adds
// to its counters right after the database write they describe, so a test
// that waited on the database can be a moment ahead of them. On timeout it
// reports the last Stats seen.
func statsSettle(t *testing.T, r *Relay, timeout time.Duration, what string, ok func(Stats) bool) Stats {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		st, err := r.Stats(context.Background())
		if err == nil && ok(st) {
			return st
		}
		if time.Now().After(deadline) {
			t.Errorf("%s: stats %+v (err %v) after %v", what, st, err, timeout)
			return st
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func quietLogger() *slog.Logger {
	if os.Getenv("TESTLOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

// testConfig is a config with a quiet logger and short timings.
func testConfig(owner string) Config {
	return Config{
		Owner:             owner,
		Logger:            quietLogger(),
		PollInterval:      time.Hour,
		LeaseDuration:     10 * time.Second,
		RebalanceInterval: 200 * time.Millisecond,
		PublishTimeout:    5 * time.Second,
		Backoff:           func(int) time.Duration { return 20 * time.Millisecond },
	}
}

func newRelay(t *testing.T, e env, pub Publisher, cfg Config) *Relay {
	t.Helper()
	r, err := New(e.db, e.d, pub, cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return r
}

// start runs r until the returned stop is called (or the test ends) and
// checks that Run returned nil.
func start(t *testing.T, r *Relay) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Run: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// startWoken starts a relay on e, woken by a notify.Local of its own
// (cfg.Sources), and waits until it owns every partition.
func startWoken(t *testing.T, e env, pub Publisher, cfg Config) (sig *notify.Local, stop func()) {
	t.Helper()
	sig = notify.NewLocal()
	cfg.Sources = []notify.Source{sig}
	r := newRelay(t, e, pub, cfg)
	stop = start(t, r)
	waitOwnsAll(t, e, r)
	return sig, stop
}

// startHandingOver starts a relay on e that publishes to pub, with an
// Outbox wired to it (txoutbox.WithRelay, so time-critical commits are
// handed over), and returns them and the relay's cycle signals once it
// owns every partition.
func startHandingOver(t *testing.T, e env, pub Publisher, cfg Config) (*Relay, *txoutbox.Outbox, <-chan cycleSignal) {
	t.Helper()
	r := newRelay(t, e, pub, cfg)
	ob := relayOutbox(t, e, r)
	cycles := armCycles(r)
	start(t, r)
	waitOwnsAll(t, e, r)
	nextCycle(t, cycles, "partitions taken", func(s cycleSignal) bool { return s.Reason == reasonOwn })
	return r, ob, cycles
}

// ownedBy returns how many of e's partitions r owns.
func ownedBy(e env, r *Relay) int {
	n := 0
	for p := range e.parts {
		if r.Owns(p) {
			n++
		}
	}
	return n
}

// armCycles arms the cycle test signal.
func armCycles(r *Relay) <-chan cycleSignal {
	ch := make(chan cycleSignal, 10000)
	r.ts.cycle = ch
	return ch
}

// nextCycle waits for a cycle matching cond.
func nextCycle(t *testing.T, ch <-chan cycleSignal, what string, cond func(cycleSignal) bool) cycleSignal {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case s := <-ch:
			if cond(s) {
				return s
			}
		case <-timeout:
			t.Fatalf("timed out waiting for a cycle: %s", what)
		}
	}
}
