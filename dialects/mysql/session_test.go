package mysql_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/dialects/mysql"
)

// TestSessionLocks checks the GET_LOCK specifics: a partition locked by
// one session cannot be taken by another until its connection is gone,
// the fence follows the lock, and WaitChange wakes when the watched relay
// leaves.
func TestSessionLocks(t *testing.T) {
	db, _ := openMySQL(t, true)
	ctx := context.Background()
	d, err := mysql.New(mysql.WithPartitions(4))
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Migrate(ctx, db); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	s1, err := d.OpenSession(ctx, db, "r1", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	defer s1.Close()
	s2, err := d.OpenSession(ctx, db, "r2", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if got, err := s1.Take(ctx, []int{0, 1}, now); err != nil || !slices.Equal(got, []int{0, 1}) {
		t.Fatalf("s1 take = %v, %v", got, err)
	}
	if got, err := s1.Take(ctx, []int{1}, now); err != nil || len(got) != 0 {
		t.Fatalf("s1 take again = %v, %v; want none (a partition it holds)", got, err)
	}
	if got, err := s2.Take(ctx, []int{0, 1, 2, 3}, now); err != nil || !slices.Equal(got, []int{2, 3}) {
		t.Fatalf("s2 take = %v, %v; want [2 3]", got, err)
	}
	v, err := s2.View(ctx, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Relays) != 2 || v.Owners[0] != s1.Token() || v.Owners[3] != s2.Token() || v.Epochs[1] != 1 {
		t.Fatalf("view = %+v", v)
	}
	if owned, _, err := s1.Check(ctx, now); err != nil || !slices.Equal(owned, []int{0, 1}) {
		t.Fatalf("s1 check = %v, %v", owned, err)
	}
	// s2 watches s1 (the only other relay); s1 releases a partition, which
	// s2 can then take, then closes, which wakes s2.
	if err := s1.Release(ctx, []int{1}); err != nil {
		t.Fatal(err)
	}
	if got, err := s2.Take(ctx, []int{1}, now); err != nil || !slices.Equal(got, []int{1}) {
		t.Fatalf("s2 take released = %v, %v", got, err)
	}
	woke := make(chan error, 1)
	go func() { woke <- s2.WaitChange(ctx, v) }()
	select {
	case err := <-woke:
		t.Fatalf("WaitChange returned %v while s1 lives", err)
	case <-time.After(200 * time.Millisecond):
	}
	if err := s1.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-woke:
		if err != nil {
			t.Fatalf("WaitChange: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("WaitChange did not wake when s1 closed")
	}
	if got, err := s2.Take(ctx, []int{0}, now); err != nil || !slices.Equal(got, []int{0}) {
		t.Fatalf("s2 take after s1 closed = %v, %v", got, err)
	}
	cctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if err := s2.WaitChange(cctx, dialects.View{Relays: []string{s2.Token()}}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("WaitChange alone = %v", err)
	}
}

// TestUnlockTableCoversEveryPartition: session_unlock_table.sql, which
// reads no table, numbers the partitions from four base-8 digits: every
// partition a table may have must be among them.
func TestUnlockTableCoversEveryPartition(t *testing.T) {
	if dialects.MaxPartitions > 8*8*8*8 {
		t.Fatalf("MaxPartitions %d is past the 4096 partitions session_unlock_table.sql frees", dialects.MaxPartitions)
	}
}

// TestOwnershipStatementsLockOnlyTheirPartitions: taking, releasing and
// closing lock the rows of the partitions they change only. A relay's mark
// holds a shared lock on the rows of its partitions (mark.sql), taken in
// seq order; a statement that walked and locked every partition's row
// waited for it and deadlocked with it, and InnoDB rolled back one: the
// session (lost, every partition given up) or the mark.
func TestOwnershipStatementsLockOnlyTheirPartitions(t *testing.T) {
	db, _ := openMySQL(t, true)
	ctx := context.Background()
	d, err := mysql.New()
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Migrate(ctx, db); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	marker, err := d.OpenSession(ctx, db, "marker", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	defer marker.Close()
	if _, err := marker.Take(ctx, []int{0}, now); err != nil {
		t.Fatal(err)
	}
	// A mark of the marker's in flight: the shared lock on partition 0's row.
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback() //nolint:errcheck // read only
	var owner string
	if err := tx.QueryRowContext(ctx, "SELECT owner FROM "+d.Table()+"_partitions WHERE part = 0 LOCK IN SHARE MODE").Scan(&owner); err != nil {
		t.Fatal(err)
	}
	s, err := d.OpenSession(ctx, db, "other", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// Long lists: the optimizer walks the whole primary key for them
	// unless told not to.
	var parts []int
	for p := 1; p <= 32; p++ {
		parts = append(parts, p)
	}
	// Bounded well below innodb_lock_wait_timeout: a statement that waits
	// for the mark's lock fails here.
	bounded := func(what string, call func(context.Context) error) {
		t.Helper()
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		if err := call(cctx); err != nil {
			t.Fatalf("%s beside a mark in flight: %v", what, err)
		}
	}
	bounded("take", func(ctx context.Context) error {
		got, err := s.Take(ctx, parts, now)
		if err == nil && !slices.Equal(got, parts) {
			err = errors.New("took only some")
		}
		return err
	})
	bounded("release", func(ctx context.Context) error { return s.Release(ctx, parts[:16]) })
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// Close gives up after closeTimeout, a failure it does not report
	// (the locks end with the connection): the owners tell.
	var left int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+d.Table()+"_partitions WHERE owner = ?", s.Token()).Scan(&left); err != nil {
		t.Fatal(err)
	}
	if left != 0 {
		t.Errorf("close beside a mark in flight left %d partitions owned", left)
	}
}
