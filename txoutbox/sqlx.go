package txoutbox

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jmoiron/sqlx"
)

// OutboxX is the sqlx flavour of Outbox: Beginx returns a *TxX offering the
// sqlx.Tx method set. It embeds *Outbox, so Begin works too.
type OutboxX struct {
	*Outbox
	dbx *sqlx.DB
}

// NewX returns an OutboxX over db; see New.
func NewX(db *sqlx.DB, dialect dialects.Dialect, opts ...Option) (*OutboxX, error) {
	if db == nil || db.DB == nil {
		return nil, fmt.Errorf("%w: nil *sqlx.DB", ErrInvalidOption)
	}
	ob, err := New(db.DB, dialect, opts...)
	if err != nil {
		return nil, err
	}
	return &OutboxX{Outbox: ob, dbx: db}, nil
}

// Beginx starts a transaction like (*sqlx.DB).BeginTxx that also captures
// events; see Outbox.Begin.
func (o *OutboxX) Beginx(ctx context.Context, opts *sql.TxOptions, txOpts ...TxOption) (*TxX, error) {
	x, err := o.dbx.BeginTxx(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("txoutbox: begin: %w", err)
	}
	return &TxX{Tx: o.wrap(ctx, x.Tx, o.db, txOpts), x: x}, nil
}

// TxX is the sqlx flavour of Tx: every Tx method (Add, Commit, Rollback,
// Exec, ...) plus the sqlx.Tx methods, all on the same transaction. The
// *sqlx.Tx itself is never exposed, so it cannot be committed without the
// events. The panicking helpers of sqlx.Tx (MustExec, MustExecContext) are
// deliberately left out: this package reports failures as errors, and a
// panic in the middle of a transaction leaves the clean-up to whatever
// deferred Rollback the caller may or may not have; use Exec/ExecContext and
// check the error.
//
// Tx.Context and the package-level Add work as for Tx (FromContext returns
// the embedded *Tx).
type TxX struct {
	*Tx
	x *sqlx.Tx
}

// DriverName is (*sqlx.Tx).DriverName.
func (t *TxX) DriverName() string { return t.x.DriverName() }

// Rebind is (*sqlx.Tx).Rebind.
func (t *TxX) Rebind(query string) string { return t.x.Rebind(query) }

// Unsafe returns a TxX on the same transaction whose sqlx methods silently
// ignore columns missing from the destination, like (*sqlx.Tx).Unsafe.
func (t *TxX) Unsafe() *TxX { return &TxX{Tx: t.Tx, x: t.x.Unsafe()} }

// BindNamed is (*sqlx.Tx).BindNamed.
func (t *TxX) BindNamed(query string, arg any) (string, []any, error) {
	return t.x.BindNamed(query, arg)
}

// NamedQuery is (*sqlx.Tx).NamedQuery.
func (t *TxX) NamedQuery(query string, arg any) (*sqlx.Rows, error) {
	return t.x.NamedQuery(query, arg)
}

// NamedExec is (*sqlx.Tx).NamedExec.
func (t *TxX) NamedExec(query string, arg any) (sql.Result, error) {
	return t.x.NamedExec(query, arg)
}

// NamedExecContext is (*sqlx.Tx).NamedExecContext.
func (t *TxX) NamedExecContext(ctx context.Context, query string, arg any) (sql.Result, error) {
	return t.x.NamedExecContext(ctx, query, arg)
}

// Select is (*sqlx.Tx).Select.
func (t *TxX) Select(dest any, query string, args ...any) error {
	return t.x.Select(dest, query, args...)
}

// SelectContext is (*sqlx.Tx).SelectContext.
func (t *TxX) SelectContext(ctx context.Context, dest any, query string, args ...any) error {
	return t.x.SelectContext(ctx, dest, query, args...)
}

// Get is (*sqlx.Tx).Get.
func (t *TxX) Get(dest any, query string, args ...any) error {
	return t.x.Get(dest, query, args...)
}

// GetContext is (*sqlx.Tx).GetContext.
func (t *TxX) GetContext(ctx context.Context, dest any, query string, args ...any) error {
	return t.x.GetContext(ctx, dest, query, args...)
}

// Queryx is (*sqlx.Tx).Queryx.
func (t *TxX) Queryx(query string, args ...any) (*sqlx.Rows, error) {
	return t.x.Queryx(query, args...)
}

// QueryxContext is (*sqlx.Tx).QueryxContext.
func (t *TxX) QueryxContext(ctx context.Context, query string, args ...any) (*sqlx.Rows, error) {
	return t.x.QueryxContext(ctx, query, args...)
}

// QueryRowx is (*sqlx.Tx).QueryRowx.
func (t *TxX) QueryRowx(query string, args ...any) *sqlx.Row {
	return t.x.QueryRowx(query, args...)
}

// QueryRowxContext is (*sqlx.Tx).QueryRowxContext.
func (t *TxX) QueryRowxContext(ctx context.Context, query string, args ...any) *sqlx.Row {
	return t.x.QueryRowxContext(ctx, query, args...)
}

// Preparex is (*sqlx.Tx).Preparex.
func (t *TxX) Preparex(query string) (*sqlx.Stmt, error) {
	return t.x.Preparex(query)
}

// PreparexContext is (*sqlx.Tx).PreparexContext.
func (t *TxX) PreparexContext(ctx context.Context, query string) (*sqlx.Stmt, error) {
	return t.x.PreparexContext(ctx, query)
}

// Stmtx is (*sqlx.Tx).Stmtx: stmt may be a *sql.Stmt, a sqlx.Stmt or a
// *sqlx.Stmt.
func (t *TxX) Stmtx(stmt any) *sqlx.Stmt {
	return t.x.Stmtx(stmt)
}

// StmtxContext is (*sqlx.Tx).StmtxContext.
func (t *TxX) StmtxContext(ctx context.Context, stmt any) *sqlx.Stmt {
	return t.x.StmtxContext(ctx, stmt)
}

// NamedStmt is (*sqlx.Tx).NamedStmt.
func (t *TxX) NamedStmt(stmt *sqlx.NamedStmt) *sqlx.NamedStmt {
	return t.x.NamedStmt(stmt)
}

// NamedStmtContext is (*sqlx.Tx).NamedStmtContext.
func (t *TxX) NamedStmtContext(ctx context.Context, stmt *sqlx.NamedStmt) *sqlx.NamedStmt {
	return t.x.NamedStmtContext(ctx, stmt)
}

// PrepareNamed is (*sqlx.Tx).PrepareNamed.
func (t *TxX) PrepareNamed(query string) (*sqlx.NamedStmt, error) {
	return t.x.PrepareNamed(query)
}

// PrepareNamedContext is (*sqlx.Tx).PrepareNamedContext.
func (t *TxX) PrepareNamedContext(ctx context.Context, query string) (*sqlx.NamedStmt, error) {
	return t.x.PrepareNamedContext(ctx, query)
}
