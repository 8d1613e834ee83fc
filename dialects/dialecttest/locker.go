package dialecttest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
)

// sideTables are the suffixes of the tables Migrate makes beside the
// outbox table.
var sideTables = []string{"_partitions", "_relays", "_meta", "_blocked", "_held", "_locks", "_migrations"}

// setupTables migrates n outbox tables in one fresh database and returns
// an env per table: the first is the default table (Target.KillSession
// finds a session's connection through it), the others have names with a
// random suffix. Open's cleanup drops the whole database.
func setupTables(t *testing.T, tgt Target, n int) []*env {
	t.Helper()
	db := tgt.Open(t)
	var b [4]byte
	_, _ = rand.Read(b[:])
	suffix := hex.EncodeToString(b[:])
	envs := make([]*env, n)
	for i := range envs {
		var d dialects.Dialect
		var err error
		if i == 0 {
			d, err = tgt.New()
		} else {
			d, err = tgt.WithTable(fmt.Sprintf("lk%s_%d", suffix, i))
		}
		if err != nil {
			t.Fatalf("dialect of table %d: %v", i, err)
		}
		if err := d.Migrate(t.Context(), db); err != nil {
			t.Fatalf("Migrate %s: %v", d.Table(), err)
		}
		envs[i] = newEnv(t, tgt, db, d)
		envs[i].loadParts()
	}
	return envs
}

// lockHolders returns the server connections holding a lock of e's
// table (Target.LockHolders), sorted.
func (e *env) lockHolders() []int64 {
	e.t.Helper()
	query, args := e.tgt.LockHolders(e.t, e.db, e.d)
	rows, err := e.db.QueryContext(e.ctx, query, args...)
	if err != nil {
		e.t.Fatalf("lock holders of %s: %v", e.d.Table(), err)
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			e.t.Fatalf("lock holders of %s: %v", e.d.Table(), err)
		}
		out = append(out, id)
	}
	if err := rows.Err(); err != nil {
		e.t.Fatalf("lock holders of %s: %v", e.d.Table(), err)
	}
	slices.Sort(out)
	return out
}

// locker opens a Locker on e's database, closed on cleanup.
func (e *env) locker() *dialects.Locker {
	e.t.Helper()
	l, err := dialects.OpenLocker(e.ctx, e.db)
	if err != nil {
		e.t.Fatalf("OpenLocker: %v", err)
	}
	e.t.Cleanup(func() { _ = l.Close() })
	return l
}

// sessionOn opens a session of e's table named relay on l, closed on
// cleanup (before l: cleanups run last first).
func (e *env) sessionOn(l *dialects.Locker, relay string) dialects.Session {
	e.t.Helper()
	s, err := e.d.OpenSessionOn(e.ctx, l, relay, e.tgt.lease())
	if err != nil {
		e.t.Fatalf("OpenSessionOn(%s, %s): %v", e.d.Table(), relay, err)
	}
	e.t.Cleanup(func() { _ = s.Close() })
	return s
}

// sessionsOn opens a session of each table on l, named relay, and has it
// take every partition of its table, wanting all of them when all is set
// and none otherwise.
func sessionsOn(t *testing.T, envs []*env, l *dialects.Locker, relay string, all bool) []dialects.Session {
	t.Helper()
	out := make([]dialects.Session, len(envs))
	for i, e := range envs {
		out[i] = e.sessionOn(l, relay)
		got := e.take(out[i], e.all(), 0)
		switch {
		case all && len(got) != e.parts:
			t.Fatalf("%s of %s took %d of %d partitions", relay, e.d.Table(), len(got), e.parts)
		case !all && len(got) != 0:
			t.Fatalf("%s of %s took %v, held by the sessions of another locker", relay, e.d.Table(), got)
		}
	}
	return out
}

// onTwoLockers migrates n tables and opens two Lockers: on the first, a
// session "a" of each table that takes all of its partitions; on the
// second, a session "b" of each that takes none.
func onTwoLockers(t *testing.T, tgt Target, n int) (envs []*env, l1, l2 *dialects.Locker, a, b []dialects.Session) {
	t.Helper()
	envs = setupTables(t, tgt, n)
	l1, l2 = envs[0].locker(), envs[0].locker()
	return envs, l1, l2, sessionsOn(t, envs, l1, "a", true), sessionsOn(t, envs, l2, "b", false)
}

// wantLost fails t unless s.Check fails with ErrSessionLost.
func wantLost(t *testing.T, e *env, what string, s dialects.Session) {
	t.Helper()
	if _, _, err := s.Check(e.ctx, e.at(0)); !errors.Is(err, dialects.ErrSessionLost) {
		t.Fatalf("Check of %s: %v, want ErrSessionLost", what, err)
	}
}

// testLockerSessions: the sessions of three tables on one Locker each take
// all of their table's partitions, and a second Locker's take none;
// closing one table's session frees that table's partitions only, and
// leaves the Locker open for the others and for a new session of the
// table.
func testLockerSessions(t *testing.T, tgt Target) {
	envs, l1, _, a, b := onTwoLockers(t, tgt, 3)
	for i, e := range envs {
		wantParts(t, "a owns "+e.d.Table(), e.check(a[i], 0), e.all()...)
		v := e.view(b[i], 0)
		if want := slices.Sorted(slices.Values([]string{a[i].Token(), b[i].Token()})); !slices.Equal(v.Relays, want) {
			t.Fatalf("relays of %s: %q, want %q (its sessions on both lockers)", e.d.Table(), v.Relays, want)
		}
	}
	if !tgt.Leases {
		if _, err := envs[1].d.OpenSessionOn(envs[1].ctx, l1, "again", tgt.lease()); !errors.Is(err, dialects.ErrLockerTableInUse) {
			t.Fatalf("a second session of %s on one locker: %v, want ErrLockerTableInUse", envs[1].d.Table(), err)
		}
	}
	if err := a[0].Close(); err != nil {
		t.Fatalf("Close of %s's session: %v", envs[0].d.Table(), err)
	}
	if l1.Lost() {
		t.Fatal("the locker is lost after one of its sessions closed")
	}
	wantParts(t, "b takes "+envs[0].d.Table()+" after a's session closed", envs[0].take(b[0], envs[0].all(), 0), envs[0].all()...)
	for i, e := range envs[1:] {
		wantParts(t, "b takes "+e.d.Table(), e.take(b[i+1], e.all(), 0))
		wantParts(t, "a still owns "+e.d.Table(), e.check(a[i+1], 0), e.all()...)
	}
	// The table's place on the locker is free again.
	again := envs[0].sessionOn(l1, "a2")
	wantParts(t, "a new session on the locker takes "+envs[0].d.Table(), envs[0].take(again, envs[0].all(), 0))
	wantParts(t, "a still owns "+envs[2].d.Table(), envs[2].check(a[2], 0), envs[2].all()...)
}

// testLockerOneConnection: the locks of the sessions of 20 tables on one
// Locker are all held by one server connection.
func testLockerOneConnection(t *testing.T, tgt Target) {
	if tgt.LockHolders == nil {
		t.Skip("Target.LockHolders not set: the dialect holds no locks on a connection")
	}
	envs := setupTables(t, tgt, 20)
	l := envs[0].locker()
	parts := []int{0, 1, 2, 3}
	for _, e := range envs {
		s := e.sessionOn(l, "a")
		wantParts(t, "take of "+e.d.Table(), e.take(s, parts, 0), parts...)
	}
	holders := map[int64]bool{}
	for _, e := range envs {
		got := e.lockHolders()
		if len(got) != 1 {
			t.Fatalf("the locks of %s are held by %d connections %v, want 1", e.d.Table(), len(got), got)
		}
		holders[got[0]] = true
	}
	if len(holders) != 1 {
		t.Fatalf("the locks of %d tables on one locker are held by %d connections, want 1", len(envs), len(holders))
	}
}

// testLockerClosed: closing a Locker ends every session on it: each
// one's next Check fails with ErrSessionLost, its Close reports nothing to
// free, and another Locker's sessions take the partitions (lock dialects
// once the server saw the connection close, lease dialects past the
// lease).
func testLockerClosed(t *testing.T, tgt Target) {
	envs, l1, l2, a, b := onTwoLockers(t, tgt, 2)
	if err := l1.Close(); err != nil {
		t.Fatalf("Locker.Close: %v", err)
	}
	if !l1.Lost() {
		t.Fatal("a closed locker is not Lost")
	}
	later := deadAfter(tgt)
	for i, e := range envs {
		wantLost(t, e, "a session of a closed locker", a[i])
		e.takeWithin(b[i], e.all(), later)
		wantParts(t, "b owns "+e.d.Table(), e.check(b[i], later), e.all()...)
		if err := a[i].Close(); err != nil && !tgt.Leases {
			t.Fatalf("Close of a session of a closed locker: %v", err)
		}
	}
	if l2.Lost() {
		t.Fatal("the other locker is lost")
	}
}

// deadAfter is the clock offset from which a dead locker's partitions may
// be taken: past the lease on lease dialects, at once on lock dialects
// (takeWithin waits for the server to see the connection close).
func deadAfter(tgt Target) time.Duration {
	if tgt.Leases {
		return 2*tgt.lease() + time.Second
	}
	return 0
}

// testLockerKilled: the server ending a Locker's connection ends every
// session on it, whichever finds it first, and loses the Locker; another
// Locker's sessions take the partitions.
func testLockerKilled(t *testing.T, tgt Target) {
	if tgt.Leases {
		t.Skip("lease sessions hold nothing on a connection")
	}
	envs, l1, l2, a, b := onTwoLockers(t, tgt, 2)
	tgt.KillSession(t, envs[0].db, a[0]) // the connection of table 0's session: l1's
	wantLost(t, envs[1], "the other table's session of the killed locker", a[1])
	if !l1.Lost() {
		t.Fatal("the locker whose connection was killed is not Lost")
	}
	wantLost(t, envs[0], "the session of the killed locker", a[0])
	for i, e := range envs {
		e.takeWithin(b[i], e.all(), 0)
		if err := a[i].Close(); err != nil {
			t.Fatalf("Close of a session of a killed locker: %v", err)
		}
	}
	if l2.Lost() {
		t.Fatal("the other locker is lost")
	}
}

// dropTable drops e's table and its side tables.
func (e *env) dropTable() {
	e.t.Helper()
	for _, suffix := range append([]string{""}, sideTables...) {
		if _, err := e.db.ExecContext(e.ctx, "DROP TABLE IF EXISTS "+e.d.Table()+suffix); err != nil {
			e.t.Fatalf("drop %s%s: %v", e.d.Table(), suffix, err)
		}
	}
}

// testLockerDroppedTable: a table dropped under its session on a shared
// Locker fails that session's next call (lock dialects: ErrSessionLost),
// and only that session's: the Locker is not lost, and the other table's
// session keeps its partitions and goes on working, before and after the
// dropped table's session closes.
func testLockerDroppedTable(t *testing.T, tgt Target) {
	envs := setupTables(t, tgt, 2)
	l := envs[0].locker()
	a := sessionsOn(t, envs, l, "a", true)
	envs[1].dropTable()
	_, _, err := a[1].Check(envs[1].ctx, envs[1].at(0))
	if err == nil {
		t.Fatal("Check of the session of a dropped table returned no error")
	}
	if !tgt.Leases && !errors.Is(err, dialects.ErrSessionLost) {
		t.Fatalf("Check of the session of a dropped table: %v, want ErrSessionLost", err)
	}
	if l.Lost() {
		t.Fatalf("the locker is lost after a statement on a dropped table failed (%v)", err)
	}
	e := envs[0]
	wantParts(t, "the other table's session still owns", e.check(a[0], 0), e.all()...)
	if err := a[0].Release(e.ctx, []int{0}); err != nil {
		t.Fatalf("Release beside a dropped table: %v", err)
	}
	wantParts(t, "take back", e.take(a[0], []int{0}, 0), 0)
	if err := a[1].Close(); err != nil && !tgt.Leases {
		t.Fatalf("Close of the session of a dropped table: %v", err)
	}
	wantParts(t, "the other table's session owns after the dropped one closed", e.check(a[0], 0), e.all()...)
	if l.Lost() {
		t.Fatal("the locker is lost after the session of a dropped table closed")
	}
}

// testLockerFailedClose: a session whose statements fail (its partitions
// table renamed away) still frees its table's locks on the shared
// connection when it closes, though its close statement fails: another
// Locker's session then takes every partition at once, while the first
// Locker stays open for the other table.
func testLockerFailedClose(t *testing.T, tgt Target) {
	if tgt.Leases {
		t.Skip("lease sessions hold nothing on a connection")
	}
	envs, l1, _, a, b := onTwoLockers(t, tgt, 2)
	if err := b[0].Close(); err != nil { // table 0's locks are then all l1's
		t.Fatal(err)
	}
	e := envs[1]
	parts := e.d.Table() + "_partitions"
	rename := func(from, to string) {
		t.Helper()
		if _, err := e.db.ExecContext(e.ctx, "ALTER TABLE "+from+" RENAME TO "+to); err != nil {
			t.Fatalf("rename %s: %v", from, err)
		}
	}
	rename(parts, parts+"_away")
	wantLost(t, e, "the session whose partitions table is gone", a[1])
	if err := a[1].Close(); err != nil {
		t.Fatalf("Close of a lost session: %v", err)
	}
	rename(parts+"_away", parts)
	if tgt.LockHolders != nil {
		// b's member lock is l2's; none is l1's, which holds all of table 0's.
		l1conn := envs[0].lockHolders()
		if got := e.lockHolders(); len(l1conn) != 1 || slices.Contains(got, l1conn[0]) {
			t.Fatalf("after its session closed, the locks of %s are held by connections %v, the locker's (%v) among them",
				e.d.Table(), got, l1conn)
		}
	}
	wantParts(t, "b takes at once", e.take(b[1], e.all(), 0), e.all()...)
	if l1.Lost() {
		t.Fatal("the locker is lost")
	}
	wantParts(t, "the other table's session still owns", envs[0].check(a[0], 0), envs[0].all()...)
}

// testLockerConcurrent: sessions of different tables on one Locker used
// by their own goroutines at once (run with -race), beside a WaitChange of
// one of them on its own connection, which the others' Nudges (of other
// tables) do not interrupt.
func testLockerConcurrent(t *testing.T, tgt Target) {
	envs := setupTables(t, tgt, 3)
	l := envs[0].locker()
	a := sessionsOn(t, envs, l, "a", true)
	ctx, cancel := context.WithCancel(envs[0].ctx)
	defer cancel()
	waited := make(chan error, 1)
	go func() { waited <- a[0].WaitChange(ctx, envs[0].view(a[0], 0)) }()
	const rounds = 20
	errs := make(chan error, len(envs))
	var wg sync.WaitGroup
	for i, e := range envs {
		s := a[i]
		half := e.all()[:e.parts/2]
		wg.Go(func() {
			for range rounds {
				if err := lockerRound(e, s, half); err != nil {
					errs <- fmt.Errorf("%s: %w", e.d.Table(), err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	select {
	case err := <-waited:
		t.Fatalf("WaitChange of %s returned while its relays did not change: %v", envs[0].d.Table(), err)
	default:
	}
	cancel()
	if err := <-waited; !errors.Is(err, context.Canceled) {
		t.Fatalf("WaitChange after cancel: %v, want context.Canceled", err)
	}
	if l.Lost() {
		t.Fatal("the locker is lost")
	}
}

// lockerRound releases half of s's partitions, checks, takes them back,
// checks, reads the view and nudges.
func lockerRound(e *env, s dialects.Session, half []int) error {
	at := time.Now().UTC() // lease dialects: the wait's view judges leases by the clock

	if err := s.Release(e.ctx, half); err != nil {
		return fmt.Errorf("Release: %w", err)
	}
	owned, _, err := s.Check(e.ctx, at)
	if err != nil || !slices.Equal(owned, except(e.all(), half...)) {
		return fmt.Errorf("Check after Release: %v, %v", owned, err)
	}
	got, err := s.Take(e.ctx, half, at)
	if err != nil || !slices.Equal(got, half) {
		return fmt.Errorf("Take back: %v, %v", got, err)
	}
	if owned, _, err = s.Check(e.ctx, at); err != nil || len(owned) != e.parts {
		return fmt.Errorf("Check after Take: %d partitions, %v", len(owned), err)
	}
	v, err := s.View(e.ctx, at)
	if err != nil || v.Owners[0] != s.Token() {
		return fmt.Errorf("View: owner of 0 %q, %v", v.Owners, err)
	}
	if e.d.Table() != dialects.DefaultTable {
		if err := s.Nudge(e.ctx); err != nil {
			return fmt.Errorf("Nudge: %w", err)
		}
	}
	return nil
}
