package mysql

import (
	"fmt"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/dialects/internal/sqlkit"
)

// identLimit is the database's identifier limit: MySQL and MariaDB refuse identifiers longer than 64 characters.
const identLimit = 64

// MaxTableName is the longest table name (without its schema) WithTable
// accepts: 64 less the longest suffix of the names derived from it
// (<table>_idempotency_key_idx). A longer name fails with a
// *dialects.TableNameError. The GET_LOCK names of sessions and Migrate
// ("jitoutbox.<hash>.<suffix>") do not grow with the table name and stay
// well under GET_LOCK's own limit of 64 characters.
const MaxTableName = 64 - 20

type config struct {
	table      string
	partitions int
}

// Option configures New.
type Option func(*config) error

// WithTable sets the outbox table name (default dialects.DefaultTable). The
// name must be a plain identifier, optionally database-qualified
// ("app.outbox"), of at most MaxTableName characters. The other tables are named <table>_meta,
// <table>_partitions, <table>_relays, <table>_blocked, <table>_locks and
// <table>_migrations.
func WithTable(name string) Option {
	return func(c *config) error {
		if err := validTable(name); err != nil {
			return err
		}
		c.table = name
		return nil
	}
}

// validTable checks a table name as WithTable does.
func validTable(name string) error { return sqlkit.ValidateTableFor(name, "mysql", identLimit) }

// WithPartitions sets the partition count: the count Migrate gives a new
// table (default dialects.DefaultPartitions), and the count every producer
// and relay using this dialect requires of the table (Partitions then fails
// with dialects.ErrPartitionMismatch on a table created with another). n
// must be in [1, dialects.MaxPartitions]. Without it, a dialect accepts the
// table's count, whatever it is.
func WithPartitions(n int) Option {
	return func(c *config) error {
		if n < 1 || n > dialects.MaxPartitions {
			return fmt.Errorf("%w: WithPartitions(%d); use 1 to %d", dialects.ErrInvalidPartitions, n, dialects.MaxPartitions)
		}
		c.partitions = n
		return nil
	}
}
