package dialecttest

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/jitoutbox/jitoutbox/dialects"
)

// env is one subtest's database, dialect and clock.
type env struct {
	t     testing.TB
	tgt   Target
	ctx   context.Context
	db    *sql.DB
	d     dialects.Dialect
	base  time.Time
	parts int // the table's partition count
	// pooled: handoff passes its transaction as a dialects.PooledTx.
	pooled bool
}

func setup(t testing.TB, tgt Target) *env {
	t.Helper()
	d, err := tgt.New()
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return setupWith(t, tgt, d)
}

func setupWith(t testing.TB, tgt Target, d dialects.Dialect) *env {
	t.Helper()
	db := tgt.Open(t)
	ctx := t.Context()
	if err := d.Migrate(ctx, db); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	e := newEnv(t, tgt, db, d)
	e.loadParts()
	return e
}

func newEnv(t testing.TB, tgt Target, db *sql.DB, d dialects.Dialect) *env {
	return &env{t: t, tgt: tgt, ctx: t.Context(), db: db, d: d, base: setupBase()}
}

func (e *env) loadParts() {
	e.t.Helper()
	n, err := e.d.Partitions(e.ctx, e.db)
	if err != nil {
		e.t.Fatalf("Partitions: %v", err)
	}
	e.parts = n
}

// at returns base + d.
func (e *env) at(d time.Duration) time.Time { return e.base.Add(d) }

// readAt returns the time a read at base+d runs at: base+d, or the
// database's clock when later. A row is due at the database's time of its
// INSERT, after base: a read "at base" must see the rows written since.
func (e *env) readAt(d time.Duration) time.Time {
	e.t.Helper()
	return later(e.at(d), e.now())
}

// now reads the database's clock (Dialect.Now).
func (e *env) now() time.Time {
	e.t.Helper()
	now, err := e.d.Now(e.ctx, e.db)
	if err != nil {
		e.t.Fatalf("Now: %v", err)
	}
	return now
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// event returns a minimal event of aggregate (aggType, aggID) created at
// base, in the aggregate's partition.
func (e *env) event(aggType, aggID string) dialects.Event {
	return dialects.Event{
		ID:            newID(),
		AggregateType: aggType,
		AggregateID:   aggID,
		EventType:     aggType + ".happened",
		Payload:       []byte("p"),
		ContentType:   "text/plain",
		CreatedAt:     e.base,
		Partition:     dialects.PartitionOf(aggType, aggID, e.parts),
	}
}

// events returns one event per aggregate id, all of type "agg".
func (e *env) events(aggIDs ...string) []dialects.Event {
	out := make([]dialects.Event, len(aggIDs))
	for i, a := range aggIDs {
		out[i] = e.event("agg", a)
	}
	return out
}

// aggIn returns n distinct aggregate ids of type "agg" in partition part,
// named prefix + a number.
func (e *env) aggIn(part, n int, prefix string) []string {
	var out []string
	for i := 0; len(out) < n; i++ {
		id := prefix + strconv.Itoa(i)
		if dialects.PartitionOf("agg", id, e.parts) == part {
			out = append(out, id)
		}
		if i > 1_000_000 {
			e.t.Fatalf("no aggregate id in partition %d", part)
		}
	}
	return out
}

// insert writes evs in one committed transaction.
func (e *env) insert(evs ...dialects.Event) {
	e.t.Helper()
	tx, err := e.db.BeginTx(e.ctx, nil)
	if err != nil {
		e.t.Fatalf("begin: %v", err)
	}
	if err := e.d.Insert(e.ctx, tx, evs); err != nil {
		_ = tx.Rollback()
		e.t.Fatalf("Insert: %v", err)
	}
	if err := tx.Commit(); err != nil {
		e.t.Fatalf("commit: %v", err)
	}
}

// all returns every partition of the table.
func (e *env) all() []int {
	out := make([]int, e.parts)
	for i := range out {
		out[i] = i
	}
	return out
}

// read reads parts at base+now, checking Seq order, the partitions and
// the limit.
func (e *env) read(parts []int, after int64, limit int, now time.Duration) []dialects.Record {
	e.t.Helper()
	return e.readReq(dialects.ReadRequest{Partitions: parts, After: after, Limit: limit}, now).Records
}

// readReq reads as req asks at base+now (req.Now is set), checking Seq
// order, the partitions, the limit and the horizon: a read from the start
// that found rows has none (0) or one at or above each of them, a read
// ahead has none.
func (e *env) readReq(req dialects.ReadRequest, now time.Duration) dialects.ReadResult {
	e.t.Helper()
	parts, after, limit := req.Partitions, req.After, req.Limit
	req.Now = e.readAt(now)
	res, err := e.d.Read(e.ctx, e.db, req)
	if err != nil {
		e.t.Fatalf("Read: %v", err)
	}
	recs := res.Records
	if after > 0 && res.Horizon != 0 {
		e.t.Fatalf("Read ahead returned horizon %d, want 0", res.Horizon)
	}
	if after == 0 && len(recs) > 0 && res.Horizon != 0 && res.Horizon < recs[len(recs)-1].Seq {
		e.t.Fatalf("Read returned horizon %d below its last row's seq %d", res.Horizon, recs[len(recs)-1].Seq)
	}
	if len(recs) > limit {
		e.t.Fatalf("Read returned %d rows, limit %d", len(recs), limit)
	}
	for i, r := range recs {
		if i > 0 && recs[i-1].Seq >= r.Seq {
			e.t.Fatalf("Read not in Seq order: %d then %d", recs[i-1].Seq, r.Seq)
		}
		if !slices.Contains(parts, r.Partition) {
			e.t.Fatalf("Read of partitions %v returned seq %d of partition %d", parts, r.Seq, r.Partition)
		}
		if want := dialects.PartitionOf(r.AggregateType, r.AggregateID, e.parts); r.Partition != want {
			e.t.Fatalf("seq %d: partition %d, want PartitionOf = %d", r.Seq, r.Partition, want)
		}
		if r.Seq <= after {
			e.t.Fatalf("Read after %d returned seq %d", after, r.Seq)
		}
	}
	return res
}

// readAll reads every partition at base+now.
func (e *env) readAll(now time.Duration) []dialects.Record {
	e.t.Helper()
	return e.read(e.all(), 0, 100000, now)
}

// session opens a session named relay, closed on cleanup.
func (e *env) session(relay string) dialects.Session {
	e.t.Helper()
	s, err := e.d.OpenSession(e.ctx, e.db, relay, e.tgt.lease())
	if err != nil {
		e.t.Fatalf("OpenSession(%s): %v", relay, err)
	}
	e.t.Cleanup(func() { _ = s.Close() })
	return s
}

// take takes parts at base+now with s and returns what it took.
func (e *env) take(s dialects.Session, parts []int, now time.Duration) []int {
	e.t.Helper()
	got, err := s.Take(e.ctx, parts, e.at(now))
	if err != nil {
		e.t.Fatalf("Take(%v): %v", parts, err)
	}
	return got
}

// own opens a session that takes every partition and returns its token.
func (e *env) own(relay string) dialects.Session {
	e.t.Helper()
	s := e.session(relay)
	if got := e.take(s, e.all(), 0); len(got) != e.parts {
		e.t.Fatalf("%s took %d of %d partitions", relay, len(got), e.parts)
	}
	return s
}

// mark marks seqs published at base+at with token and returns the count.
func (e *env) mark(token string, ss []int64, at time.Duration) int64 {
	e.t.Helper()
	n, err := e.d.Mark(e.ctx, e.db, dialects.Mark{Token: token, Seqs: ss, At: e.at(at)})
	if err != nil {
		e.t.Fatalf("Mark: %v", err)
	}
	return n
}

// failure returns a failure of r due again at base+next.
func (e *env) failure(r dialects.Record, msg string, next time.Duration, dead, block bool) dialects.Failure {
	return dialects.Failure{Seq: r.Seq, Partition: r.Partition, AggregateType: r.AggregateType, AggregateID: r.AggregateID,
		Error: msg, NextAttemptAt: e.at(next), Dead: dead, Block: block}
}

// fail records failures with token.
func (e *env) fail(token string, fs ...dialects.Failure) {
	e.t.Helper()
	if err := e.d.Fail(e.ctx, e.db, token, fs); err != nil {
		e.t.Fatalf("Fail: %v", err)
	}
}

func (e *env) stats() dialects.Stats {
	e.t.Helper()
	s, err := e.d.Stats(e.ctx, e.db)
	if err != nil {
		e.t.Fatalf("Stats: %v", err)
	}
	return s
}

// ph renders the n-th (1-based) bind parameter for raw test queries.
func (e *env) ph(n int) string {
	if e.d.Name() == "postgres" {
		return "$" + strconv.Itoa(n)
	}
	return "?"
}

// row reads attempts, state and last_error of one seq with plain SQL.
func (e *env) row(seq int64) (attempts int, state dialects.State, lastError sql.NullString) {
	e.t.Helper()
	q := fmt.Sprintf("SELECT attempts, state, last_error FROM %s WHERE seq = %s", e.d.Table(), e.ph(1))
	if err := e.db.QueryRowContext(e.ctx, q, seq).Scan(&attempts, &state, &lastError); err != nil {
		e.t.Fatalf("read seq %d: %v", seq, err)
	}
	return attempts, state, lastError
}

func ids(recs []dialects.Record) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = r.ID
	}
	return out
}

func seqs(recs []dialects.Record) []int64 {
	out := make([]int64, len(recs))
	for i, r := range recs {
		out[i] = r.Seq
	}
	return out
}

func aggIDs(recs []dialects.Record) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = r.AggregateID
	}
	return out
}

func eventIDs(evs []dialects.Event) []string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		out[i] = ev.ID
	}
	return out
}

func equalStrings(a, b []string) bool { return slices.Equal(a, b) }

func wantAggs(t testing.TB, what string, recs []dialects.Record, want ...string) {
	t.Helper()
	if got := aggIDs(recs); !equalStrings(got, want) {
		t.Fatalf("%s: got aggregates %q, want %q", what, got, want)
	}
}

func wantIDs(t testing.TB, what string, recs []dialects.Record, want ...dialects.Event) {
	t.Helper()
	if got := ids(recs); !equalStrings(got, eventIDs(want)) {
		t.Fatalf("%s: got ids %q, want %q", what, got, eventIDs(want))
	}
}

func wantN(t testing.TB, what string, got int64, err error, want int64) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if got != want {
		t.Fatalf("%s: got %d, want %d", what, got, want)
	}
}

// setupBase is the suite's clock origin: the wall clock (lease dialects
// may compare the times given to sessions with their own), to the µs.
func setupBase() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

// newID returns a new event id: a UUIDv7, increasing within the process.
func newID() string { return uuid.Must(uuid.NewV7()).String() }
