package sqlcount

import (
	"context"
	"path/filepath"
	"testing"

	_ "modernc.org/sqlite"
)

func TestCounts(t *testing.T) {
	var c Counter
	db, err := Open("sqlite", "file:"+filepath.Join(t.TempDir(), "c.db"), &c)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, "CREATE TABLE t (x INTEGER)"); err != nil {
		t.Fatal(err)
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO t VALUES (?)", 1); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM t").Scan(&n); err != nil || n != 1 {
		t.Fatalf("n=%d err=%v", n, err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := c.Statements.Load(); got != 3 {
		t.Errorf("statements = %d, want 3", got)
	}
	if c.Begins.Load() != 1 || c.Commits.Load() != 1 || c.Rollbacks.Load() != 0 {
		t.Errorf("begins/commits/rollbacks = %d/%d/%d", c.Begins.Load(), c.Commits.Load(), c.Rollbacks.Load())
	}
	if c.Total() != 5 {
		t.Errorf("total = %d, want 5", c.Total())
	}
}
