package postgres

import (
	"fmt"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/dialects/internal/sqlkit"
)

// identLimit is the database's identifier limit: PostgreSQL cuts identifiers at 63 bytes.
const identLimit = 63

// MaxTableName is the longest table name (without its schema) WithTable
// accepts: 63 less the longest suffix of the names derived from it
// (<table>_idempotency_key_idx). A longer name fails with a
// *dialects.TableNameError.
const MaxTableName = 63 - 20

type config struct {
	table      string
	partitions int
}

// Option configures New.
type Option func(*config) error

// WithTable sets the outbox table name (default dialects.DefaultTable). The
// name must be a plain identifier, optionally schema-qualified ("app.outbox");
// it is used unquoted, so PostgreSQL folds it to lower case; its last part has
// at most MaxTableName characters. The lock table
// is named <table>_locks.
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
func validTable(name string) error { return sqlkit.ValidateTableFor(name, "postgres", identLimit) }

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
