package dialects

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// ErrEventNotFound is returned (wrapped) by Inspector.Get when no row has the
// given event id.
var ErrEventNotFound = errors.New("dialects: event not found")

// Inspector is the operators' part of the Dialect contract (the outboxctl
// CLI and console, dashboards, outboxtest): it reads rows with their full
// delivery state. Every Dialect embeds it, so callers never look for it by
// type assertion.
//
// Inspector methods only read; they never take partitions or change rows.
type Inspector interface {
	// List returns up to f.Limit rows in state f.State, in Seq order,
	// starting after f.AfterSeq, optionally of one aggregate.
	List(ctx context.Context, db *sql.DB, f ListFilter) ([]Row, error)
	// Get returns the row of one event id, in any state, or an error
	// wrapping ErrEventNotFound.
	Get(ctx context.Context, db *sql.DB, id string) (Row, error)
	// Blockers returns up to limit aggregates held back at `now`: behind a
	// dead row (until an operator requeues or skips it) or behind a row
	// backing off after a failure. They are ordered by the Seq of the row
	// that blocks them (Blocker.Head). The cost is bounded by the number of
	// blocked aggregates, not by the table.
	Blockers(ctx context.Context, db *sql.DB, now time.Time, limit int) ([]Blocker, error)
	// Ownership reads the live relay sessions and every partition's owner,
	// without opening a session and without writing: liveness is the
	// owner's session lock on PostgreSQL and MariaDB/MySQL, and a lease
	// running at `now` on SQLite.
	Ownership(ctx context.Context, db *sql.DB, now time.Time) (Ownership, error)
	// PastRetention counts the published rows published before now minus
	// retention: the rows cleanup should already have deleted. It walks
	// the cleanup index and stops at PastRetentionCap + 1 rows (a result
	// above PastRetentionCap means "more than PastRetentionCap"), so its
	// cost is bounded by the cap, not by the rows kept. A retention <= 0
	// (cleanup disabled) returns 0 without a query.
	PastRetention(ctx context.Context, db *sql.DB, now time.Time, retention time.Duration) (int64, error)
	// ListSummaries is List without the payloads: each Row's Payload is
	// nil and PayloadSize holds its length. Pages that show no payload
	// use it, so a list of large rows costs its metadata, not its
	// payloads.
	ListSummaries(ctx context.Context, db *sql.DB, f ListFilter) ([]Row, error)
	// BlockerSummaries is Blockers without the head rows' payloads (Head.Payload
	// nil, Head.PayloadSize set).
	BlockerSummaries(ctx context.Context, db *sql.DB, now time.Time, limit int) ([]Blocker, error)
	// PendingMigrations returns the numbered migrations Migrate would
	// apply to db now, in order, without applying them and without
	// writing (not even the <table>_migrations table). Another Migrate
	// may apply them before the caller acts on the answer.
	PendingMigrations(ctx context.Context, db *sql.DB) ([]Migration, error)
}

// Migration is one numbered schema migration, as PendingMigrations
// returns it.
type Migration struct {
	// Version is the migration's number (1, 2, 3...).
	Version int
	// Name is the file's name without its number and extension
	// ("partitions" for 002_partitions.sql).
	Name string
	// SQL is the migration's SQL for this table, statements separated by
	// ";\n"; a Go step between statements is shown as a comment line
	// "-- step: <name> (Go)", and a migration this database needs nothing
	// of (an empty step, so that version N is the same schema on every
	// database) as one comment line "-- empty: ...".
	SQL string
}

// PastRetentionCap is the most rows Inspector.PastRetention counts one by
// one; it returns PastRetentionCap + 1 when more are past retention.
const PastRetentionCap = 10000

// ListFilter selects rows for Inspector.List.
type ListFilter struct {
	// State selects pending, published or dead rows.
	State State
	// AggregateType and AggregateID, when both set, restrict the list to one
	// aggregate. Setting only one of them is an error.
	AggregateType string
	AggregateID   string
	// AfterSeq returns rows with Seq > AfterSeq (pagination; 0 for the start).
	AfterSeq int64
	// Limit is the most rows returned (> 0).
	Limit int
}

// ErrInvalidListFilter is returned (wrapped) by List for a filter with a
// half-given aggregate, an unknown state or a non-positive limit.
var ErrInvalidListFilter = errors.New("dialects: invalid list filter")

// Validate checks f and returns an error wrapping ErrInvalidListFilter.
func (f ListFilter) Validate() error {
	switch {
	case f.State != StatePending && f.State != StatePublished && f.State != StateDead:
		return fmt.Errorf("%w: state must be pending, published or dead (got %d)", ErrInvalidListFilter, int(f.State))
	case (f.AggregateType == "") != (f.AggregateID == ""):
		return fmt.Errorf("%w: an aggregate needs both AggregateType and AggregateID", ErrInvalidListFilter)
	case f.Limit <= 0:
		return fmt.Errorf("%w: Limit must be positive (got %d)", ErrInvalidListFilter, f.Limit)
	}
	return nil
}

// Row is one outbox row with its full delivery state.
type Row struct {
	Record
	// State is pending, published or dead.
	State State
	// NextAttemptAt is when a pending row is due.
	NextAttemptAt time.Time
	// LastError is the last publish error; "" if none.
	LastError string
	// PublishedAt is when the row was published; zero unless published.
	PublishedAt time.Time
	// PayloadSize is the payload's length in bytes (also when Payload is
	// left out, as ListSummaries does).
	PayloadSize int
}

// String returns the state's name: "pending", "published", "dead".
func (s State) String() string {
	switch s {
	case StatePending:
		return "pending"
	case StatePublished:
		return "published"
	case StateDead:
		return "dead"
	}
	return "unknown"
}

// ParseState parses a state name as returned by State.String.
func ParseState(s string) (State, bool) {
	switch s {
	case "pending":
		return StatePending, true
	case "published":
		return StatePublished, true
	case "dead":
		return StateDead, true
	}
	return 0, false
}

// BlockReason says why an aggregate is listed by Inspector.Blockers.
type BlockReason string

// Block reasons, most severe first.
const (
	// BlockDead: a row of the aggregate is dead; later rows wait until an
	// operator requeues it (it is then published first) or skips it.
	BlockDead BlockReason = "dead"
	// BlockBackingOff: a row of the aggregate failed and waits for its next
	// attempt; later rows of the aggregate wait behind it.
	BlockBackingOff BlockReason = "backing-off"
)

// Blocker is one aggregate listed by Inspector.Blockers.
type Blocker struct {
	AggregateType string
	AggregateID   string
	// Reason is why the aggregate is held back.
	Reason BlockReason
	// Pending and Dead count the aggregate's rows in those states.
	Pending int64
	Dead    int64
	// Head is the row that blocks the aggregate.
	Head *Row
}
