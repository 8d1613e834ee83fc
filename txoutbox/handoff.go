package txoutbox

import (
	"database/sql"

	"github.com/jitoutbox/jitoutbox/dialects"
)

// Relay is the relay running in the same process, as WithRelay takes it:
// *relay.Relay implements it. It is the whole contract between capture and
// relay: the Outbox asks which partitions the relay owns while flushing a
// time-critical transaction, and hands it the committed rows after COMMIT.
type Relay interface {
	// Owns reports whether the relay, running, publishes partition p now.
	Owns(p int) bool
	// Committed hands over a committed transaction; it never blocks.
	Committed(c Commit)
	// DB and Dialect are what the relay reads; New checks that they are the
	// Outbox's.
	DB() *sql.DB
	Dialect() dialects.Dialect
}

// Commit is what the Outbox hands to the relay in the same process after a
// successful COMMIT of a transaction that wrote events.
type Commit struct {
	// Critical reports a time-critical transaction: the relay publishes at
	// once. Otherwise the relay gets a lazy wake (its Config.LazyDelay).
	Critical bool
	// Records are committed rows of partitions the relay owned at the flush
	// that the dialect found free to hand over (Dialect.InsertHandoff: no
	// earlier event of their aggregate pending or blocked), in Seq order:
	// published without a read.
	Records []dialects.Record
	// Read asks for a read of the relay's partitions at once: rows of them
	// were committed that could not be handed over.
	Read bool
	// Scheduled reports scheduled events (Event.NotBefore, Event.Delay):
	// the relay looks up the next due time of its partitions, so that one
	// due before its timer is not left to its poll. (With WithoutLazyWake,
	// an ordinary transaction's scheduled events are found by the poll.)
	Scheduled bool
}
