package dialects

import (
	"context"
	"errors"
	"time"
)

// DefaultPartitions is the partition count of a table created by Migrate
// when the dialect is not given another.
const DefaultPartitions = 64

// MaxPartitions is the largest partition count a table may have.
const MaxPartitions = 4096

// ErrSchemaVersion is returned (wrapped) when the outbox table was created by
// an older version and Migrate has not been run since, or does not exist.
// Nothing is written.
var ErrSchemaVersion = errors.New("dialects: outbox schema is not at this version; run Migrate (or apply Schema())")

// ErrInvalidPartitions is returned (wrapped) by a dialect constructor given a
// partition count outside [1, MaxPartitions].
var ErrInvalidPartitions = errors.New("dialects: invalid partition count")

// ErrPartitionMismatch is returned (wrapped) when the dialect was configured
// with a partition count other than the table's. A table's count is fixed
// when it is created: every producer and relay must agree on it, or events
// of one aggregate would land in two partitions.
var ErrPartitionMismatch = errors.New("dialects: partition count differs from the table's")

// ErrSessionLost is returned (wrapped) by Session methods once the session
// can no longer prove ownership (its lock connection died, or its lease
// expired): the relay must stop publishing its partitions and open a new
// session.
var ErrSessionLost = errors.New("dialects: ownership session lost")

// PartitionOf returns the partition of an aggregate among n: the 32-bit
// FNV-1a hash of aggregateType, a zero byte and aggregateID, modulo n. It is
// stable across processes, versions and databases. n must be positive.
func PartitionOf(aggregateType, aggregateID string, n int) int {
	const offset, prime = 2166136261, 16777619
	h := uint32(offset)
	for i := 0; i < len(aggregateType); i++ {
		h ^= uint32(aggregateType[i])
		h *= prime
	}
	h *= prime // the zero separator: h ^= 0 is a no-op
	for i := 0; i < len(aggregateID); i++ {
		h ^= uint32(aggregateID[i])
		h *= prime
	}
	return int(h % uint32(n))
}

// Session is one relay's hold on partitions, opened by
// Dialect.OpenSession or Dialect.OpenSessionOn. A partition has at most one
// owning session at a time.
//
// Dialects with session-scoped locks (PostgreSQL, MariaDB/MySQL) hold a
// lock per owned partition on a Locker's connection (a dedicated one for a
// session of OpenSession, one shared by the sessions of many tables for
// OpenSessionOn), so ownership ends with the connection and an idle relay
// writes nothing; SQLite keeps a lease per partition that Check renews.
//
// Every take writes the session's Token as the partition's owner and bumps
// its epoch; Mark and Fail are fenced by the token. A Session is used by one
// goroutine at a time.
type Session interface {
	// Token is the fencing token written as owner of the partitions this
	// session takes; unique per session.
	Token() string
	// Take tries to take each of parts that no live session owns and
	// returns those it took (it may take none).
	Take(ctx context.Context, parts []int, now time.Time) ([]int, error)
	// Release gives up parts (taken by this session).
	Release(ctx context.Context, parts []int) error
	// Check proves the session still owns its partitions and returns them.
	// Lease dialects renew every lease and report until when ownership is
	// certain (past it the relay must stop publishing); lock dialects
	// return the zero time (certain while the connection lives). An error
	// wrapping ErrSessionLost means the session is over.
	Check(ctx context.Context, now time.Time) (owned []int, validUntil time.Time, err error)
	// View reads the live relays and each partition's owner.
	View(ctx context.Context, now time.Time) (View, error)
	// WaitChange blocks until a relay in v may have left (nil), the live
	// relays are no longer v's, a joiner among them (ErrRelaysChanged), or
	// ctx ends; a dialect that cannot tell returns ErrWaitUnsupported at
	// once. It may run on its own goroutine beside the other methods.
	WaitChange(ctx context.Context, v View) error
	// Nudge interrupts the WaitChange of the table's other relays (as a
	// session that opens does), so that they read ownership again: a relay
	// calls it after releasing partitions another relay is short of, which
	// otherwise stay free until that relay's next rebalance. Best effort:
	// a role that may not cancel the others' queries leaves them to their
	// next rebalance. Lease dialects, whose waits read the relays
	// periodically, return nil at once.
	Nudge(ctx context.Context) error
	// Close releases every partition and ends the session. A session of
	// OpenSessionOn releases only its own table's partitions and locks and
	// leaves its Locker open.
	Close() error
}

// ErrWaitUnsupported is returned by Session.WaitChange of a dialect that
// cannot wait for the relays to change; relays then rely on their periodic
// View.
var ErrWaitUnsupported = errors.New("dialects: session cannot wait for changes")

// ErrRelaysChanged is returned (wrapped) by Session.WaitChange when a relay
// joined while it waited: the caller reads the View again.
var ErrRelaysChanged = errors.New("dialects: relays changed")

// View is a snapshot of partition ownership.
type View struct {
	// Relays are the tokens of live sessions, sorted.
	Relays []string
	// Owners[p] is the token of partition p's live owner, "" when free.
	Owners []string
	// Epochs[p] counts the times partition p was taken.
	Epochs []int64
}
