package dialecttest

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
)

// check returns what s.Check reports as owned at base+now, failing t on
// an error or a lease that is not ahead of now.
func (e *env) check(s dialects.Session, now time.Duration) []int {
	e.t.Helper()
	owned, until, err := s.Check(e.ctx, e.at(now))
	if err != nil {
		e.t.Fatalf("Check: %v", err)
	}
	if e.tgt.Leases && !until.After(e.at(now)) {
		e.t.Fatalf("Check of a lease session: valid until %v, not after now %v", until, e.at(now))
	}
	if !e.tgt.Leases && !until.IsZero() {
		e.t.Fatalf("Check of a lock session: valid until %v, want the zero time", until)
	}
	return owned
}

func (e *env) view(s dialects.Session, now time.Duration) dialects.View {
	e.t.Helper()
	v, err := s.View(e.ctx, e.at(now))
	if err != nil {
		e.t.Fatalf("View: %v", err)
	}
	if len(v.Owners) != e.parts || len(v.Epochs) != e.parts {
		e.t.Fatalf("View: %d owners, %d epochs, want %d", len(v.Owners), len(v.Epochs), e.parts)
	}
	if !slices.IsSorted(v.Relays) {
		e.t.Fatalf("View: relays not sorted: %q", v.Relays)
	}
	return v
}

func wantParts(t testing.TB, what string, got []int, want ...int) {
	t.Helper()
	got = slices.Sorted(slices.Values(got))
	if !slices.Equal(got, want) && (len(got) != 0 || len(want) != 0) {
		t.Fatalf("%s: got partitions %v, want %v", what, got, want)
	}
}

func testSessionTakeRelease(t *testing.T, tgt Target) {
	e := setup(t, tgt)
	a, b := e.session("a"), e.session("b")
	if a.Token() == "" || a.Token() == b.Token() {
		t.Fatalf("tokens %q and %q: want distinct and non-empty", a.Token(), b.Token())
	}
	wantParts(t, "a takes nothing", e.take(a, nil, 0))
	wantParts(t, "a takes 0-2", e.take(a, []int{0, 1, 2}, 0), 0, 1, 2)
	wantParts(t, "b takes 1-3", e.take(b, []int{1, 2, 3}, 0), 3)
	wantParts(t, "a owns", e.check(a, 0), 0, 1, 2)
	wantParts(t, "b owns", e.check(b, 0), 3)

	if err := a.Release(e.ctx, []int{1}); err != nil {
		t.Fatalf("Release: %v", err)
	}
	wantParts(t, "a owns after release", e.check(a, 0), 0, 2)
	wantParts(t, "b takes the released one", e.take(b, []int{1, 2}, 0), 1)
	// Releasing a partition the session does not own changes nothing.
	if err := a.Release(e.ctx, []int{3}); err != nil {
		t.Fatalf("Release of another's partition: %v", err)
	}
	wantParts(t, "b still owns", e.check(b, 0), 1, 3)
	// Taking a partition the session already owns is harmless: one Release
	// still frees it.
	e.take(a, []int{0}, 0)
	wantParts(t, "a owns after a second take", e.check(a, 0), 0, 2)
	if err := a.Release(e.ctx, []int{0}); err != nil {
		t.Fatalf("Release: %v", err)
	}
	wantParts(t, "b takes 0 after a took it twice and released it once", e.take(b, []int{0}, 0), 0)
	// A partition named twice in one Take is taken once.
	wantParts(t, "a takes 5 twice over", e.take(a, []int{5, 5}, 0), 5)
	if err := a.Release(e.ctx, []int{5}); err != nil {
		t.Fatalf("Release: %v", err)
	}
	wantParts(t, "b takes 5 after one Release", e.take(b, []int{5}, 0), 5)
	if err := b.Release(e.ctx, []int{5}); err != nil {
		t.Fatalf("Release: %v", err)
	}

	// Close frees every partition of the session.
	if err := a.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	c := e.session("c")
	wantParts(t, "c takes all after a closed", e.take(c, e.all(), 0), except(e.all(), 0, 1, 3)...)
	if err := b.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	wantParts(t, "c takes b's after b closed", e.take(c, e.all(), 0), 0, 1, 3)
	wantParts(t, "c owns", e.check(c, 0), e.all()...)
}

func except(all []int, drop ...int) []int {
	var out []int
	for _, p := range all {
		if !slices.Contains(drop, p) {
			out = append(out, p)
		}
	}
	return out
}

func testSessionView(t *testing.T, tgt Target) {
	e := setup(t, tgt)
	a, b := e.session("a"), e.session("b")
	e.take(a, []int{0, 1}, 0)
	e.take(b, []int{2}, 0)
	v := e.view(a, 0)
	if want := slices.Sorted(slices.Values([]string{a.Token(), b.Token()})); !slices.Equal(v.Relays, want) {
		t.Fatalf("View relays %q, want %q", v.Relays, want)
	}
	for p, o := range v.Owners {
		want := ""
		switch p {
		case 0, 1:
			want = a.Token()
		case 2:
			want = b.Token()
		}
		if o != want {
			t.Fatalf("View owner of %d = %q, want %q", p, o, want)
		}
		if want != "" && v.Epochs[p] < 1 {
			t.Fatalf("View epoch of taken partition %d = %d", p, v.Epochs[p])
		}
	}
	// Each take bumps the epoch.
	if err := a.Release(e.ctx, []int{0}); err != nil {
		t.Fatal(err)
	}
	if o := e.view(b, 0).Owners[0]; o != "" {
		t.Fatalf("owner of a released partition: %q", o)
	}
	e.take(b, []int{0}, 0)
	v2 := e.view(b, 0)
	if v2.Owners[0] != b.Token() || v2.Epochs[0] != v.Epochs[0]+1 {
		t.Fatalf("after b took 0: owner %q epoch %d (was %d)", v2.Owners[0], v2.Epochs[0], v.Epochs[0])
	}
	if v2.Epochs[1] != v.Epochs[1] || v2.Epochs[3] != v.Epochs[3] {
		t.Fatalf("epochs of untouched partitions changed: %v -> %v", v.Epochs[:4], v2.Epochs[:4])
	}
	// A closed session is neither a relay nor an owner.
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	v3 := e.view(a, 0)
	if !slices.Equal(v3.Relays, []string{a.Token()}) || v3.Owners[0] != "" || v3.Owners[2] != "" || v3.Owners[1] != a.Token() {
		t.Fatalf("after b closed: relays %q, owners %q", v3.Relays, v3.Owners[:3])
	}
}

// kill ends s as a crash would, and returns the clock offset from which
// the others may take its partitions (lease dialects: past its lease).
func (e *env) kill(s dialects.Session) time.Duration {
	e.t.Helper()
	if e.tgt.Leases {
		return 2*e.tgt.lease() + time.Second
	}
	if e.tgt.KillSession == nil {
		e.t.Fatal("Target.KillSession is required for lock sessions")
	}
	e.tgt.KillSession(e.t, e.db, s)
	return 0
}

// takeWithin takes parts with s until it has them all (a killed
// session's locks are freed when the server has seen its connection
// close), failing after 10s.
func (e *env) takeWithin(s dialects.Session, parts []int, now time.Duration) time.Duration {
	e.t.Helper()
	start := time.Now()
	var got []int
	for {
		got = append(got, e.take(s, except(parts, got...), now)...)
		if len(got) == len(parts) {
			return time.Since(start)
		}
		if time.Since(start) > 10*time.Second {
			e.t.Fatalf("took %d of %d partitions of a dead session in 10s", len(got), len(parts))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func testSessionDeath(t *testing.T, tgt Target) {
	e := setup(t, tgt)
	a := e.own("a")
	b := e.session("b")
	wantParts(t, "b takes while a lives", e.take(b, e.all(), 0))
	e.insert(e.events("x")...)
	rec := e.readAll(0)
	if tgt.Leases {
		// Check renews: past the first lease a is still the owner.
		l := tgt.lease()
		wantParts(t, "a renews", e.check(a, l*3/4), e.all()...)
		wantParts(t, "b takes a renewed lease", e.take(b, e.all(), l+l/2))
	}
	later := e.kill(a)
	if tgt.Leases {
		later += tgt.lease()
	}
	took := e.takeWithin(b, e.all(), later)
	t.Logf("partitions of the dead session taken after %v", took)
	wantParts(t, "b owns", e.check(b, later), e.all()...)
	v := e.view(b, later)
	if !slices.Equal(v.Relays, []string{b.Token()}) {
		t.Fatalf("relays after a died: %q, want only b", v.Relays)
	}
	for p, o := range v.Owners {
		if o != b.Token() {
			t.Fatalf("owner of %d after a died: %q", p, o)
		}
	}
	if _, _, err := a.Check(e.ctx, e.at(later)); !errors.Is(err, dialects.ErrSessionLost) {
		t.Fatalf("Check of the dead session: %v, want ErrSessionLost", err)
	}
	if _, err := a.Take(e.ctx, e.all(), e.at(later)); !errors.Is(err, dialects.ErrSessionLost) {
		t.Fatalf("Take of the dead session: %v, want ErrSessionLost", err)
	}
	// The dead session's token marks nothing; the new owner's does.
	if n := e.mark(a.Token(), seqs(rec), later); n != 0 {
		t.Fatalf("Mark by the dead session's token: %d rows", n)
	}
	if n := e.mark(b.Token(), seqs(rec), later); n != 1 {
		t.Fatalf("Mark by the new owner: %d rows", n)
	}
	_ = a.Close() // may report the loss; must not hang or panic
}

func testWaitChange(t *testing.T, tgt Target) {
	e := setup(t, tgt)
	a := e.session("a")
	// Alone, nobody joining, it waits for ctx.
	ctx, cancel := context.WithTimeout(e.ctx, 100*time.Millisecond)
	err := a.WaitChange(ctx, e.view(a, 0))
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("WaitChange alone: %v, want the context's error", err)
	}
	if tgt.Leases {
		// A lease session sees the relays change, the watched one closing
		// included, as ErrRelaysChanged.
		b := e.session("b")
		done := waitChange(t, e.ctx, a, e.view(a, 0))
		if err := b.Close(); err != nil {
			t.Fatal(err)
		}
		waitReturn(t, "the other relay closed", done, dialects.ErrRelaysChanged)
		return
	}
	wait := func(v dialects.View) (<-chan error, context.CancelFunc) {
		ctx, cancel := context.WithCancel(e.ctx)
		return waitChange(t, ctx, a, v), cancel
	}
	// The watched relay closes.
	b := e.session("b")
	done, cancel := wait(e.view(a, 0))
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	waitReturn(t, "the other relay closed", done, nil)
	cancel()
	// ctx ends while the watched relay lives.
	c := e.session("c")
	done, cancel = wait(e.view(a, 0))
	cancel()
	waitReturn(t, "cancel", done, context.Canceled)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	// The watched relay dies.
	d := e.session("d")
	e.take(d, []int{0}, 0)
	done, cancel = wait(e.view(a, 0))
	defer cancel()
	e.kill(d)
	waitReturn(t, "the other relay died", done, nil)
	if v := e.view(a, 0); !slices.Equal(v.Relays, []string{a.Token()}) || v.Owners[0] != "" {
		t.Fatalf("after d died: relays %q, owner of 0 %q", v.Relays, v.Owners[0])
	}
}

// testWaitChangeOnJoin: a lock dialect's WaitChange returns
// ErrRelaysChanged when a relay joins (the joiner interrupts the others'
// waits), so that the watcher looks again and watches the newcomer.
func testWaitChangeOnJoin(t *testing.T, tgt Target) {
	if tgt.Leases {
		t.Skip("lease dialects do not wait")
	}
	e := setup(t, tgt)
	a, b := e.session("a"), e.session("b")
	v := e.view(a, 0)
	done := make(chan error, 1)
	go func() { done <- a.WaitChange(e.ctx, v) }()
	time.Sleep(300 * time.Millisecond) // a is waiting on b's member lock
	select {
	case err := <-done:
		t.Fatalf("WaitChange returned before anything changed: %v", err)
	default:
	}
	c := e.session("c")
	defer c.Close()
	select {
	case err := <-done:
		if !errors.Is(err, dialects.ErrRelaysChanged) {
			t.Fatalf("WaitChange after a join: %v, want ErrRelaysChanged", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("WaitChange did not return when a relay joined")
	}
	_ = b
}

// waitChange runs s.WaitChange(ctx, v) on a goroutine and fails t if it
// returns within 300ms (then it is waiting: a lock dialect's wait is in the
// server).
func waitChange(t *testing.T, ctx context.Context, s dialects.Session, v dialects.View) <-chan error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- s.WaitChange(ctx, v) }()
	select {
	case err := <-done:
		t.Fatalf("WaitChange returned before anything changed: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	return done
}

// waitReturn fails t unless done delivers an error matching want (nil:
// nil) within 10s, and returns how long that took.
func waitReturn(t *testing.T, what string, done <-chan error, want error) time.Duration {
	t.Helper()
	start := time.Now()
	select {
	case err := <-done:
		if !errors.Is(err, want) {
			t.Fatalf("WaitChange after %s: %v, want %v", what, err, want)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("WaitChange did not return 10s after %s", what)
	}
	return time.Since(start)
}

// testWaitChangeAloneJoin: a relay alone, waiting, sees a relay join
// (ErrRelaysChanged): lock dialects when the joiner's OpenSession
// interrupts the wait on its own member lock, lease dialects at their next
// read of the relays. Without it a lone relay would see the joiner only at
// its next rebalance and leave it idle that long.
func testWaitChangeAloneJoin(t *testing.T, tgt Target) {
	e := setup(t, tgt)
	a := e.session("a")
	e.take(a, e.all(), 0)
	done := waitChange(t, e.ctx, a, e.view(a, 0))
	start := time.Now()
	e.session("b")
	waitReturn(t, "a relay joined", done, dialects.ErrRelaysChanged)
	t.Logf("the lone relay saw the joiner %v after its OpenSession began", time.Since(start))
	wantParts(t, "a still owns", e.check(a, 0), e.all()...)
}

// testNudge: on lock dialects a session's Nudge (after it released
// partitions) interrupts the others' waits, ring and alone alike, so that
// they read ownership again; lease dialects return nil.
func testNudge(t *testing.T, tgt Target) {
	e := setup(t, tgt)
	a := e.session("a")
	b := e.session("b")
	if tgt.Leases {
		if err := b.Nudge(e.ctx); err != nil {
			t.Fatalf("Nudge: %v", err)
		}
		return
	}
	done := waitChange(t, e.ctx, a, e.view(a, 0))
	if err := b.Nudge(e.ctx); err != nil {
		t.Fatalf("Nudge: %v", err)
	}
	waitReturn(t, "another session's Nudge", done, dialects.ErrRelaysChanged)
}

// testWaitChangeJoinedBefore: a relay that joined after the view was read
// but before WaitChange began (its interruption found nobody waiting) is
// seen at once, not at the next rebalance.
func testWaitChangeJoinedBefore(t *testing.T, tgt Target) {
	e := setup(t, tgt)
	a := e.session("a")
	for _, joiner := range []string{"b", "c"} {
		v := e.view(a, 0)
		e.session(joiner)
		ctx, cancel := context.WithTimeout(e.ctx, 10*time.Second)
		err := a.WaitChange(ctx, v)
		cancel()
		if !errors.Is(err, dialects.ErrRelaysChanged) {
			t.Fatalf("WaitChange with a view from before %s joined: %v, want ErrRelaysChanged", joiner, err)
		}
	}
}

// testWaitChangeAloneDeath: a lock dialect's relay alone waits on its own
// member lock, held by its session connection; when that connection dies
// the wait is granted and WaitChange returns nil, and the session's next
// call finds it lost (as a Check would).
func testWaitChangeAloneDeath(t *testing.T, tgt Target) {
	if tgt.Leases {
		t.Skip("lease sessions have no connection to lose: their lease runs out")
	}
	e := setup(t, tgt)
	a := e.session("a")
	e.take(a, []int{0}, 0)
	done := waitChange(t, e.ctx, a, e.view(a, 0))
	e.kill(a)
	took := waitReturn(t, "the session's connection died", done, nil)
	t.Logf("WaitChange returned %v after the session's connection was killed", took)
	if _, err := a.View(e.ctx, e.at(0)); !errors.Is(err, dialects.ErrSessionLost) {
		t.Fatalf("View after the session's connection died: %v, want ErrSessionLost", err)
	}
	if _, _, err := a.Check(e.ctx, e.at(0)); !errors.Is(err, dialects.ErrSessionLost) {
		t.Fatalf("Check after the session's connection died: %v, want ErrSessionLost", err)
	}
	b := e.session("b")
	wantParts(t, "b takes the dead session's partition", e.take(b, []int{0}, 0), 0)
	_ = a.Close()
}

// testWaitChangeCancelled: WaitChange returns soon after its ctx ends,
// however early: a relay alone waits on its own member lock, which only
// its session's close would free, and a relay stops its watch before it
// closes the session, so a wait that missed its cancel would hang the
// relay's stop.
func testWaitChangeCancelled(t *testing.T, tgt Target) {
	e := setup(t, tgt)
	a := e.session("a")
	v := e.view(a, 0)
	for i := range 300 {
		ctx, cancel := context.WithCancel(e.ctx)
		done := make(chan error, 1)
		go func() { done <- a.WaitChange(ctx, v) }()
		time.Sleep(time.Duration(i%100) * 20 * time.Microsecond) // around the statement's start
		cancel()
		select {
		case err := <-done:
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("WaitChange %d after cancel: %v, want context.Canceled", i, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("WaitChange %d did not return 5s after its context was cancelled", i)
		}
	}
}
