package migrate

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"time"
)

// The ways Migrate calls keep each other out, one per database: Run then
// reads the applied versions only once no other Migrate runs.

// RunInTx runs the migrations in one transaction on db, after lock (with
// args), a statement taking a lock that the transaction's end releases
// (pg_advisory_xact_lock): for a database whose DDL is transactional
// (PostgreSQL), so that a failed Migrate leaves nothing behind.
func (m *Migrator) RunInTx(ctx context.Context, db *sql.DB, lock string, args ...any) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("%s: migrate: begin: %w", m.Name, err)
	}
	defer tx.Rollback() //nolint:errcheck // no-op after Commit
	if _, err := tx.ExecContext(ctx, lock, args...); err != nil {
		return fmt.Errorf("%s: migrate: lock: %w", m.Name, err)
	}
	if err := m.Run(ctx, tx); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("%s: migrate: commit: %w", m.Name, err)
	}
	return nil
}

// RunImmediate runs the migrations in one BEGIN IMMEDIATE transaction on
// one connection (SQLite): the write lock is taken before the applied
// versions are read, so concurrent calls run one after the other (the
// later ones wait for the busy timeout) whatever the DSN's _txlock.
func (m *Migrator) RunImmediate(ctx context.Context, db *sql.DB) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("%s: migrate: %w", m.Name, err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		return fmt.Errorf("%s: migrate: begin: %w", m.Name, err)
	}
	if err := m.Run(ctx, conn); err != nil {
		rollback(conn)
		return err
	}
	if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
		rollback(conn)
		return fmt.Errorf("%s: migrate: commit: %w", m.Name, err)
	}
	return nil
}

// rollback ends the transaction RunImmediate began on conn; when that
// fails the connection is dropped instead of going back to the pool in
// the middle of a transaction.
func rollback(conn *sql.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
		discard(conn)
	}
}

// Stmt is a statement with its arguments, bound by position.
type Stmt struct {
	SQL  string
	Args []any
}

// RunNamedLock runs the migrations on conn while it holds a named lock
// (MySQL's GET_LOCK: its DDL commits statement by statement, so the lock
// lives on the connection, not in a transaction). lock takes the lock,
// waiting up to wait seconds, and returns 1 when taken; unlock frees it. A
// migration cut short is not recorded and runs again from its start, so
// its statements must be idempotent.
func (m *Migrator) RunNamedLock(ctx context.Context, conn *sql.Conn, lock, unlock Stmt, wait int) error {
	var got sql.NullInt64
	if err := conn.QueryRowContext(ctx, lock.SQL, lock.Args...).Scan(&got); err != nil {
		discard(conn) // the lock may have been granted before the error
		return fmt.Errorf("%s: migrate: lock: %w", m.Name, err)
	}
	if got.Int64 != 1 {
		return fmt.Errorf("%s: migrate: another Migrate held the lock for %d s", m.Name, wait)
	}
	defer func() {
		var ok sql.NullInt64
		if err := conn.QueryRowContext(context.WithoutCancel(ctx), unlock.SQL, unlock.Args...).Scan(&ok); err != nil {
			discard(conn)
		}
	}()
	return m.Run(ctx, conn)
}

// discard drops conn from the pool instead of returning it in an unknown
// state (a lock held, a transaction open).
func discard(conn *sql.Conn) { _ = conn.Raw(func(any) error { return driver.ErrBadConn }) }
