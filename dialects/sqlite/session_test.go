package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/dialects/internal/sqlkit"
	"github.com/jitoutbox/jitoutbox/dialects/sqlite"
	"github.com/jitoutbox/jitoutbox/internal/sqlcount"
)

// migrated opens a new database and migrates d's table in it.
func migrated(t *testing.T, opts ...sqlite.Option) (*sqlite.Dialect, *sql.DB) {
	t.Helper()
	d, err := sqlite.New(opts...)
	if err != nil {
		t.Fatal(err)
	}
	db := openSQLite(t)
	if err := d.Migrate(context.Background(), db); err != nil {
		t.Fatal(err)
	}
	return d, db
}

func openSession(t *testing.T, d *sqlite.Dialect, db *sql.DB, name string, lease time.Duration) dialects.Session {
	t.Helper()
	s, err := d.OpenSession(context.Background(), db, name, lease)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// TestLeaseExpiry checks that a session's partitions cannot be taken by
// another session while its lease runs, can be once it ran out, and that
// the first session then no longer owns or can mark them.
func TestLeaseExpiry(t *testing.T) {
	ctx := context.Background()
	d, db := migrated(t, sqlite.WithPartitions(4))
	const lease = 10 * time.Second
	a := openSession(t, d, db, "a", lease)
	b := openSession(t, d, db, "b", lease)
	t0 := time.Now()

	got, err := a.Take(ctx, []int{0, 1, 2}, t0)
	if err != nil || !slices.Equal(got, []int{0, 1, 2}) {
		t.Fatalf("a.Take = %v, %v", got, err)
	}
	if got, err := b.Take(ctx, []int{0, 1, 2, 3}, t0.Add(lease-time.Second)); err != nil || !slices.Equal(got, []int{3}) {
		t.Fatalf("b.Take before the lease ran out = %v, %v; want [3]", got, err)
	}
	owned, until, err := a.Check(ctx, t0.Add(time.Second))
	if err != nil || !slices.Equal(owned, []int{0, 1, 2}) || until.Sub(t0.Add(time.Second+lease)).Abs() > time.Millisecond {
		t.Fatalf("a.Check = %v, %v, %v", owned, until, err)
	}
	// The renewal moved the lease: still not takeable where it would have
	// been without it.
	if got, err := b.Take(ctx, []int{0}, t0.Add(lease)); err != nil || len(got) != 0 {
		t.Fatalf("b.Take after the renewal = %v, %v; want none", got, err)
	}
	if _, _, err := b.Check(ctx, t0.Add(lease-time.Second)); err != nil {
		t.Fatal(err)
	}
	v, err := b.View(ctx, t0.Add(lease))
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Relays) != 2 || v.Owners[0] != a.Token() || v.Owners[3] != b.Token() || v.Epochs[0] != 1 {
		t.Fatalf("view %+v", v)
	}

	// a stops renewing; past its lease b takes partition 0 with a new epoch.
	late := t0.Add(time.Second + lease)
	if got, err := b.Take(ctx, []int{0}, late); err != nil || !slices.Equal(got, []int{0}) {
		t.Fatalf("b.Take after the lease ran out = %v, %v; want [0]", got, err)
	}
	v, err = b.View(ctx, late)
	if err != nil {
		t.Fatal(err)
	}
	if v.Owners[0] != b.Token() || v.Epochs[0] != 2 || v.Owners[1] != "" {
		t.Fatalf("view after take-over %+v", v)
	}
	// a's next Check reports what it still owns, and that it is over.
	owned, _, err = a.Check(ctx, late)
	if !errors.Is(err, dialects.ErrSessionLost) || !slices.Equal(owned, []int{1, 2}) {
		t.Fatalf("a.Check after the take-over = %v, %v; want [1 2], ErrSessionLost", owned, err)
	}

	// a's marks in partition 0 are fenced off.
	ev := dialects.Event{ID: "e1", AggregateType: "t", AggregateID: "x", EventType: "x", CreatedAt: t0, Partition: 0}
	if err := d.Insert(ctx, db, []dialects.Event{ev}); err != nil {
		t.Fatal(err)
	}
	res, err := d.Read(ctx, db, dialects.ReadRequest{Partitions: []int{0}, Limit: 10, Now: late})
	recs := res.Records
	if err != nil || len(recs) != 1 {
		t.Fatalf("read = %v, %v", recs, err)
	}
	if n, err := d.Mark(ctx, db, dialects.Mark{Token: a.Token(), Seqs: []int64{recs[0].Seq}, At: late}); err != nil || n != 0 {
		t.Fatalf("mark by the old owner = %d, %v; want 0", n, err)
	}
	if n, err := d.Mark(ctx, db, dialects.Mark{Token: b.Token(), Seqs: []int64{recs[0].Seq}, Delete: true}); err != nil || n != 1 {
		t.Fatalf("mark by the new owner = %d, %v; want 1", n, err)
	}

	// Close frees at once.
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if got, err := b.Take(ctx, []int{1, 2}, late); err != nil || !slices.Equal(got, []int{1, 2}) {
		t.Fatalf("b.Take after a.Close = %v, %v", got, err)
	}
	if v, err := b.View(ctx, late); err != nil || !slices.Equal(v.Relays, []string{b.Token()}) {
		t.Fatalf("relays after a.Close = %v, %v", v.Relays, err)
	}
	if err := a.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

// TestSessionLost checks that a session owning partitions stays live when
// its relay row's lease ran out (it renews only its partitions' leases),
// that a session owning nothing registers its row again once it was
// forgotten, and that a session
// whose partitions another took over is lost and takes nothing more.
func TestSessionLost(t *testing.T) {
	ctx := context.Background()
	d, db := migrated(t, sqlite.WithPartitions(2))
	a := openSession(t, d, db, "a", time.Minute)
	b := openSession(t, d, db, "b", time.Minute)
	now := time.Now()
	if _, err := a.Take(ctx, []int{0, 1}, now); err != nil {
		t.Fatal(err)
	}
	old := now.Add(-2 * time.Minute).UnixMicro()
	if _, err := db.ExecContext(ctx, `UPDATE outbox_relays SET expires_at = ?`, old); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `DELETE FROM outbox_relays WHERE name = 'b'`); err != nil {
		t.Fatal(err)
	}
	owned, _, err := a.Check(ctx, now)
	if err != nil || !slices.Equal(owned, []int{0, 1}) {
		t.Fatalf("a.Check with its relay row's lease run out = %v, %v; want [0 1]", owned, err)
	}
	// b owns nothing: its Check registers it again, and views list both.
	if _, _, err := b.Check(ctx, now); err != nil {
		t.Fatalf("b.Check without its relay row: %v", err)
	}
	v, err := a.View(ctx, now)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{a.Token(), b.Token()}
	slices.Sort(want)
	if got := slices.Sorted(slices.Values(v.Relays)); !slices.Equal(got, want) {
		t.Fatalf("relays %v, want %v", got, want)
	}
	// Past a's lease, b takes partition 1: a is over.
	late := now.Add(2 * time.Minute)
	if got, err := b.Take(ctx, []int{1}, late); err != nil || !slices.Equal(got, []int{1}) {
		t.Fatalf("b.Take = %v, %v", got, err)
	}
	owned, _, err = a.Check(ctx, late)
	if !errors.Is(err, dialects.ErrSessionLost) || !slices.Equal(owned, []int{0}) {
		t.Fatalf("a.Check after the take-over = %v, %v; want [0], ErrSessionLost", owned, err)
	}
	if _, err := a.Take(ctx, []int{1}, late); !errors.Is(err, dialects.ErrSessionLost) {
		t.Fatalf("Take after loss = %v", err)
	}
}

// TestSessionUpkeep checks the cost of ownership: the Check of a session
// that owns partitions is one statement, and keeps the session listed as
// live after its relay row's own lease ran out.
func TestSessionUpkeep(t *testing.T) {
	ctx := context.Background()
	d, err := sqlite.New(sqlite.WithPartitions(4))
	if err != nil {
		t.Fatal(err)
	}
	var c sqlcount.Counter
	db, err := sqlcount.Open("sqlite", dsn(filepath.Join(t.TempDir(), "outbox.db")), &c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := d.Migrate(ctx, db); err != nil {
		t.Fatal(err)
	}
	const lease = 10 * time.Second
	a := openSession(t, d, db, "a", lease)
	t0 := time.Now()
	if _, err := a.Take(ctx, []int{0, 1, 2, 3}, t0); err != nil {
		t.Fatal(err)
	}
	at := t0
	for i := range 5 { // well past the relay row's lease
		at = at.Add(lease / 2)
		before := c.Total()
		owned, until, err := a.Check(ctx, at)
		if err != nil || len(owned) != 4 || !until.Equal(sqlkit.UTC(at).Add(lease)) {
			t.Fatalf("Check %d = %v, %v, %v", i, owned, until, err)
		}
		if n := c.Total() - before; n != 1 {
			t.Fatalf("Check %d of an owning session: %d statements, want 1", i, n)
		}
	}
	v, err := a.View(ctx, at)
	if err != nil || !slices.Equal(v.Relays, []string{a.Token()}) {
		t.Fatalf("view after the relay row's lease ran out: %v, %v", v.Relays, err)
	}
	o, err := d.Ownership(ctx, db, at)
	if err != nil || len(o.Relays) != 1 {
		t.Fatalf("Ownership after the relay row's lease ran out: %+v, %v", o.Relays, err)
	}
}

// TestSessionGCSparesOwners checks that a new session forgets relay rows
// whose lease ran out long ago, except those of sessions that still own
// partitions with a running lease.
func TestSessionGCSparesOwners(t *testing.T) {
	ctx := context.Background()
	d, db := migrated(t, sqlite.WithPartitions(2))
	owner := openSession(t, d, db, "owner", time.Hour)
	openSession(t, d, db, "idle", time.Hour)
	if _, err := owner.Take(ctx, []int{0, 1}, time.Now()); err != nil {
		t.Fatal(err)
	}
	// Both relay rows' leases ran out two minutes ago (past gcAge).
	old := time.Now().Add(-2 * time.Minute).UnixMicro()
	if _, err := db.ExecContext(ctx, `UPDATE outbox_relays SET expires_at = ?`, old); err != nil {
		t.Fatal(err)
	}
	openSession(t, d, db, "new", time.Hour) // runs the GC
	var names []string
	rows, err := db.QueryContext(ctx, `SELECT name FROM outbox_relays ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(names, []string{"new", "owner"}) {
		t.Fatalf("relay rows after GC: %v, want [new owner] (idle forgotten, owner spared)", names)
	}
}

func TestOpenSessionInvalidLease(t *testing.T) {
	d, db := migrated(t)
	for _, lease := range []time.Duration{0, -time.Second} {
		if _, err := d.OpenSession(context.Background(), db, "r", lease); !errors.Is(err, sqlite.ErrInvalidLease) {
			t.Errorf("lease %v: got %v, want ErrInvalidLease", lease, err)
		}
	}
}

func TestOpenSessionWithoutMigrate(t *testing.T) {
	d, err := sqlite.New()
	if err != nil {
		t.Fatal(err)
	}
	db := openSQLite(t)
	if _, err := d.OpenSession(context.Background(), db, "r", time.Second); !errors.Is(err, dialects.ErrSchemaVersion) {
		t.Fatalf("got %v, want ErrSchemaVersion", err)
	}
}

func TestPartitionCount(t *testing.T) {
	ctx := context.Background()
	for _, n := range []int{0, -1, dialects.MaxPartitions + 1} {
		if _, err := sqlite.New(sqlite.WithPartitions(n)); !errors.Is(err, dialects.ErrInvalidPartitions) {
			t.Errorf("WithPartitions(%d): got %v", n, err)
		}
	}
	d, db := migrated(t)
	if n, err := d.Partitions(ctx, db); err != nil || n != dialects.DefaultPartitions {
		t.Fatalf("Partitions = %d, %v", n, err)
	}
	var rows int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM outbox_partitions`).Scan(&rows); err != nil || rows != dialects.DefaultPartitions {
		t.Fatalf("partition rows = %d, %v", rows, err)
	}
	other, err := sqlite.New(sqlite.WithPartitions(8))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Partitions(ctx, db); !errors.Is(err, dialects.ErrPartitionMismatch) {
		t.Fatalf("mismatch: got %v", err)
	}
	// Migrate of a dialect with another count never changes the table's.
	if err := other.Migrate(ctx, db); !errors.Is(err, dialects.ErrPartitionMismatch) {
		t.Fatalf("Migrate with another count: got %v", err)
	}
}

// TestWaitChangeIdle checks the idle cost of WaitChange: a session alone
// waiting sends no statement while nobody writes, nor after its own
// renewal, and still sees a relay that joins from another pool (another
// process, as far as SQLite can tell) within a second or so.
func TestWaitChangeIdle(t *testing.T) {
	ctx := context.Background()
	d, err := sqlite.New(sqlite.WithPartitions(4))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "outbox.db")
	var c sqlcount.Counter
	db, err := sqlcount.Open("sqlite", dsn(path), &c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := d.Migrate(ctx, db); err != nil {
		t.Fatal(err)
	}
	a := openSession(t, d, db, "a", time.Minute)
	if _, err := a.Take(ctx, []int{0, 1, 2, 3}, time.Now()); err != nil {
		t.Fatal(err)
	}
	v, err := a.View(ctx, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- a.WaitChange(wctx, v) }()
	idle := func(what string) {
		t.Helper()
		before := c.Total()
		time.Sleep(2500 * time.Millisecond) // a window to count in: two looks of WaitChange
		if n := c.Total() - before; n != 0 {
			t.Fatalf("WaitChange %s: %d statements in 2.5s, want none", what, n)
		}
		select {
		case err := <-done:
			t.Fatalf("WaitChange returned %s: %v", what, err)
		default:
		}
	}
	idle("alone, nobody writing")
	if _, _, err := a.Check(ctx, time.Now()); err != nil {
		t.Fatal(err)
	}
	idle("after its own renewal")
	other, err := sql.Open("sqlite", dsn(path))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	openSession(t, d, other, "b", time.Minute)
	select {
	case err := <-done:
		if !errors.Is(err, dialects.ErrRelaysChanged) {
			t.Fatalf("WaitChange after b joined: %v, want ErrRelaysChanged", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("WaitChange did not see b join within 10s")
	}
}
