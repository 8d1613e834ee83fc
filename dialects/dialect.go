// Package dialects defines the contract between jitoutbox and a database.
//
// A Dialect owns every SQL statement jitoutbox sends: the schema, the
// multi-row INSERT used by txoutbox on commit, the partition ownership
// sessions of relays, and the read, mark, retry, dead-letter, requeue, skip
// and cleanup statements used by the relay. One package
// per database implements it (dialects/postgres, dialects/mysql,
// dialects/sqlite); each keeps its SQL in embedded .sql files and passes the
// shared conformance suite in dialects/dialecttest.
//
// Schema changes are numbered migrations (sql/migrations/ of each dialect)
// that only expand, since Dialect.Migrate runs while the previous release's
// writers and relays still run; what they make obsolete is dropped one
// release later (docs/schema.md). internal/e2e's
// TestUpgradeWithPreviousRelease checks it with the previous release's
// binaries.
//
// Dialect is not meant to be implemented outside this module: methods may be
// added to it in minor releases. Dialects import no database driver; callers
// open the *sql.DB with the driver of their choice.
package dialects

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// DefaultTable is the outbox table name used when none is configured.
const DefaultTable = "outbox"

// ErrInvalidTable is returned (wrapped) by dialect constructors when the table
// name is not a plain identifier. The name is never interpolated into SQL.
var ErrInvalidTable = errors.New("dialects: invalid table name")

// TableNameError is returned by a dialect's WithTable for a table name too
// long for the index, constraint and side-table names derived from it to fit
// the identifier limit (PostgreSQL would silently cut them, MySQL refuse the
// migration). It wraps ErrInvalidTable.
type TableNameError struct {
	// Table is the name given.
	Table string
	// Dialect is the dialect's name ("postgres", "mysql").
	Dialect string
	// Max is the longest table name (its last part, without a schema)
	// the dialect accepts, in bytes.
	Max int
	// IdentLimit is the database's identifier limit that Max leaves room
	// in for the longest derived suffix.
	IdentLimit int
}

// Error says the limit and why.
func (e *TableNameError) Error() string {
	return fmt.Sprintf("%v: %q: %s table names may have at most %d characters, so that the names derived from them "+
		"(such as <table>_idempotency_key_idx) fit the %d-byte identifier limit", ErrInvalidTable, e.Table, e.Dialect,
		e.Max, e.IdentLimit)
}

// Unwrap returns ErrInvalidTable.
func (e *TableNameError) Unwrap() error { return ErrInvalidTable }

// ErrInvalidRequeueFilter is returned (wrapped) by Requeue when the filter
// does not use exactly one way of selecting rows.
var ErrInvalidRequeueFilter = errors.New("dialects: invalid requeue filter")

// Execer is the part of *sql.DB, *sql.Tx and *sql.Conn that runs a statement.
type Execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// Querier is the part of *sql.DB, *sql.Tx and *sql.Conn that runs statements
// and queries.
type Querier interface {
	Execer
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// PooledTx is a transaction begun on DB, passed as the Querier of Insert
// and InsertHandoff by callers that know the pool (txoutbox's Begin): a
// dialect may then run its hot statements through statements prepared once
// on DB (sql.Tx.StmtContext), which go-sql-driver/mysql runs in one round
// trip instead of a prepare, an execute and a close. Dialects that do not
// look for it run on Tx as on any Querier.
type PooledTx struct {
	Tx *sql.Tx
	DB *sql.DB
}

// ExecContext runs query on the transaction.
func (p PooledTx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return p.Tx.ExecContext(ctx, query, args...)
}

// QueryContext runs query on the transaction.
func (p PooledTx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return p.Tx.QueryContext(ctx, query, args...)
}

// QueryRowContext runs query on the transaction.
func (p PooledTx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return p.Tx.QueryRowContext(ctx, query, args...)
}

// Event is one event as it is written into the outbox table.
type Event struct {
	// ID is the event id: a UUIDv7 in canonical text form, unique, time-ordered.
	ID string
	// AggregateType names the kind of entity the event is about ("order").
	AggregateType string
	// AggregateID identifies the entity; events of one aggregate are delivered
	// in registration order.
	AggregateID string
	// EventType names what happened ("order.paid").
	EventType string
	// Payload is the event body; it may be empty. Never nil-vs-empty sensitive.
	Payload []byte
	// ContentType is the payload's media type; "application/json" payloads
	// are stored so that they stay readable with plain SQL where the database
	// allows it.
	ContentType string
	// Headers are user headers, sent with the message.
	Headers map[string]string
	// IdempotencyKey is an optional caller-given key ("" for none).
	IdempotencyKey string
	// Critical marks an event of a time-critical transaction.
	Critical bool
	// CreatedAt is the registration time, UTC.
	CreatedAt time.Time
	// Partition is PartitionOf(AggregateType, AggregateID, P) for the
	// table's partition count P: every event of one aggregate is in one
	// partition, and one relay at a time owns a partition.
	Partition int
	// NotBefore, when not zero, is the earliest time the event may be
	// published (an absolute time; the database's clock decides when it is reached).
	NotBefore time.Time
	// Delay, when > 0, schedules the event this long after its INSERT by the
	// database's clock. With NotBefore too, the later of the two.
	Delay time.Duration
	// Unordered puts a scheduled event outside its aggregate's order: the
	// later events of its aggregate do not wait for it. Ignored unless the
	// event is scheduled (NotBefore or Delay set).
	Unordered bool
}

// Scheduled reports whether the event is scheduled: NotBefore or Delay set.
func (e *Event) Scheduled() bool {
	return !e.NotBefore.IsZero() || e.Delay > 0
}

// Holds reports whether the event holds the later events of its aggregate
// until it is due: a scheduled event that is not Unordered.
func (e *Event) Holds() bool {
	return e.Scheduled() && !e.Unordered
}

// IsJSON reports whether the event's content type is JSON.
func (e *Event) IsJSON() bool {
	return e.ContentType == "application/json"
}

// Record is an event read back by the relay, with its delivery state.
type Record struct {
	Event
	// Seq is the table's insertion sequence (primary key); claims return
	// records in Seq order.
	Seq int64
	// Attempts is the number of failed publish attempts so far.
	Attempts int
	// DeliverAt is the row's stored due time: the later of NotBefore and
	// the database's time of the INSERT plus Delay. Zero for a row never
	// scheduled.
	DeliverAt time.Time
	// Bad is set when a column of the row could not be decoded (see
	// RowError): the fields of the columns that could be are filled in.
	// The relay dead-letters such a row without publishing it.
	Bad *RowError
}

// State is the delivery state of a row.
type State int

// Row states as stored in the state column.
const (
	StatePending   State = 0
	StatePublished State = 1
	StateDead      State = 2
)

// Failure records one failed publish.
type Failure struct {
	Seq int64
	// Partition, AggregateType and AggregateID locate the row's aggregate
	// (for its block).
	Partition     int
	AggregateType string
	AggregateID   string
	// Error is the last error text (truncated by the dialect if needed).
	Error string
	// NextAttemptAt is when the row is due again.
	NextAttemptAt time.Time
	// Dead moves the row to StateDead.
	Dead bool
	// Block records a block on the row's aggregate: later rows of the
	// aggregate are not read until NextAttemptAt (a retry) or, for a dead
	// row, until an operator requeues or skips it. A dead row without Block
	// releases its aggregate (Config.ReleaseOnDead in the relay).
	Block bool
}

// RequeueFilter selects dead rows to move back to pending. Exactly one way of
// selecting must be used: IDs, an aggregate (type and id), or All.
type RequeueFilter struct {
	IDs           []string
	AggregateType string
	AggregateID   string
	All           bool
}

// StatsExactPublished is the most published rows Dialect.Stats counts one
// by one; above it, Stats.Published is an estimate.
const StatsExactPublished = 10000

// Stats is a snapshot of the table. Reading it costs time bounded by the
// pending and dead rows and the blocked aggregates (each read through an
// index or a small table), not by the published rows kept for Retention.
type Stats struct {
	// Pending counts rows not yet published, including those a relay is
	// publishing now and those waiting for their next retry.
	Pending int64
	// Dead counts dead-lettered rows.
	Dead int64
	// Published counts published rows still in the table (awaiting
	// cleanup): exactly up to StatsExactPublished; above it an estimate
	// (PublishedEstimated) from the span of seqs between the oldest kept
	// published row and the newest row, less the pending and dead ones. A
	// seq lost to a rolled-back insert or a row deleted out of order makes
	// the estimate high.
	Published int64
	// PublishedEstimated reports that Published is an estimate.
	PublishedEstimated bool
	// OldestPending is since when the longest-waiting pending row could be
	// published: its CreatedAt, or a scheduled row's due time (DeliverAt);
	// scheduled rows not yet due are left out. Zero if none (or if that
	// row's time cannot be decoded: see RowError).
	OldestPending time.Time
	// OldestPublished is the PublishedAt of the oldest published row still
	// in the table; zero if none. Cleanup is behind when it is older than
	// the relays' Retention.
	OldestPublished time.Time
	// BlockedDead counts aggregates held back behind a dead row (until an
	// operator requeues or skips it).
	BlockedDead int64
	// BlockedRetry counts aggregates held back behind a row that failed and
	// will be retried (its block lasts until the row is published or dies).
	BlockedRetry int64
	// BadPartition counts pending and dead rows whose partition is outside
	// [0, P): no relay reads them. The schema refuses such rows since the
	// partition check migration; rows written before it may remain.
	BadPartition int64
	// Scheduled counts pending rows whose DeliverAt is after the
	// database's now: scheduled and not yet due.
	Scheduled int64
	// NextDue is the earliest DeliverAt of those rows; zero if none.
	NextDue time.Time
}

// Mark records the outcome of published rows.
type Mark struct {
	// Token is the ownership token of the relay's session (Session.Token):
	// only rows of partitions that this token still owns are marked.
	Token string
	// Seqs are the published rows.
	Seqs []int64
	// Unblock lists the seqs among Seqs that had failed before (Attempts >
	// 0): their aggregates' retry blocks are removed with the mark.
	Unblock []int64
	// At is the publish time (ignored when Delete).
	At time.Time
	// Delete deletes the rows instead of setting the published state.
	Delete bool
}

// ReadResult is what a Read found.
type ReadResult struct {
	// Records are the pending, due, unblocked rows, in Seq order.
	Records []Record
	// Horizon, for a read from the start (After == 0), is the highest Seq
	// the read saw committed, in any state and partition (0 on an empty
	// table and for a read ahead). An earlier row of the aggregate of any
	// row at or below it was committed when the read looked, so the read
	// returned it if pending: a read ahead may skip the costly look for an
	// earlier pending row for those rows (docs/guarantees.md).
	//
	// Horizon is 0 when the read saw a block in its partitions: a block
	// can go while reads ahead run, and the rows behind it were not read.
	Horizon int64
}

// ReadRequest asks for pending rows of owned partitions.
type ReadRequest struct {
	// Partitions are the partitions to read (those the relay owns).
	Partitions []int
	// After, when > 0, returns only rows with Seq > After: the relay's read
	// ahead while a batch is in flight. A row above Horizon is left out
	// when its aggregate has a pending row with Seq <= After (a lower Seq
	// that committed late must be published first).
	After int64
	// Horizon is the ReadResult.Horizon of the read from the start this
	// read ahead follows, with the same Partitions (0: none).
	Horizon int64
	// Limit is the most rows returned (> 0).
	Limit int
	// Now is the relay's clock. It decides the due-ness of retried and
	// scheduled rows (and of holds and blocks); a row never tried and not
	// scheduled is due once it is visible, whatever Now says.
	Now time.Time
}

// CriticalWindow is the most candidates a ReadCritical looks at when
// CriticalRequest.Window is not set.
const CriticalWindow = 256

// CriticalRequest asks for the time-critical rows of owned partitions that
// can be published at once, ahead of any backlog (Dialect.ReadCritical).
type CriticalRequest struct {
	// Partitions are the partitions to read (those the relay owns).
	Partitions []int
	// Limit is the most rows returned (> 0).
	Limit int
	// Window is the most candidates looked at, in Seq order (<= 0:
	// CriticalWindow): it bounds the work when many time-critical rows wait
	// behind earlier rows of their aggregates. Rows past it are left to Read.
	Window int
	// Now is the relay's clock. It decides the due-ness of retried rows
	// (and of holds and blocks); a row never tried and not scheduled is due
	// once it is visible, whatever Now says.
	Now time.Time
}

// CriticalResult is what a ReadCritical returns.
type CriticalResult struct {
	// Records are the rows that can be published at once, in Seq order.
	Records []Record
	// Candidates is the number of rows the read looked at (at most the
	// window: pending, due, time-critical rows of the partitions), when
	// Records is not empty; 0 when it is (no row carries it). More
	// candidates than Records means some wait behind an earlier row,
	// block or hold of their aggregate (or past Limit): a relay's read lane
	// publishes them.
	Candidates int
}

// Dialect is the set of operations jitoutbox needs from a database.
//
// Semantics every implementation must honour (tested by dialecttest):
//
//   - Insert writes all events with as few multi-row INSERT statements as the
//     database's bind-parameter limit allows (one for any realistic
//     transaction), in slice order, so that Seq follows registration order.
//     Each event's Partition is written as given (txoutbox computes it with
//     PartitionOf). A row is due (next_attempt_at) at the database's time
//     of the INSERT, whatever the writer's clock says; a scheduled event
//     (Event.Scheduled) stores its due time in deliver_at, the later of
//     NotBefore and the database's time of the INSERT plus Delay, and is due
//     then. For the scheduled events that are not Unordered (Event.Holds),
//     the same transaction writes their aggregates' holds (<table>_held,
//     one per aggregate: the lowest held seq and the latest due time; a
//     hold that already ended is replaced), with one more statement, only
//     when there are such events.
//   - Read is a plain SELECT (no lock, no write): pending rows of the given
//     partitions, due (NextAttemptAt <= Now), in Seq order, up to Limit,
//     leaving out every row of an aggregate with a block on an earlier row
//     (a dead row, or a retry not yet due) or a hold on an earlier row
//     (a scheduled row of the aggregate registered before it, and the hold
//     lasts until Now reaches the latest due time of the aggregate's held
//     scheduled rows). Ownership of the partitions is
//     the caller's: a Session proves it. A row with a column that cannot
//     be decoded is returned with Record.Bad set (RowError), never as an
//     error of the read; so do the Inspector's List, Get and Blockers.
//   - ReadCritical is a plain SELECT too: of the first Window pending, due,
//     time-critical rows of the given partitions in Seq order (a row never
//     tried and not scheduled is due as soon as it is committed, whatever
//     CriticalRequest.Now: a relay's clock lags the database's by up to a
//     round trip, and the read after a wake must see the row that sent
//     it), those whose
//     aggregate has no earlier pending row (in any state of due-ness) and
//     no block or hold on an earlier row (dead, a retry not yet due, a
//     scheduled row not yet due), in Seq order, up to Limit. Such a row
//     has the property a handed-over row has (InsertHandoff): nothing of
//     its aggregate may go before it.
//   - InsertHandoff never hands over a scheduled event, nor an event after
//     a held scheduled event of its aggregate in the same call.
//   - Mark and Fail change only rows of partitions that the given token owns
//     at the time of the statement (fencing): a relay that lost a partition
//     changes nothing in it.
//   - Due times are the database's: Now reads its clock, and relays pass
//     times on it (ReadRequest.Now, NextDue's now) by measuring their
//     offset to it. A row never tried and not scheduled needs no clock: it
//     was due at its INSERT, so Read and ReadCritical return it once it is
//     committed, however far the relay's measure lags.
type Dialect interface {
	// Name is the dialect's name: "postgres", "mysql" or "sqlite".
	Name() string
	// Table is the validated outbox table name.
	Table() string
	// Schema returns the DDL of the current schema version (every
	// migration, in order) as plain SQL text, statements separated by
	// ";\n", for users' own migration tools.
	Schema() string
	// Migrate applies the numbered migrations the database lacks, in order,
	// under a lock, recording each in the <table>_migrations table. A new
	// table gets the partition count configured on the dialect (default
	// DefaultPartitions).
	Migrate(ctx context.Context, db *sql.DB) error
	// Partitions reads the table's partition count. It fails with an error
	// wrapping ErrSchemaVersion when the schema is not at this version (run
	// Migrate), and ErrPartitionMismatch when the dialect was configured with
	// another count.
	Partitions(ctx context.Context, q Querier) (int, error)
	// MaxInsertRows is the most events one INSERT statement carries.
	MaxInsertRows() int

	// Insert writes events inside the caller's transaction.
	Insert(ctx context.Context, q Execer, events []Event) error
	// InsertHandoff writes events like Insert and returns, as records (Seq
	// set, Attempts 0, DeliverAt zero), in Seq order, those that may be
	// handed to the owner of their partition in memory after COMMIT: events
	// that are not scheduled, whose aggregate has no pending row and no
	// block visible to the transaction, and that follow no held scheduled
	// event of their aggregate in events. The others are left to the
	// owner's Read.
	InsertHandoff(ctx context.Context, q Querier, events []Event) ([]Record, error)

	// OpenSession starts a relay's ownership session (see Session). relay
	// names the relay in the relays table; lease is how long ownership
	// lasts without a Check on dialects that use leases. It is
	// OpenSessionOn on a Locker of the session's own, which the session's
	// Close closes: its locks have a connection to themselves.
	OpenSession(ctx context.Context, db *sql.DB, relay string, lease time.Duration) (Session, error)
	// OpenSessionOn starts a relay's ownership session for this table on
	// l: its member lock and partition locks are held by l's connection,
	// shared with the sessions of other tables of the same database (l's
	// DB), so that one connection holds the locks of any number of
	// tables. One session per table per Locker: a second fails with
	// ErrLockerTableInUse. Where it differs from a session of OpenSession:
	//
	//   - every statement that needs the lock connection runs through
	//     l.Do, which never holds the connection between calls;
	//   - Close releases this table's partitions, its member lock and its
	//     relay row only, and every lock of this table the connection still
	//     holds (one a failed statement left), never the locks of other
	//     tables; l stays open;
	//   - a statement error of the session makes the session lost
	//     (ErrSessionLost from then on), not l: l is lost only when its
	//     connection is (Locker.Do), and then every session on it is lost;
	//   - WaitChange waits on a watch connection of its own, opened on its
	//     first use: only the sessions that wait hold one.
	//
	// Lease dialects (SQLite) keep no lock on a connection: their sessions
	// use l's DB as OpenSession does and never l's connection, and end
	// (ErrSessionLost) once l is lost or closed.
	OpenSessionOn(ctx context.Context, l *Locker, relay string, lease time.Duration) (Session, error)
	// Read returns pending rows of owned partitions (see the rules above).
	Read(ctx context.Context, db *sql.DB, req ReadRequest) (ReadResult, error)
	// ReadCritical returns the time-critical rows of owned partitions that
	// no earlier row of their aggregate holds back (see the rules above),
	// so that a relay publishes them before a backlog it is draining. It
	// works on a table without the index later migrations add for it,
	// reading more.
	ReadCritical(ctx context.Context, db *sql.DB, req CriticalRequest) (CriticalResult, error)
	// Mark sets the published state (or deletes) the rows of m.Seqs in
	// partitions m.Token owns, removes the retry blocks of m.Unblock, and
	// returns how many rows it changed.
	Mark(ctx context.Context, db *sql.DB, m Mark) (int64, error)
	// Fail records failed attempts (attempts+1, last error, next attempt
	// time, dead when asked, blocks when asked) on rows of partitions token
	// owns.
	Fail(ctx context.Context, db *sql.DB, token string, failures []Failure) error
	// Requeue moves matching dead rows back to pending with attempts reset,
	// and removes their blocks: a requeued row is published before the
	// later rows of its aggregate that waited behind it.
	Requeue(ctx context.Context, db *sql.DB, f RequeueFilter, now time.Time) (int64, error)
	// Skip removes the blocks of matching dead rows (which stay dead), so
	// that the later rows of their aggregates flow. It returns the number
	// of blocks removed.
	Skip(ctx context.Context, db *sql.DB, f RequeueFilter) (int64, error)
	// Cleanup deletes up to limit published rows published before `before`.
	Cleanup(ctx context.Context, db *sql.DB, before time.Time, limit int) (int64, error)
	// TryLock takes or renews the named lease for owner until `until` and
	// reports whether owner holds it (used to run cleanup on one relay).
	TryLock(ctx context.Context, db *sql.DB, name, owner string, now, until time.Time) (bool, error)
	// Stats reads counts and the oldest pending time.
	Stats(ctx context.Context, db *sql.DB) (Stats, error)

	// Now reads the database's clock (UTC). Relays measure their offset to it:
	// due times are the database's.
	Now(ctx context.Context, q Querier) (time.Time, error)
	// NextDue returns the earliest distinct DeliverAt times after `after`
	// of the pending scheduled rows of the partitions, in order, at most
	// limit of them (none: an empty slice). One indexed statement whatever
	// the number of scheduled rows. A relay passes the time its last read
	// covered, so that a row that fell due since is found too, and keeps a
	// few times ahead so that a stream of due rows costs one look-up per
	// limit rows, not one per row.
	NextDue(ctx context.Context, db *sql.DB, parts []int, after time.Time, limit int) ([]time.Time, error)
	// Cancel deletes the rows with the given ids that are scheduled, pending,
	// never attempted and not yet due by the database's clock, and returns the
	// ids it deleted (others are left alone: unknown, already due, published,
	// dead, or never scheduled). The hold a cancelled row's aggregate has is
	// lifted when no other scheduled row of that aggregate remains not yet due.
	// q may be the caller's transaction.
	Cancel(ctx context.Context, q Querier, ids []string) ([]string, error)
	// ReleaseHolds deletes up to limit holds that ended before now and whose
	// aggregate has no pending row left (relays call it with cleanup).
	ReleaseHolds(ctx context.Context, db *sql.DB, now time.Time, limit int) (int64, error)

	// FindTables returns the outbox tables of the database whose names
	// match pattern, sorted, each as the dialect's WithTable option
	// accepts it (PostgreSQL "schema.table", MySQL "database.table",
	// SQLite "table"), with one statement on the catalog. A pattern is
	// "schema.table" on PostgreSQL and MySQL ("tenant_*.outbox",
	// "*.outbox", "app.outbox_*"; without a dot: the current schema or
	// database) and "table" on SQLite; '*' matches any run of characters
	// within one part, every other character only itself ('_' too). It
	// may use ASCII letters, digits, '_' and '*'; anything else fails
	// with an error wrapping ErrInvalidPattern. Names are compared as the
	// database resolves unquoted names: PostgreSQL folds the pattern to
	// lower case, SQLite ignores ASCII case, MySQL compares as written.
	// An outbox table is one that Migrate recorded (it has its
	// <table>_migrations table), whatever its version: the side tables
	// (<table>_partitions, <table>_held, ...) and other tables are never
	// returned, nor names WithTable would refuse.
	FindTables(ctx context.Context, q Querier, pattern string) ([]string, error)
	// Activity reads, for each of tables (names as WithTable accepts
	// them), when its next pending row is due (TableActivity.NextDue),
	// with one statement whatever the number of tables: a probe per table
	// through the index the relay's Read walks (claim_idx: the pending
	// rows), never the published rows. An idle table costs a look into an
	// empty index, a table with a backlog the look at its first due row,
	// and a table whose pending rows are none due (retries, scheduled
	// rows) a walk of them. The result has one entry per table, in order;
	// Activity's own error is only the context's. The statement is
	// rendered once per table list and cached; on a *sql.DB it is kept
	// prepared (one per database: the last list's), so that PostgreSQL
	// plans it once per connection, not at every call. When it fails (a
	// table dropped since the list was made), each table is read by a
	// statement of its own, so that only the tables that fail get an Err
	// and the others their NextDue; the tables that failed are read alone
	// on later calls until they succeed again. On PostgreSQL a failed
	// statement aborts a transaction: give q the *sql.DB, not a *sql.Tx.
	Activity(ctx context.Context, q Querier, tables []string) ([]TableActivity, error)

	// Inspector reads rows, blocked aggregates and ownership for operators.
	Inspector
}
