package inbox

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/jitoutbox/jitoutbox/internal/ident"
)

// Default values of Config's fields.
const (
	// DefaultTable is Config.Table's default.
	DefaultTable = "inbox"
	// DefaultRetention is Config.Retention's default.
	DefaultRetention = 7 * 24 * time.Hour
	// DefaultCleanupBatch is Config.CleanupBatch's default.
	DefaultCleanupBatch = 1000
)

// Config configures an Inbox. The zero value of every field but Dialect
// means its default.
type Config struct {
	// Dialect is the database: Postgres, MySQL (MariaDB too) or SQLite.
	// Required.
	Dialect Dialect

	// Table prefixes the inbox's tables: <Table>_processed (the processed
	// event ids), <Table>_aggregates (the last applied seq per aggregate,
	// for the order check) and <Table>_migrations. A plain identifier,
	// optionally schema-qualified ("app.inbox"). Give each consumer that
	// applies the same events to different state its own Table.
	//
	// Default: "inbox".
	Table string

	// Retention is how long a processed event id (and an aggregate's last
	// seq) is kept: Cleanup deletes older ones. A delivery of an event whose
	// id was deleted is applied again, so Retention must exceed the longest
	// time a redelivery can come after the first delivery: the broker's
	// redelivery horizon (JetStream MaxAge or a consumer reset, Kafka
	// retention when a group rewinds), plus a relay republish after a crash
	// (at most its lease plus retry backoff).
	//
	// Default: DefaultRetention (7 days).
	Retention time.Duration

	// CleanupBatch is the number of rows one DELETE of Cleanup removes, so
	// that no statement holds locks on more rows than this.
	//
	// Default: DefaultCleanupBatch (1000).
	CleanupBatch int

	// OnOutOfOrder, when set, turns on the per-aggregate order check: Handle
	// keeps the last applied seq (the Jitoutbox-Seq header, Message.Seq) of
	// each aggregate, and an event whose seq is lower than it is not applied
	// silently: OnOutOfOrder is called with the message and the last seq,
	// and its Decision says what Handle does. Messages without a seq (0) are
	// not checked. The check locks the aggregate's row until the
	// transaction ends, so events of one aggregate are applied one at a
	// time. It is called inside the transaction; it must not block long.
	//
	// Default: nil (no order check; the aggregates table stays empty).
	OnOutOfOrder func(ctx context.Context, msg Message, lastSeq int64) Decision

	// TxOptions are passed to BeginTx by Handle. The statements assume READ
	// COMMITTED (PostgreSQL's default) or REPEATABLE READ (MySQL's); under
	// SERIALIZABLE two concurrent deliveries of one event can end in a
	// serialization failure instead of a Duplicate.
	//
	// Default: nil (the driver's defaults).
	TxOptions *sql.TxOptions

	// Now returns the current time, recorded as processed_at and compared
	// with Retention by Cleanup; tests set it to move time.
	//
	// Default: time.Now.
	Now func() time.Time
}

// withDefaults returns c with the zero fields set to their defaults.
func (c Config) withDefaults() Config {
	if c.Table == "" {
		c.Table = DefaultTable
	}
	if c.Retention == 0 {
		c.Retention = DefaultRetention
	}
	if c.CleanupBatch == 0 {
		c.CleanupBatch = DefaultCleanupBatch
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// validate reports the first invalid field, with what to do about it.
func (c Config) validate() error {
	switch c.Dialect {
	case Postgres, MySQL, SQLite:
	case "":
		return fmt.Errorf("%w: Dialect is required: set inbox.Postgres, inbox.MySQL or inbox.SQLite", ErrInvalidConfig)
	default:
		return fmt.Errorf("%w: unknown Dialect %q: use inbox.Postgres, inbox.MySQL or inbox.SQLite", ErrInvalidConfig, c.Dialect)
	}
	if err := ident.Validate(c.Table); err != nil {
		return fmt.Errorf("%w: Table: %w", ErrInvalidConfig, err)
	}
	// The longest suffix, "_migrations", must fit the identifier limit.
	if name := c.Table[lastDot(c.Table)+1:]; len(name)+len("_aggregates_updated_idx") > ident.MaxLen {
		return fmt.Errorf("%w: Table %q is too long: its index names must fit %d bytes; use at most %d",
			ErrInvalidConfig, c.Table, ident.MaxLen, ident.MaxLen-len("_aggregates_updated_idx"))
	}
	if c.Retention < 0 {
		return fmt.Errorf("%w: Retention %v is negative: use 0 for the default (%v) or a positive window", ErrInvalidConfig, c.Retention, DefaultRetention)
	}
	if c.CleanupBatch < 0 {
		return fmt.Errorf("%w: CleanupBatch %d is negative: use 0 for the default (%d)", ErrInvalidConfig, c.CleanupBatch, DefaultCleanupBatch)
	}
	return nil
}

func lastDot(s string) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '.' {
			return i
		}
	}
	return -1
}
