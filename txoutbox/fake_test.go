package txoutbox_test

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/txoutbox"
)

var errNotImplemented = errors.New("fake dialect: not implemented")

// fakeDialect writes events with a plain multi-row INSERT into a simple
// table (portable enough for SQLite and sqlmock) and records every batch.
type fakeDialect struct {
	fail   error  // Insert returns this (without touching the db) when set
	schema string // DDL; fakeSchema when empty
	parts  int    // the table's partition count; 8 when 0

	mu      sync.Mutex
	batches [][]dialects.Event
	ctxs    []context.Context

	// Inspector is nil: capture never inspects rows, and a call would
	// panic the test that made it.
	dialects.Inspector
}

var _ dialects.Dialect = (*fakeDialect)(nil)

const fakeSchema = `CREATE TABLE IF NOT EXISTS outbox (
 seq INTEGER PRIMARY KEY AUTOINCREMENT,
 id TEXT NOT NULL UNIQUE,
 aggregate_type TEXT NOT NULL,
 aggregate_id TEXT NOT NULL,
 event_type TEXT NOT NULL,
 payload BLOB,
 content_type TEXT NOT NULL,
 idempotency_key TEXT,
 critical INTEGER NOT NULL,
 created_at TEXT NOT NULL)`

func (d *fakeDialect) Name() string  { return "fake" }
func (d *fakeDialect) Table() string { return "outbox" }
func (d *fakeDialect) Schema() string {
	if d.schema != "" {
		return d.schema
	}
	return fakeSchema
}
func (d *fakeDialect) MaxInsertRows() int { return 1000 }
func (d *fakeDialect) Migrate(ctx context.Context, db *sql.DB) error {
	_, err := db.ExecContext(ctx, d.Schema())
	return err
}

func (d *fakeDialect) Insert(ctx context.Context, q dialects.Execer, events []dialects.Event) error {
	d.mu.Lock()
	d.batches = append(d.batches, append([]dialects.Event(nil), events...))
	d.ctxs = append(d.ctxs, ctx)
	d.mu.Unlock()
	if d.fail != nil {
		return d.fail
	}
	var b strings.Builder
	b.WriteString("INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload, content_type, idempotency_key, critical, created_at) VALUES ")
	args := make([]any, 0, len(events)*9)
	for i, e := range events {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("(?, ?, ?, ?, ?, ?, ?, ?, ?)")
		args = append(args, e.ID, e.AggregateType, e.AggregateID, e.EventType, e.Payload, e.ContentType,
			e.IdempotencyKey, e.Critical, e.CreatedAt.Format(time.RFC3339Nano))
	}
	_, err := q.ExecContext(ctx, b.String(), args...)
	return err
}

func (d *fakeDialect) Batches() [][]dialects.Event {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([][]dialects.Event(nil), d.batches...)
}

func (d *fakeDialect) Contexts() []context.Context {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]context.Context(nil), d.ctxs...)
}

// Partitions is the fake table's fixed count.
func (d *fakeDialect) Partitions(context.Context, dialects.Querier) (int, error) {
	if d.parts == 0 {
		return 8, nil
	}
	return d.parts, nil
}

// InsertHandoff inserts like Insert and hands every event over.
func (d *fakeDialect) InsertHandoff(ctx context.Context, q dialects.Querier, events []dialects.Event) ([]dialects.Record, error) {
	if err := d.Insert(ctx, q, events); err != nil {
		return nil, err
	}
	recs := make([]dialects.Record, len(events))
	for i, e := range events {
		recs[i] = dialects.Record{Event: e, Seq: int64(i + 1)}
	}
	return recs, nil
}
func (d *fakeDialect) OpenSession(context.Context, *sql.DB, string, time.Duration) (dialects.Session, error) {
	return nil, errNotImplemented
}
func (d *fakeDialect) OpenSessionOn(context.Context, *dialects.Locker, string, time.Duration) (dialects.Session, error) {
	return nil, errNotImplemented
}
func (d *fakeDialect) Read(context.Context, *sql.DB, dialects.ReadRequest) (dialects.ReadResult, error) {
	return dialects.ReadResult{}, errNotImplemented
}
func (d *fakeDialect) ReadCritical(context.Context, *sql.DB, dialects.CriticalRequest) (dialects.CriticalResult, error) {
	return dialects.CriticalResult{}, errNotImplemented
}
func (d *fakeDialect) Mark(context.Context, *sql.DB, dialects.Mark) (int64, error) {
	return 0, errNotImplemented
}
func (d *fakeDialect) Fail(context.Context, *sql.DB, string, []dialects.Failure) error {
	return errNotImplemented
}
func (d *fakeDialect) Skip(context.Context, *sql.DB, dialects.RequeueFilter) (int64, error) {
	return 0, errNotImplemented
}
func (d *fakeDialect) Requeue(context.Context, *sql.DB, dialects.RequeueFilter, time.Time) (int64, error) {
	return 0, errNotImplemented
}
func (d *fakeDialect) Cleanup(context.Context, *sql.DB, time.Time, int) (int64, error) {
	return 0, errNotImplemented
}
func (d *fakeDialect) TryLock(context.Context, *sql.DB, string, string, time.Time, time.Time) (bool, error) {
	return false, errNotImplemented
}
func (d *fakeDialect) Stats(context.Context, *sql.DB) (dialects.Stats, error) {
	return dialects.Stats{}, errNotImplemented
}

// countingNotifier counts Notify calls and keeps the partitions of each.
type countingNotifier struct {
	n     atomic.Int64
	mu    sync.Mutex
	parts [][]int
}

func (c *countingNotifier) Notify(parts []int) {
	c.n.Add(1)
	c.mu.Lock()
	c.parts = append(c.parts, slices.Clone(parts))
	c.mu.Unlock()
}

// woken returns the partitions of each Notify call, each sorted.
func (c *countingNotifier) woken() [][]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([][]int, len(c.parts))
	for i, p := range c.parts {
		out[i] = slices.Sorted(slices.Values(p))
	}
	return out
}

// fakeRelay is a txoutbox.Relay that owns the partitions in owned and
// records the commits handed to it.
type fakeRelay struct {
	db      *sql.DB
	d       dialects.Dialect
	owned   map[int]bool
	mu      sync.Mutex
	commits []txoutbox.Commit
}

func (r *fakeRelay) Owns(p int) bool           { return r.owned[p] }
func (r *fakeRelay) DB() *sql.DB               { return r.db }
func (r *fakeRelay) Dialect() dialects.Dialect { return r.d }
func (r *fakeRelay) Committed(c txoutbox.Commit) {
	r.mu.Lock()
	r.commits = append(r.commits, c)
	r.mu.Unlock()
}

func (r *fakeRelay) snapshot() []txoutbox.Commit {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]txoutbox.Commit(nil), r.commits...)
}

func (d *fakeDialect) Now(context.Context, dialects.Querier) (time.Time, error) {
	return time.Time{}, errNotImplemented
}
func (d *fakeDialect) NextDue(context.Context, *sql.DB, []int, time.Time, int) ([]time.Time, error) {
	return nil, errNotImplemented
}
func (d *fakeDialect) Cancel(context.Context, dialects.Querier, []string) ([]string, error) {
	return nil, errNotImplemented
}
func (d *fakeDialect) ReleaseHolds(context.Context, *sql.DB, time.Time, int) (int64, error) {
	return 0, errNotImplemented
}

func (d *fakeDialect) FindTables(context.Context, dialects.Querier, string) ([]string, error) {
	return nil, errNotImplemented
}

func (d *fakeDialect) Activity(context.Context, dialects.Querier, []string) ([]dialects.TableActivity, error) {
	return nil, errNotImplemented
}
