package sqlkit

import (
	"context"
	"testing"

	"github.com/DATA-DOG/go-sqlmock"
)

// TestStmtCachePreparesOncePerDB: the claim is prepared once and reused;
// a call with another DB closes the old statements; Forget re-prepares.
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

	p1 := m1.ExpectPrepare(q)
	p1.ExpectQuery().WithArgs(1).WillReturnRows(sqlmock.NewRows([]string{"n"}).AddRow(1))
	p1.ExpectQuery().WithArgs(2).WillReturnRows(sqlmock.NewRows([]string{"n"}).AddRow(2))
	p1.WillBeClosed()
	m2.ExpectPrepare(q).WillBeClosed()
	m2.ExpectPrepare(q)

	var c StmtCache
	for i := 1; i <= 2; i++ {
		s, err := c.Stmt(ctx, db1, q)
		if err != nil {
			t.Fatal(err)
		}
		var n int
		if err := s.QueryRowContext(ctx, i).Scan(&n); err != nil || n != i {
			t.Fatalf("query %d: n=%d err=%v", i, n, err)
		}
	}
	if _, err := c.Stmt(ctx, db2, q); err != nil { // closes db1's statement
		t.Fatal(err)
	}
	c.Forget(q) // closes db2's first statement
	if _, err := c.Stmt(ctx, db2, q); err != nil {
		t.Fatal(err)
	}
	if err := m1.ExpectationsWereMet(); err != nil {
		t.Error(err)
	}
	if err := m2.ExpectationsWereMet(); err != nil {
		t.Error(err)
	}
}
