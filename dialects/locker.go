package dialects

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"sync"
	"time"
)

// ErrLockerTableInUse is returned (wrapped) by Dialect.OpenSessionOn when
// a session of the same table is already open on the Locker: session
// locks are re-entrant on one connection, so two sessions of one table on
// one Locker would not exclude each other.
var ErrLockerTableInUse = errors.New("dialects: a session of this table is already open on the locker")

// lockerPingTimeout bounds the round trip by which Locker.Do tells a
// failed statement from a dead connection.
const lockerPingTimeout = 5 * time.Second

// Locker is one database connection that holds the ownership locks of
// the sessions of many outbox tables of one database (Dialect.OpenSessionOn):
// PostgreSQL advisory locks and MariaDB/MySQL GET_LOCK locks belong to a
// connection, so a relay serving 500 tables of one database holds one
// connection for their locks instead of 500. Dialect.OpenSession opens a
// Locker of its own for its session.
//
// The connection is taken from the *sql.DB by the first Do (a SQLite
// session, whose ownership is a lease, never calls Do: a Locker of a
// SQLite database holds no connection) and kept until Close or until it
// dies; it is never returned to the pool, nor replaced: every lock on it
// ends with it, and a new Locker must be opened.
//
// A Locker is safe for concurrent use: each session of it may be used by
// its own goroutine, and Do runs their statements one at a time.
type Locker struct {
	db *sql.DB
	// turn is held by the Do running (a channel of one, so that a Do
	// waiting for its turn can give up when its context ends).
	turn chan struct{}
	// conn is the lock connection, nil until the first Do; only the
	// holder of turn uses or changes it.
	conn *sql.Conn

	mu     sync.Mutex // guards what follows: Lost and Close do not wait for a turn
	lost   bool       // the connection died (or was discarded)
	closed bool       // Close was called
	tables map[string]bool
}

// OpenLocker returns a Locker on db, after checking that db answers (a
// ping). It takes no connection yet: the first Do does.
func OpenLocker(ctx context.Context, db *sql.DB) (*Locker, error) {
	if db == nil {
		return nil, errors.New("dialects: open locker: nil *sql.DB")
	}
	if err := db.PingContext(ctx); err != nil {
		return nil, fmt.Errorf("dialects: open locker: %w", err)
	}
	return &Locker{db: db, turn: make(chan struct{}, 1), tables: map[string]bool{}}, nil
}

// DB returns the *sql.DB the locker takes its connection from: a
// session on the locker runs its other statements (WaitChange's watch
// connection) there.
func (l *Locker) DB() *sql.DB { return l.db }

// Do runs fn on the locker's connection, taking it from the pool on the
// first call. Calls run one at a time, in no set order: a Do waits for the
// one running, or returns ctx's error without running fn if ctx ends
// first. fn must not keep the connection, nor anything open on it (rows,
// a transaction), after it returns, nor call Do or Close of l.
//
// Once the locker is lost or closed, Do returns an error wrapping
// ErrSessionLost without running fn. When fn returns an error, Do tells a
// failed statement from a dead connection by a ping on the connection
// (bounded by 5 seconds, whatever ctx): if it fails, the locker
// is lost for good, its connection discarded (every lock on it ends), and
// Do returns fn's error wrapped with ErrSessionLost; if it answers, the
// locker stays usable and Do returns fn's error as it is (a dropped table,
// a statement cancelled by its context on a driver that keeps the
// connection). A driver that closes the connection when a statement's
// context ends (pgx) thus loses the locker when ctx ends during fn.
//
// Taking the connection from the pool may fail (the database is down):
// Do then returns that error without running fn, and the locker is not
// lost (it holds no lock yet); the next Do tries again.
func (l *Locker) Do(ctx context.Context, fn func(*sql.Conn) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case l.turn <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-l.turn }()
	if err := l.over(); err != nil {
		return err
	}
	if l.conn == nil {
		c, err := l.db.Conn(ctx)
		if err != nil {
			return fmt.Errorf("dialects: locker: take a connection: %w", err)
		}
		l.conn = c
	}
	err := fn(l.conn)
	if err == nil {
		return nil
	}
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), lockerPingTimeout)
	perr := l.conn.PingContext(pctx)
	cancel()
	if perr == nil {
		return err
	}
	l.mu.Lock()
	l.lost = true
	l.mu.Unlock()
	discard(l.conn)
	l.conn = nil
	return fmt.Errorf("dialects: locker lost (ping: %v): %w: %w", perr, ErrSessionLost, err)
}

// over returns an error wrapping ErrSessionLost once the locker is lost or
// closed.
func (l *Locker) over() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.closed:
		return fmt.Errorf("dialects: locker closed: %w", ErrSessionLost)
	case l.lost:
		return fmt.Errorf("dialects: locker lost: %w", ErrSessionLost)
	}
	return nil
}

// Lost reports whether the locker is over: its connection died (as Do
// found) or Close was called. Every later Do, and every call of a session
// on it, then fails with ErrSessionLost.
func (l *Locker) Lost() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lost || l.closed
}

// Reserve records that the session of table (a dialect's key naming one
// table's locks, unique across dialects) is open on the locker until
// release is called. It fails with ErrLockerTableInUse when one already
// is. Dialects call it in OpenSessionOn; release may be called more than
// once.
func (l *Locker) Reserve(table string) (release func(), err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.tables[table] {
		return nil, fmt.Errorf("%w (%s)", ErrLockerTableInUse, table)
	}
	l.tables[table] = true
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			delete(l.tables, table)
			l.mu.Unlock()
		})
	}, nil
}

// Close ends the locker: it waits for the Do running, if any, then
// discards the connection for good instead of returning it to the pool,
// so that every lock on it ends, those of every session on it. Sessions
// on it are lost (their calls fail with ErrSessionLost); close them to
// forget them. Closing twice is harmless.
func (l *Locker) Close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	l.mu.Unlock()
	l.turn <- struct{}{}
	defer func() { <-l.turn }()
	if l.conn != nil {
		discard(l.conn)
		l.conn = nil
	}
	return nil
}

// discard closes conn for good instead of returning it to the pool, so
// that every session lock it holds dies with it.
func discard(conn *sql.Conn) {
	_ = conn.Raw(func(any) error { return driver.ErrBadConn })
	_ = conn.Close()
}
