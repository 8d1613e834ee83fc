package sqlite

import (
	"context"
	"strings"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/dialects/internal/sqlkit"
)

// FindTables returns the outbox tables of the file whose name matches
// pattern (find_tables.sql), sorted; see dialects.Dialect. A pattern has
// no schema part, and ASCII case is ignored as SQLite ignores it in names.
func (d *Dialect) FindTables(ctx context.Context, q dialects.Querier, pattern string) ([]string, error) {
	p, err := sqlkit.ParsePattern(pattern, 1, false)
	if err != nil {
		return nil, err
	}
	return sqlkit.FindTables(ctx, q, d.findTables, p, "sqlite", func(name string) bool { return validTable(name) == nil })
}

// Activity reads when the next pending row of each of tables is due, with
// one statement (activity.sql once per table, joined with UNION ALL), by
// the process's clock; see dialects.Dialect.
func (d *Dialect) Activity(ctx context.Context, q dialects.Querier, tables []string) ([]dialects.TableActivity, error) {
	return d.activity.Run(ctx, q, tables)
}

// newActivity returns the runner of Activity for st's statements.
func (d *Dialect) newActivity(st *sqlkit.Statements) *sqlkit.Activity {
	return &sqlkit.Activity{
		Prefix: "sqlite", Stmts: st, File: "activity.sql", Style: sqlkit.QuestionNumbered,
		Required: d.migrator.Required(), Valid: validTable,
		Now: func() any { return micros(clock()) },
		Missing: func(err error) bool {
			msg := err.Error()
			return strings.Contains(msg, "no such table") || strings.Contains(msg, "no such column") ||
				strings.Contains(msg, "no such index")
		},
	}
}
