package postgres

import (
	"context"
	"strings"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/dialects/internal/sqlkit"
)

// FindTables returns the outbox tables whose "schema.table" matches pattern
// (find_tables.sql), sorted; see dialects.Dialect. The pattern is folded to
// lower case, as PostgreSQL folds unquoted names; a table whose name has an
// upper-case letter (made with a quoted name, so not by WithTable) is left
// out.
func (d *Dialect) FindTables(ctx context.Context, q dialects.Querier, pattern string) ([]string, error) {
	p, err := sqlkit.ParsePattern(pattern, 2, true)
	if err != nil {
		return nil, err
	}
	return sqlkit.FindTables(ctx, q, d.findTables, p, "postgres", func(name string) bool {
		return validTable(name) == nil && name == strings.ToLower(name)
	})
}

// Activity reads when the next pending row of each of tables is due, with
// one statement (activity.sql once per table, joined with UNION ALL); see
// dialects.Dialect.
func (d *Dialect) Activity(ctx context.Context, q dialects.Querier, tables []string) ([]dialects.TableActivity, error) {
	return d.activity.Run(ctx, q, tables)
}

// newActivity returns the runner of Activity for st's statements.
func (d *Dialect) newActivity(st *sqlkit.Statements) *sqlkit.Activity {
	return &sqlkit.Activity{
		Prefix: "postgres", Stmts: st, File: "activity.sql", Style: sqlkit.Dollar,
		Required: d.migrator.Required(), Valid: validTable,
		Missing: func(err error) bool {
			// undefined_table, undefined_column, invalid_schema_name
			switch sqlkit.SQLState(err) {
			case "42P01", "42703", "3F000":
				return true
			}
			return false
		},
	}
}
