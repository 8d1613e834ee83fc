// Package sqlcount wraps a database/sql driver and counts the statements and
// transaction commands sent through it, for tests and benchmarks that report
// "statements per commit" or "statements per second of an idle relay". Its
// hooks let fault-injection tests act just before a statement or a COMMIT
// reaches the server (for example, kill the connection).
package sqlcount

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"sync/atomic"
)

// Counter counts what goes through a wrapped connector.
type Counter struct {
	Statements atomic.Int64 // Exec and Query calls, prepared or not
	Begins     atomic.Int64
	Commits    atomic.Int64
	Rollbacks  atomic.Int64

	// BeforeStatement, when set, runs before each statement is sent.
	BeforeStatement func(query string)
	// BeforeCommit, when set, runs before each COMMIT is sent.
	BeforeCommit func()
	// AfterCommit, when set, runs after each COMMIT with its result.
	AfterCommit func(err error)
}

func (c *Counter) before(q string) {
	if c.BeforeStatement != nil {
		c.BeforeStatement(q)
	}
}

// Total returns statements plus transaction commands: the round trips a
// connection makes, not counting the extra ones a driver spends on preparing.
func (c *Counter) Total() int64 {
	return c.Statements.Load() + c.Begins.Load() + c.Commits.Load() + c.Rollbacks.Load()
}

// Open opens a *sql.DB whose connections come from driverName/dsn and are
// counted by c.
func Open(driverName, dsn string, c *Counter) (*sql.DB, error) {
	probe, err := sql.Open(driverName, dsn)
	if err != nil {
		return nil, err
	}
	drv := probe.Driver()
	_ = probe.Close()
	var inner driver.Connector
	if dc, ok := drv.(driver.DriverContext); ok {
		inner, err = dc.OpenConnector(dsn)
		if err != nil {
			return nil, err
		}
	} else {
		inner = dsnConnector{dsn: dsn, d: drv}
	}
	return sql.OpenDB(&connector{inner: inner, c: c}), nil
}

type dsnConnector struct {
	dsn string
	d   driver.Driver
}

func (d dsnConnector) Connect(context.Context) (driver.Conn, error) { return d.d.Open(d.dsn) }
func (d dsnConnector) Driver() driver.Driver                        { return d.d }

type connector struct {
	inner driver.Connector
	c     *Counter
}

func (k *connector) Connect(ctx context.Context) (driver.Conn, error) {
	cn, err := k.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &conn{Conn: cn, c: k.c}, nil
}

func (k *connector) Driver() driver.Driver { return k.inner.Driver() }

type conn struct {
	driver.Conn
	c *Counter
}

var errSkip = driver.ErrSkip

func (cn *conn) ExecContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Result, error) {
	e, ok := cn.Conn.(driver.ExecerContext)
	if !ok {
		return nil, errSkip
	}
	cn.c.before(q)
	r, err := e.ExecContext(ctx, q, args)
	if !errors.Is(err, driver.ErrSkip) {
		cn.c.Statements.Add(1)
	}
	return r, err
}

func (cn *conn) QueryContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Rows, error) {
	e, ok := cn.Conn.(driver.QueryerContext)
	if !ok {
		return nil, errSkip
	}
	cn.c.before(q)
	r, err := e.QueryContext(ctx, q, args)
	if !errors.Is(err, driver.ErrSkip) {
		cn.c.Statements.Add(1)
	}
	return r, err
}

func (cn *conn) PrepareContext(ctx context.Context, q string) (driver.Stmt, error) {
	var st driver.Stmt
	var err error
	if p, ok := cn.Conn.(driver.ConnPrepareContext); ok {
		st, err = p.PrepareContext(ctx, q)
	} else {
		st, err = cn.Conn.Prepare(q)
	}
	if err != nil {
		return nil, err
	}
	return &stmt{Stmt: st, c: cn.c, q: q}, nil
}

func (cn *conn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	var tx driver.Tx
	var err error
	if b, ok := cn.Conn.(driver.ConnBeginTx); ok {
		tx, err = b.BeginTx(ctx, opts)
	} else {
		tx, err = cn.Conn.Begin() //nolint:staticcheck // fallback for old drivers
	}
	if err != nil {
		return nil, err
	}
	cn.c.Begins.Add(1)
	return &txw{Tx: tx, c: cn.c}, nil
}

func (cn *conn) CheckNamedValue(nv *driver.NamedValue) error {
	if ch, ok := cn.Conn.(driver.NamedValueChecker); ok {
		return ch.CheckNamedValue(nv)
	}
	return driver.ErrSkip
}

func (cn *conn) ResetSession(ctx context.Context) error {
	if r, ok := cn.Conn.(driver.SessionResetter); ok {
		return r.ResetSession(ctx)
	}
	return nil
}

func (cn *conn) IsValid() bool {
	if v, ok := cn.Conn.(driver.Validator); ok {
		return v.IsValid()
	}
	return true
}

func (cn *conn) Ping(ctx context.Context) error {
	if p, ok := cn.Conn.(driver.Pinger); ok {
		return p.Ping(ctx)
	}
	return nil
}

type stmt struct {
	driver.Stmt
	c *Counter
	q string
}

func (s *stmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	s.c.Statements.Add(1)
	s.c.before(s.q)
	if e, ok := s.Stmt.(driver.StmtExecContext); ok {
		return e.ExecContext(ctx, args)
	}
	return nil, errors.New("sqlcount: driver statement lacks ExecContext")
}

func (s *stmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	s.c.Statements.Add(1)
	s.c.before(s.q)
	if q, ok := s.Stmt.(driver.StmtQueryContext); ok {
		return q.QueryContext(ctx, args)
	}
	return nil, errors.New("sqlcount: driver statement lacks QueryContext")
}

func (s *stmt) CheckNamedValue(nv *driver.NamedValue) error {
	if ch, ok := s.Stmt.(driver.NamedValueChecker); ok {
		return ch.CheckNamedValue(nv)
	}
	return driver.ErrSkip
}

type txw struct {
	driver.Tx
	c *Counter
}

func (t *txw) Commit() error {
	t.c.Commits.Add(1)
	if t.c.BeforeCommit != nil {
		t.c.BeforeCommit()
	}
	err := t.Tx.Commit()
	if t.c.AfterCommit != nil {
		t.c.AfterCommit(err)
	}
	return err
}
func (t *txw) Rollback() error { t.c.Rollbacks.Add(1); return t.Tx.Rollback() }
