package dialects_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"go.uber.org/goleak"
	_ "modernc.org/sqlite" // "sqlite" driver

	"github.com/jitoutbox/jitoutbox/dialects"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeConnector is a driver whose connections run "ok", "fail" (a
// statement error on a live connection) and "die" (the connection breaks:
// it fails every later statement and ping).
type fakeConnector struct {
	mu    sync.Mutex
	conns []*fakeConn
}

func (c *fakeConnector) Connect(context.Context) (driver.Conn, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	fc := &fakeConn{}
	c.conns = append(c.conns, fc)
	return fc, nil
}

func (c *fakeConnector) Driver() driver.Driver { return fakeDriver{} }

// opened returns the connections opened so far.
func (c *fakeConnector) opened() []*fakeConn {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*fakeConn(nil), c.conns...)
}

type fakeDriver struct{}

func (fakeDriver) Open(string) (driver.Conn, error) {
	return nil, errors.New("fake: use the connector")
}

type fakeConn struct {
	dead, closed atomic.Bool
	execs        atomic.Int64
}

var errStatement = errors.New("fake: statement failed")

func (c *fakeConn) ExecContext(_ context.Context, query string, _ []driver.NamedValue) (driver.Result, error) {
	c.execs.Add(1)
	if c.dead.Load() {
		return nil, errors.New("fake: connection reset by peer")
	}
	switch query {
	case "fail":
		return nil, errStatement
	case "die":
		c.dead.Store(true)
		return nil, errors.New("fake: connection reset by peer")
	}
	return driver.RowsAffected(0), nil
}

func (c *fakeConn) Ping(context.Context) error {
	if c.dead.Load() {
		return errors.New("fake: broken pipe")
	}
	return nil
}

func (c *fakeConn) Prepare(string) (driver.Stmt, error) { return nil, errors.New("fake: no prepare") }
func (c *fakeConn) Begin() (driver.Tx, error)           { return nil, errors.New("fake: no transactions") }
func (c *fakeConn) Close() error                        { c.closed.Store(true); return nil }

// openFake returns a *sql.DB of a fakeConnector, closed on cleanup.
func openFake(t *testing.T) (*sql.DB, *fakeConnector) {
	t.Helper()
	c := &fakeConnector{}
	db := sql.OpenDB(c)
	t.Cleanup(func() { db.Close() })
	return db, c
}

func openLocker(t *testing.T, db *sql.DB) *dialects.Locker {
	t.Helper()
	l, err := dialects.OpenLocker(t.Context(), db)
	if err != nil {
		t.Fatalf("OpenLocker: %v", err)
	}
	t.Cleanup(func() { _ = l.Close() })
	return l
}

// exec runs query on the locker's connection and returns the connection
// it ran on.
func exec(t *testing.T, l *dialects.Locker, query string) (*sql.Conn, error) {
	t.Helper()
	var got *sql.Conn
	err := l.Do(t.Context(), func(c *sql.Conn) error {
		got = c
		_, err := c.ExecContext(t.Context(), query)
		return err
	})
	return got, err
}

// wantDoLost fails t unless a Do on l fails with ErrSessionLost without
// running its fn.
func wantDoLost(t *testing.T, what string, l *dialects.Locker) {
	t.Helper()
	ran := false
	if err := l.Do(t.Context(), func(*sql.Conn) error { ran = true; return nil }); !errors.Is(err, dialects.ErrSessionLost) || ran {
		t.Fatalf("Do %s: %v (fn ran: %v), want ErrSessionLost without running fn", what, err, ran)
	}
}

func TestOpenLockerNilDB(t *testing.T) {
	if _, err := dialects.OpenLocker(t.Context(), nil); err == nil {
		t.Fatal("OpenLocker(nil) returned no error")
	}
}

// TestLockerDoSerialises: many goroutines calling Do at once run their
// fns one at a time, every one on the same connection, which the locker
// takes at its first Do and keeps out of the pool.
func TestLockerDoSerialises(t *testing.T) {
	db, fc := openFake(t)
	l := openLocker(t, db)
	if n := db.Stats().InUse; n != 0 {
		t.Fatalf("OpenLocker holds %d connections before its first Do, want 0", n)
	}
	const workers, rounds = 8, 50
	var inside, most atomic.Int32
	var mu sync.Mutex
	conns := map[*sql.Conn]int{}
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for range rounds {
				err := l.Do(t.Context(), func(c *sql.Conn) error {
					n := inside.Add(1)
					defer inside.Add(-1)
					if n > most.Load() {
						most.Store(n)
					}
					runtime.Gosched() // let another fn in, were Do not serialising
					mu.Lock()
					conns[c]++
					mu.Unlock()
					_, err := c.ExecContext(t.Context(), "ok")
					return err
				})
				if err != nil {
					t.Errorf("Do: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	if m := most.Load(); m != 1 {
		t.Fatalf("%d fns ran at once, want 1", m)
	}
	if len(conns) != 1 {
		t.Fatalf("fns ran on %d connections, want 1", len(conns))
	}
	if n := db.Stats().InUse; n != 1 {
		t.Fatalf("the locker holds %d connections, want 1", n)
	}
	var execs int64
	for _, c := range fc.opened() {
		execs = max(execs, c.execs.Load())
	}
	if execs != workers*rounds {
		t.Fatalf("one driver connection ran %d statements, want all %d", execs, workers*rounds)
	}
}

// TestLockerStatementError: a statement that fails on a live connection
// is fn's error, as it is; the locker stays usable, on the same
// connection.
func TestLockerStatementError(t *testing.T) {
	db, _ := openFake(t)
	l := openLocker(t, db)
	first, err := exec(t, l, "fail")
	if !errors.Is(err, errStatement) || errors.Is(err, dialects.ErrSessionLost) {
		t.Fatalf("Do of a failing statement: %v, want the statement's error and not ErrSessionLost", err)
	}
	if l.Lost() {
		t.Fatal("Lost after a statement error on a live connection")
	}
	again, err := exec(t, l, "ok")
	if err != nil || again != first {
		t.Fatalf("Do after a statement error: %v (same connection: %v)", err, again == first)
	}
}

// TestLockerLostWhenConnectionDies: a failure whose connection does not
// answer the ping loses the locker for good: that Do's error wraps both
// ErrSessionLost and fn's error, later Dos fail without running fn, and
// the connection is closed, not returned to the pool.
func TestLockerLostWhenConnectionDies(t *testing.T) {
	db, fc := openFake(t)
	l := openLocker(t, db)
	if _, err := exec(t, l, "die"); !errors.Is(err, dialects.ErrSessionLost) {
		t.Fatalf("Do whose connection died: %v, want ErrSessionLost", err)
	}
	if !l.Lost() {
		t.Fatal("not Lost after its connection died")
	}
	wantDoLost(t, "on a lost locker", l)
	for i, c := range fc.opened() {
		if c.dead.Load() && !c.closed.Load() {
			t.Fatalf("connection %d died and was not closed", i)
		}
	}
	if s := db.Stats(); s.InUse != 0 || s.Idle != 0 {
		t.Fatalf("pool after the loss: %d in use, %d idle; want the dead connection gone", s.InUse, s.Idle)
	}
}

// TestLockerClose: Close waits for the fn running, then discards the
// connection (closed, not idle in the pool); every later Do fails with
// ErrSessionLost without running fn. Closing twice is harmless.
func TestLockerClose(t *testing.T) {
	db, fc := openFake(t)
	l := openLocker(t, db)
	inFn, release := make(chan struct{}), make(chan struct{})
	doErr := make(chan error, 1)
	go func() {
		doErr <- l.Do(t.Context(), func(c *sql.Conn) error {
			close(inFn)
			<-release
			// Close was called meanwhile: the connection is still ours.
			_, err := c.ExecContext(t.Context(), "ok")
			return err
		})
	}()
	<-inFn
	closed := make(chan error, 1)
	go func() { closed <- l.Close() }()
	for !l.Lost() { // Close marks the locker before it waits for the fn
		runtime.Gosched()
	}
	close(release)
	if err := <-doErr; err != nil {
		t.Fatalf("the Do running while Close was called: %v", err)
	}
	if err := <-closed; err != nil {
		t.Fatalf("Close: %v", err)
	}
	conns := fc.opened()
	if len(conns) != 1 || !conns[0].closed.Load() {
		t.Fatalf("%d connections opened; the locker's closed: %v", len(conns), len(conns) == 1 && conns[0].closed.Load())
	}
	if s := db.Stats(); s.InUse != 0 || s.Idle != 0 {
		t.Fatalf("pool after Close: %d in use, %d idle; want the locker's connection gone", s.InUse, s.Idle)
	}
	wantDoLost(t, "after Close", l)
	if err := l.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

// TestLockerDoContext: a Do waiting for its turn returns its context's
// error when that ends, without running fn.
func TestLockerDoContext(t *testing.T) {
	db, _ := openFake(t)
	l := openLocker(t, db)
	inFn, release := make(chan struct{}), make(chan struct{})
	first := make(chan error, 1)
	go func() {
		first <- l.Do(t.Context(), func(*sql.Conn) error { close(inFn); <-release; return nil })
	}()
	<-inFn
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	ran := false
	if err := l.Do(ctx, func(*sql.Conn) error { ran = true; return nil }); !errors.Is(err, context.Canceled) || ran {
		t.Fatalf("Do with its context ended while another ran: %v (fn ran: %v), want context.Canceled", err, ran)
	}
	close(release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if l.Lost() {
		t.Fatal("Lost after a Do gave up its turn")
	}
}

// TestLockerReserve: one reservation per key; release frees it, twice
// harmlessly.
func TestLockerReserve(t *testing.T) {
	db, _ := openFake(t)
	l := openLocker(t, db)
	ra, err := l.Reserve("a")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Reserve("a"); !errors.Is(err, dialects.ErrLockerTableInUse) {
		t.Fatalf("second Reserve of a: %v, want ErrLockerTableInUse", err)
	}
	if _, err := l.Reserve("b"); err != nil {
		t.Fatalf("Reserve of b beside a: %v", err)
	}
	ra()
	ra()
	if _, err := l.Reserve("a"); err != nil {
		t.Fatalf("Reserve of a after its release: %v", err)
	}
}

// TestLockerSQLite: on a real driver (SQLite), every Do runs on one
// connection, which the pool never lends: a temporary table (per
// connection) made in one Do is there in the next, and not on the pool's
// connections.
func TestLockerSQLite(t *testing.T) {
	db, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "locker.db")+"?_pragma=journal_mode(WAL)&_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	l := openLocker(t, db)
	if _, err := exec(t, l, "CREATE TEMP TABLE mine (x INTEGER)"); err != nil {
		t.Fatal(err)
	}
	if _, err := exec(t, l, "INSERT INTO mine VALUES (1)"); err != nil {
		t.Fatalf("the second Do does not see the first's temporary table: %v", err)
	}
	if _, err := db.ExecContext(t.Context(), "INSERT INTO mine VALUES (2)"); err == nil {
		t.Fatal("a connection of the pool sees the locker's temporary table")
	}
	// A failed statement leaves the locker on its connection.
	if _, err := exec(t, l, "INSERT INTO missing VALUES (1)"); err == nil || errors.Is(err, dialects.ErrSessionLost) {
		t.Fatalf("Do of a statement on a missing table: %v, want its error and not ErrSessionLost", err)
	}
	var n int
	err = l.Do(t.Context(), func(c *sql.Conn) error { return c.QueryRowContext(t.Context(), "SELECT count(*) FROM mine").Scan(&n) })
	if err != nil || n != 1 {
		t.Fatalf("after a failed statement: %d rows in the temporary table, %v; want 1", n, err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	wantDoLost(t, "after Close", l)
}
