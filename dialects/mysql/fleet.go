package mysql

import (
	"context"
	"strings"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/dialects/internal/sqlkit"
)

// FindTables returns the outbox tables whose "database.table" matches
// pattern (find_tables.sql), sorted; see dialects.Dialect. Names are
// compared byte for byte (MySQL's table names are case-sensitive on
// Linux).
func (d *Dialect) FindTables(ctx context.Context, q dialects.Querier, pattern string) ([]string, error) {
	p, err := sqlkit.ParsePattern(pattern, 2, false)
	if err != nil {
		return nil, err
	}
	return sqlkit.FindTables(ctx, q, d.findTables, p, "mysql", func(name string) bool { return validTable(name) == nil })
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
		Prefix: "mysql", Stmts: st, File: "activity.sql", Style: sqlkit.Question,
		Required: d.migrator.Required(), Valid: validTable,
		Missing: func(err error) bool {
			// 1146: no such table; 1054: unknown column; 1049: unknown
			// database; 1176: no such index (a hint's).
			msg := err.Error()
			for _, code := range []string{"Error 1146", "Error 1054", "Error 1049", "Error 1176"} {
				if strings.Contains(msg, code) {
					return true
				}
			}
			return false
		},
	}
}
