package postgres

import (
	"github.com/jitoutbox/jitoutbox/dialects/internal/sqlkit"
)

type config struct {
	table string
}

// Option configures New.
type Option func(*config) error

// WithTable sets the outbox table name (default dialects.DefaultTable). The
// name must be a plain identifier, optionally schema-qualified ("app.outbox");
// it is used unquoted, so PostgreSQL folds it to lower case. The lock table
// is named <table>_locks.
func WithTable(name string) Option {
	return func(c *config) error {
		if err := sqlkit.ValidateTable(name); err != nil {
			return err
		}
		c.table = name
		return nil
	}
}
