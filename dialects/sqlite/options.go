package sqlite

import (
	"fmt"
	"strings"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/dialects/internal/sqlkit"
)

type config struct {
	table string
}

// Option configures New.
type Option func(*config) error

// WithTable sets the outbox table name (default dialects.DefaultTable). The
// name must be a plain identifier; schema-qualified names are not supported
// on SQLite. The lock table is named <table>_locks.
func WithTable(name string) Option {
	return func(c *config) error {
		if err := sqlkit.ValidateTable(name); err != nil {
			return err
		}
		if strings.Contains(name, ".") {
			return fmt.Errorf("%w: %q: schema-qualified names are not supported on SQLite", dialects.ErrInvalidTable, name)
		}
		c.table = name
		return nil
	}
}
