package sqlite

import (
	"fmt"
	"strings"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/dialects/internal/sqlkit"
)

type config struct {
	table      string
	partitions int
}

// Option configures New.
type Option func(*config) error

// WithTable sets the outbox table name (default dialects.DefaultTable). The
// name must be a plain identifier; schema-qualified names are not supported
// on SQLite. The other tables are named <table>_meta, <table>_partitions,
// <table>_relays, <table>_blocked, <table>_locks and <table>_migrations.
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
func validTable(name string) error {
	if err := sqlkit.ValidateTable(name); err != nil {
		return err
	}
	if strings.Contains(name, ".") {
		return fmt.Errorf("%w: %q: schema-qualified names are not supported on SQLite", dialects.ErrInvalidTable, name)
	}
	return nil
}

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
