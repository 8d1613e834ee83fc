// Package dialects defines the contract between jitoutbox and a database.
//
// A Dialect owns every SQL statement jitoutbox sends: the schema, the
// multi-row INSERT used by txoutbox on commit, and the claim, mark, retry,
// dead-letter, requeue and cleanup statements used by the relay. One package
// per database implements it (dialects/postgres, dialects/mysql,
// dialects/sqlite); each keeps its SQL in embedded .sql files and passes the
// shared conformance suite in dialects/dialecttest.
//
// Dialect is not meant to be implemented outside this module: methods may be
// added to it in minor releases. Dialects import no database driver; callers
// open the *sql.DB with the driver of their choice.
package dialects

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// DefaultTable is the outbox table name used when none is configured.
const DefaultTable = "outbox"

// ErrInvalidTable is returned (wrapped) by dialect constructors when the table
// name is not a plain identifier. The name is never interpolated into SQL.
var ErrInvalidTable = errors.New("jitoutbox: invalid table name")

// ErrInvalidRequeueFilter is returned (wrapped) by Requeue when the filter
// does not use exactly one way of selecting rows.
var ErrInvalidRequeueFilter = errors.New("jitoutbox: invalid requeue filter")

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
}

// State is the delivery state of a row.
type State int

// Row states as stored in the state column.
const (
	StatePending   State = 0
	StatePublished State = 1
	StateDead      State = 2
)

// LeasingInserter is an optional extension of Dialect for the just-in-time
// path without a claim (notify.Leaser): InsertLeased writes events like
// Insert, with one statement, and leases to owner, until leaseUntil, each
// event whose aggregate has no pending row visible to the transaction (so
// that no earlier event of the aggregate can be overtaken). It returns the
// leased events as records (Seq set, Attempts 0, CreatedAt as stored), in
// Seq order; the others are written unleased, for the relay's claim. A
// dialect may lease none (too many events for one statement).
type LeasingInserter interface {
	InsertLeased(ctx context.Context, q Querier, events []Event, owner string, leaseUntil time.Time) ([]Record, error)
}

// ClaimRequest asks a dialect to lease a batch of rows to one relay.
type ClaimRequest struct {
	// Owner identifies the relay instance taking the lease.
	Owner string
	// Limit is the maximum number of rows to claim (> 0).
	Limit int
	// Now is the relay's clock.
	Now time.Time
	// LeaseUntil is when the lease expires if the owner neither marks nor
	// releases the rows.
	LeaseUntil time.Time
	// IDs, when non-empty, restricts the claim to these event ids (the
	// committing process's fast path for its own just-committed events).
	IDs []string
	// Window, when > 0 (scan claims only), bounds the work of a speculative
	// claim: the dialect may examine only the first Window rows that are
	// due and not leased, in Seq order, and so return fewer than Limit rows,
	// or none, although claimable rows lie further on. The relay sets it
	// when it claims the next batch while its previous one is still leased
	// (whose aggregates the claim must hold back) and follows a short or
	// empty result with a claim without a window. Zero examines every row;
	// a dialect that ignores Window stays correct, only slower.
	Window int
}

// Failure records one failed publish.
type Failure struct {
	Seq int64
	// Error is the last error text (truncated by the dialect if needed).
	Error string
	// NextAttemptAt is when the row becomes claimable again.
	NextAttemptAt time.Time
	// Dead moves the row to StateDead.
	Dead bool
}

// RequeueFilter selects dead rows to move back to pending. Exactly one way of
// selecting must be used: IDs, an aggregate (type and id), or All.
type RequeueFilter struct {
	IDs           []string
	AggregateType string
	AggregateID   string
	All           bool
}

// Stats is a snapshot of the table.
type Stats struct {
	// Pending counts rows not yet published (including leased and backing off).
	Pending int64
	// Dead counts dead-lettered rows.
	Dead int64
	// Published counts published rows still in the table.
	Published int64
	// OldestPending is the CreatedAt of the oldest pending row; zero if none.
	OldestPending time.Time
}

// Dialect is the set of operations jitoutbox needs from a database.
//
// Semantics every implementation must honour (tested by dialecttest):
//
//   - Insert writes all events with as few multi-row INSERT statements as the
//     database's bind-parameter limit allows (one for any realistic
//     transaction), in slice order, so that Seq follows registration order.
//   - Claim leases pending rows whose NextAttemptAt <= Now and whose lease is
//     free or expired, in Seq order, up to Limit. A row is claimable only if no
//     earlier pending row of the same aggregate is leased (lease not expired)
//     or backing off (NextAttemptAt > Now); with IDs set, also only if every
//     earlier pending row of its aggregate is in IDs. Published and dead rows
//     never block. Concurrent claims from many relays in many processes never
//     lease one row twice and never let two relays hold events of one
//     aggregate at once (claims are serialised with a lock row).
//   - MarkPublished, Delete, Fail and Release touch only rows still leased by
//     Owner, and each is one statement per batch where the database allows it.
type Dialect interface {
	// Name is the dialect's name: "postgres", "mysql" or "sqlite".
	Name() string
	// Table is the validated outbox table name.
	Table() string
	// Schema returns the DDL (tables and indexes) as plain SQL text,
	// statements separated by ";\n", for users' own migration tools.
	Schema() string
	// Migrate applies Schema idempotently.
	Migrate(ctx context.Context, db *sql.DB) error
	// MaxInsertRows is the most events one INSERT statement carries.
	MaxInsertRows() int

	// Insert writes events inside the caller's transaction.
	Insert(ctx context.Context, q Execer, events []Event) error

	// Claim leases a batch of rows to req.Owner and returns them in Seq order:
	// due, unleased rows that no earlier pending row of their aggregate holds
	// back (leased or not yet due). It may return fewer than req.Limit rows
	// while more are claimable (a bounded first look); an empty result of a
	// scan claim without a Window means nothing is claimable now.
	Claim(ctx context.Context, db *sql.DB, req ClaimRequest) ([]Record, error)
	// MarkPublished sets the published state and time on seqs leased by owner.
	MarkPublished(ctx context.Context, db *sql.DB, owner string, seqs []int64, at time.Time) (int64, error)
	// Delete deletes seqs leased by owner (delete-on-publish mode).
	Delete(ctx context.Context, db *sql.DB, owner string, seqs []int64) (int64, error)
	// Fail records failed attempts (attempts+1, last error, next attempt time,
	// dead when asked) and releases the lease.
	Fail(ctx context.Context, db *sql.DB, owner string, failures []Failure) error
	// Release gives back leases without counting an attempt; the rows become
	// claimable at notBefore (use the zero time for at once).
	Release(ctx context.Context, db *sql.DB, owner string, seqs []int64, notBefore time.Time) error
	// Requeue moves matching dead rows back to pending with attempts reset.
	// Requeued rows rejoin their aggregate's order by Seq: a dead row that
	// is requeued while later rows of its aggregate are in flight may reach
	// the broker after them (the operator chose to resend it).
	Requeue(ctx context.Context, db *sql.DB, f RequeueFilter, now time.Time) (int64, error)
	// Cleanup deletes up to limit published rows published before `before`.
	Cleanup(ctx context.Context, db *sql.DB, before time.Time, limit int) (int64, error)
	// TryLock takes or renews the named lease for owner until `until` and
	// reports whether owner holds it (used to run cleanup on one relay).
	TryLock(ctx context.Context, db *sql.DB, name, owner string, now, until time.Time) (bool, error)
	// Stats reads counts and the oldest pending time.
	Stats(ctx context.Context, db *sql.DB) (Stats, error)
}
