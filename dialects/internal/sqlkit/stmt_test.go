package sqlkit

import (
	"context"
	"testing"

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
	if err := m2.ExpectationsWereMet(); err != nil {
		t.Error(err)
	}
}
