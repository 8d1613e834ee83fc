package sqlkit

import (
	"context"
	"testing"
	"time"

	"github.com/DATA-DOG/go-sqlmock"
)

// TestStmtCachePreparesOncePerDB: the claim is prepared once per database
// and reused; using a second database closes nothing of the first; Forget
// re-prepares the statement of one database only.
func TestStmtCachePreparesOncePerDB(t *testing.T) {
	ctx := context.Background()
	const q = "SELECT claim($1)"
	db1, m1, err := sqlmock.New(sqlmock.QueryMatcherOption(sqlmock.QueryMatcherEqual))
	if err != nil {
		t.Fatal(err)
	}
	defer db1.Close()
	db2, m2, err := sqlmock.New(sqlmock.QueryMatcherOption(sqlmock.QueryMatcherEqual))
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()

	// db1: one Prepare for three queries interleaved with db2's, never closed.
	p1 := m1.ExpectPrepare(q)
	for i := 1; i <= 3; i++ {
		p1.ExpectQuery().WithArgs(i).WillReturnRows(sqlmock.NewRows([]string{"n"}).AddRow(i))
	}
	// db2: prepared, used, forgotten (closed), prepared again and used.
	p2 := m2.ExpectPrepare(q)
	p2.ExpectQuery().WithArgs(10).WillReturnRows(sqlmock.NewRows([]string{"n"}).AddRow(10))
	p2.WillBeClosed()
	m2.ExpectPrepare(q).ExpectQuery().WithArgs(11).WillReturnRows(sqlmock.NewRows([]string{"n"}).AddRow(11))

	var c StmtCache
	query := func(db any, arg int) {
		t.Helper()
		d := db1
		if db == 2 {
			d = db2
		}
		s, err := c.Stmt(ctx, d, q)
		if err != nil {
			t.Fatal(err)
		}
		var n int
		if err := s.QueryRowContext(ctx, arg).Scan(&n); err != nil || n != arg {
			t.Fatalf("query %d: n=%d err=%v", arg, n, err)
		}
	}
	query(1, 1)
	query(2, 10) // prepares on db2, closes nothing of db1
	query(1, 2)
	c.Forget(db2, q) // closes db2's statement only
	query(1, 3)
	query(2, 11)
	if err := m1.ExpectationsWereMet(); err != nil {
		t.Error(err)
	}
	c.closing.Wait() // Forget closes on a goroutine of its own
	if err := m2.ExpectationsWereMet(); err != nil {
		t.Error(err)
	}
}

// TestStmtCacheForgetsBesideABusyConnection: Forget returns at once while a
// connection the statement was prepared on runs a long statement (taken
// from the pool by a session's WaitChange, say): closing the statement
// waits for that connection, and must not make the caller (a fleet's poll,
// a relay's mark) wait with it.
func TestStmtCacheForgetsBesideABusyConnection(t *testing.T) {
	ctx := context.Background()
	const q = "SELECT claim($1)"
	db, m, err := sqlmock.New(sqlmock.QueryMatcherOption(sqlmock.QueryMatcherEqual))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1) // the statement is prepared on the connection that then waits
	m.MatchExpectationsInOrder(false)
	m.ExpectPrepare(q).WillBeClosed()
	m.ExpectQuery("SELECT wait()").WillDelayFor(time.Minute).WillReturnRows(sqlmock.NewRows([]string{"n"}).AddRow(1))

	var c StmtCache
	if _, err := c.Stmt(ctx, db, q); err != nil {
		t.Fatal(err)
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithCancel(ctx)
	waited := make(chan struct{})
	go func() {
		defer close(waited)
		var n int
		_ = conn.QueryRowContext(wctx, "SELECT wait()").Scan(&n)
	}()
	defer func() {
		cancel()
		<-waited
		conn.Close()
		c.closing.Wait()
		if err := m.ExpectationsWereMet(); err != nil {
			t.Error(err)
		}
	}()
	time.Sleep(50 * time.Millisecond) // the wait holds the connection

	forgot := make(chan struct{})
	go func() {
		defer close(forgot)
		c.Forget(db, q)
	}()
	select {
	case <-forgot:
	case <-time.After(10 * time.Second):
		t.Error("Forget waited for the busy connection")
		cancel()
		<-forgot
	}
}

// TestStmtOrPrepareNeverWaitsForTheHeldConnection: with the pool's only
// connection held (by a transaction, say), StmtOrPrepare returns nil at
// once and prepares once the connection is free; later calls, and a
// concurrent one meanwhile, get that one statement.
func TestStmtOrPrepareNeverWaitsForTheHeldConnection(t *testing.T) {
	ctx := context.Background()
	const q = "SELECT handoff(?)"
	db, m, err := sqlmock.New(sqlmock.QueryMatcherOption(sqlmock.QueryMatcherEqual))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	m.ExpectBegin()
	m.ExpectRollback()
	m.ExpectPrepare(q)

	var c StmtCache
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s := c.StmtOrPrepare(db, q); s != nil {
		t.Fatal("a statement before any was prepared")
	}
	if s := c.StmtOrPrepare(db, q); s != nil {
		t.Fatal("a statement while the connection is held")
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	c.Wait()
	s := c.StmtOrPrepare(db, q)
	if s == nil {
		t.Fatal("no statement once the connection was free")
	}
	if again, err := c.Stmt(ctx, db, q); err != nil || again != s {
		t.Fatalf("Stmt after StmtOrPrepare = %p, %v; want %p", again, err, s)
	}
	if err := m.ExpectationsWereMet(); err != nil {
		t.Error(err)
	}
}
