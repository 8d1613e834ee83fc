package sqlkit

import (
	"context"
	"database/sql"

	"github.com/jitoutbox/jitoutbox/dialects"
)

// Exec binds q's arguments by name and runs it on e.
func Exec(ctx context.Context, e dialects.Execer, q *Query, args ...sql.NamedArg) (sql.Result, error) {
	text, vals, err := q.Bind(args...)
	if err != nil {
		return nil, err
	}
	return e.ExecContext(ctx, text, vals...)
}

// QueryRows binds q's arguments by name and runs it on r.
func QueryRows(ctx context.Context, r dialects.Querier, q *Query, args ...sql.NamedArg) (*sql.Rows, error) {
	text, vals, err := q.Bind(args...)
	if err != nil {
		return nil, err
	}
	return r.QueryContext(ctx, text, vals...)
}

// Row is the result of QueryRow: a *sql.Row, or the error of binding.
type Row struct {
	row *sql.Row
	err error
}

// Scan scans the row as sql.Row.Scan does, or returns the error of
// binding.
func (r Row) Scan(dest ...any) error {
	if r.err != nil {
		return r.err
	}
	return r.row.Scan(dest...)
}

// QueryRow binds q's arguments by name and runs it on r, for one row.
func QueryRow(ctx context.Context, r dialects.Querier, q *Query, args ...sql.NamedArg) Row {
	text, vals, err := q.Bind(args...)
	if err != nil {
		return Row{err: err}
	}
	return Row{row: r.QueryRowContext(ctx, text, vals...)}
}
