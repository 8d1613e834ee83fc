package sqlkit

import (
	"context"
	"database/sql"
	"time"

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

// QueryTimes runs q and returns the first column of its rows as times
// (NullTime's decoding; NULLs are left out).
func QueryTimes(ctx context.Context, r dialects.Querier, q *Query, args ...sql.NamedArg) ([]time.Time, error) {
	rows, err := QueryRows(ctx, r, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []time.Time
	for rows.Next() {
		var t NullTime
		if err := rows.Scan(&t); err != nil {
			return nil, err
		}
		if t.Valid {
			out = append(out, t.Time)
		}
	}
	return out, rows.Err()
}
