package mysql

import (
	"context"
	"database/sql"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/dialects/internal/sqlkit"
)

// maxPreparedRows bounds the row (or aggregate) count of the insert
// statements run prepared on a dialects.PooledTx: each count is a statement
// text of its own, prepared on every connection of the pool that runs it,
// and the server limits prepared statements (max_prepared_stmt_count).
// Time-critical transactions, whose cost per event this is for, usually
// write one event or a few.
const maxPreparedRows = 4

// txStmt returns query prepared for the caller's transaction q, or nil to
// run it on q. go-sql-driver/mysql runs a statement with arguments as a
// prepare, an execute and a close (two round trips, three packets) unless
// the DSN asks it to interpolate; on a dialects.PooledTx, a statement of at
// most maxPreparedRows rows runs through the dialect's statement prepared
// on the pool, which each connection prepares once: one round trip. The
// pool's statement is prepared in the background (the transaction holds a
// connection of the pool already): until it is, q runs the statement.
func (d *Dialect) txStmt(ctx context.Context, q dialects.Execer, rows int, query string) *sql.Stmt {
	ptx, ok := q.(dialects.PooledTx)
	if !ok || rows > maxPreparedRows {
		return nil
	}
	s := d.stmts.StmtOrPrepare(ptx.DB, query)
	if s == nil {
		return nil
	}
	// The transaction's statement is closed with the transaction; the
	// connection keeps its prepared statement for the next one.
	return ptx.Tx.StmtContext(ctx, s)
}

// execIn runs query, a statement of rows rows, in the caller's transaction
// q (see txStmt).
func (d *Dialect) execIn(ctx context.Context, q dialects.Execer, rows int, query string, args ...any) (sql.Result, error) {
	s := d.txStmt(ctx, q, rows, query)
	if s == nil {
		return q.ExecContext(ctx, query, args...)
	}
	return s.ExecContext(ctx, args...)
}

// queryIn runs query, a statement of rows rows (or aggregates), in the
// caller's transaction q (see txStmt).
func (d *Dialect) queryIn(ctx context.Context, q dialects.Querier, rows int, query string, args ...any) (*sql.Rows, error) {
	s := d.txStmt(ctx, q, rows, query)
	if s == nil {
		return q.QueryContext(ctx, query, args...)
	}
	return s.QueryContext(ctx, args...)
}

// queryNamed binds query with args and runs it, a statement of rows rows
// (or aggregates), in the caller's transaction q: sqlkit.QueryRows, run
// prepared on a dialects.PooledTx (see txStmt).
func (d *Dialect) queryNamed(ctx context.Context, q dialects.Querier, rows int, query *sqlkit.Query, args ...sql.NamedArg) (*sql.Rows, error) {
	text, vals, err := query.Bind(args...)
	if err != nil {
		return nil, err
	}
	return d.queryIn(ctx, q, rows, text, vals...)
}
