package relay

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/txoutbox"
)

// hookRecorder implements Hooks, PublishedHook and DeadLetterHook.
type hookRecorder struct {
	mu        sync.Mutex
	starts    int
	fast      int
	ends      []BatchEndInfo
	published int
	dead      []string
}

type hookKey struct{}

func (h *hookRecorder) BatchStart(ctx context.Context, info BatchStartInfo) context.Context {
	h.mu.Lock()
	h.starts++
	if info.FastPath {
		h.fast++
	}
	h.mu.Unlock()
	return context.WithValue(ctx, hookKey{}, info.Size)
}

func (h *hookRecorder) BatchEnd(ctx context.Context, info BatchEndInfo) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if ctx.Value(hookKey{}) != info.Size {
		info.Err = errors.New("BatchEnd did not get BatchStart's context")
	}
	h.ends = append(h.ends, info)
}

func (h *hookRecorder) Published(ctx context.Context, m Message, lat time.Duration) {
	h.mu.Lock()
	h.published++
	h.mu.Unlock()
}

func (h *hookRecorder) DeadLettered(ctx context.Context, m Message, err error) {
	h.mu.Lock()
	h.dead = append(h.dead, m.ID)
	h.mu.Unlock()
}

// A permanent error dead-letters the event at once; by default its
// aggregate stays blocked (the later events wait) until an operator
// requeues the dead event (published first, then the rest in order) or
// skips it (the rest flow, it stays dead). With ReleaseOnDead the rest
// flow at once.
func TestPermanentErrorDeadLettersAtOnce(t *testing.T) {
	for _, mode := range []string{"requeue", "skip", "release"} {
		t.Run(mode, func(t *testing.T) {
			forEachTarget(t, func(t *testing.T, e env) { testDeadLetter(t, e, mode) })
		})
	}
}

func testDeadLetter(t *testing.T, e env, mode string) {
	poison := e.events("p", 0, 3) // p/0 is poison; p/1, p/2 wait for it
	others := e.events("q", 0, 3)
	e.insert(t, append(poison, others...))
	var mu sync.Mutex
	healed := false
	var order []string // payloads in Publish order, failures prefixed "x"
	rec := newRecorder(func(m Message) error {
		mu.Lock()
		defer mu.Unlock()
		if m.ID == poison[0].ID && !healed {
			order = append(order, "x"+string(m.Payload))
			return Permanent(errors.New("schema rejected"))
		}
		order = append(order, string(m.Payload))
		return nil
	})
	hooks := &hookRecorder{}
	dl := newRecorder(nil)
	cfg := testConfig("r1")
	cfg.Hooks = hooks
	cfg.DeadLetter = dl
	cfg.PollInterval = 50 * time.Millisecond // an operator's action is seen at the next poll
	cfg.ReleaseOnDead = mode == "release"
	r := newRelay(t, e, rec, cfg)
	stop := start(t, r)
	ctx := context.Background()
	want := 5
	if mode != "release" {
		waitFor(t, 20*time.Second, "the 3 others published", func() bool { return rec.published() == 3 })
		waitFor(t, 10*time.Second, "dead row, 2 pending", func() bool {
			st := e.stats(t)
			return st.Dead == 1 && st.Pending == 2
		})
		time.Sleep(200 * time.Millisecond) // several polls: the blocked events must stay put
		if got := rec.published(); got != 3 {
			t.Fatalf("%d published while p/0 is dead: the aggregate must stay blocked", got)
		}
		bl, err := e.d.Blockers(ctx, e.db, time.Now(), 10)
		if err != nil || len(bl) != 1 || bl[0].Reason != dialects.BlockDead || bl[0].Head == nil || bl[0].Head.ID != poison[0].ID {
			t.Fatalf("blockers = %+v, %v; want p blocked by its dead p/0", bl, err)
		}
		f := dialects.RequeueFilter{IDs: []string{poison[0].ID}}
		if mode == "requeue" {
			mu.Lock()
			healed = true
			mu.Unlock()
			want = 6
			if n, err := e.d.Requeue(ctx, e.db, f, time.Now()); err != nil || n != 1 {
				t.Fatalf("requeue: %d, %v", n, err)
			}
		} else if n, err := e.d.Skip(ctx, e.db, f); err != nil || n != 1 {
			t.Fatalf("skip: %d, %v", n, err)
		}
	}
	waitFor(t, 20*time.Second, "published after the block ends", func() bool { return rec.published() == want })
	stop() // hooks and counters run after the database write: final once Run returns
	rec.check(t)
	mu.Lock()
	pos := map[string]int{}
	for i, p := range order {
		pos[p] = i
	}
	mu.Unlock()
	if pos["xp/0"] > pos["p/1"] || pos["p/1"] > pos["p/2"] {
		t.Errorf("order %v: p/1 and p/2 must follow the dead p/0", order)
	}
	if mode == "requeue" && (pos["p/0"] > pos["p/1"]) {
		t.Errorf("order %v: the requeued p/0 must be published before p/1", order)
	}
	if got := dl.snapshot(); len(got) != 1 || got[0].ID != poison[0].ID || got[0].Dead == nil || got[0].Dead.Attempts != 1 {
		t.Errorf("dead-letter publisher got %+v, want the poison event with its dead info", got)
	}
	hooks.mu.Lock()
	if len(hooks.dead) != 1 || hooks.published != want {
		t.Errorf("hooks saw dead=%v published=%d", hooks.dead, hooks.published)
	}
	for _, end := range hooks.ends {
		if end.Err != nil {
			t.Errorf("BatchEnd: %v", end.Err)
		}
	}
	hooks.mu.Unlock()
	wantDead := int64(1)
	if mode == "requeue" {
		wantDead = 0
	}
	statsSettle(t, r, 5*time.Second, "want 1 dead-lettered, 0 pending", func(st Stats) bool {
		return st.DeadLettered == 1 && st.Dead == wantDead && st.Pending == 0
	})
}

func TestRetryableUntilMaxAttempts(t *testing.T) {
	forEachTarget(t, func(t *testing.T, e env) {
		held := e.events("h", 0, 2)
		e.insert(t, append(held, e.events("f", 0, 2)...))
		var mu sync.Mutex
		var attempts []int
		var firstFollowerAt int
		calls := 0
		rec := newRecorder(func(m Message) error {
			mu.Lock()
			defer mu.Unlock()
			calls++
			if m.ID == held[0].ID {
				attempts = append(attempts, m.Attempt)
				return errors.New("temporarily rejected")
			}
			if m.ID == held[1].ID && firstFollowerAt == 0 {
				firstFollowerAt = len(attempts)
			}
			return nil
		})
		dl := newRecorder(nil)
		cfg := testConfig("r1")
		cfg.MaxAttempts = 3
		cfg.DeadLetter = dl
		cfg.ReleaseOnDead = true     // h/1 follows its dead h/0
		cfg.PollInterval = time.Hour // retries must come from the retry timer
		r := newRelay(t, e, rec, cfg)
		start(t, r)
		waitFor(t, 20*time.Second, "3 published", func() bool { return rec.published() == 3 })
		waitFor(t, 10*time.Second, "dead row", func() bool { return e.stats(t).Dead == 1 })
		mu.Lock()
		defer mu.Unlock()
		if len(attempts) != 3 || attempts[0] != 1 || attempts[2] != 3 {
			t.Errorf("attempts of the failing event: %v, want [1 2 3]", attempts)
		}
		if firstFollowerAt != 3 {
			t.Errorf("h/1 first offered after %d attempts of h/0, want 3", firstFollowerAt)
		}
		if got := dl.snapshot(); len(got) != 1 || got[0].ID != held[0].ID || got[0].Attempt != 3 {
			t.Errorf("dead letters %+v", got)
		}
		statsSettle(t, r, 5*time.Second, "want 2 retried, 1 dead-lettered", func(st Stats) bool {
			return st.Retried == 2 && st.DeadLettered == 1
		})
	})
}

func TestBrokerOutage(t *testing.T) {
	forEachTarget(t, func(t *testing.T, e env) {
		e.insert(t, e.interleaved(10, 3))
		down := make(chan struct{})
		var mu sync.Mutex
		outageCalls := 0
		rec := newRecorder(func(m Message) error {
			select {
			case <-down:
				return nil
			default:
				mu.Lock()
				outageCalls++
				mu.Unlock()
				return Unavailable(errors.New("nats: no servers available for connection"))
			}
		})
		cfg := testConfig("r1")
		cfg.PollInterval = 400 * time.Millisecond // caps the outage back-off
		cfg.MaxAttempts = 2
		r := newRelay(t, e, rec, cfg)
		cycles := armCycles(r)
		start(t, r)
		began := time.Now()
		outages := 0
		for outages < 5 {
			s := nextCycle(t, cycles, "outage cycle", func(s cycleSignal) bool { return true })
			if s.Outage {
				outages++
			}
		}
		elapsed := time.Since(began)
		if n := e.maxAttempts(t); n != 0 {
			t.Errorf("attempts counted during the outage: max attempts %d", n)
		}
		if st := e.stats(t); st.Dead != 0 {
			t.Errorf("%d events dead-lettered during an outage", st.Dead)
		}
		// Back-off: 100ms, 200ms, 400ms, ... so 5 outage cycles take >= ~1s
		// (jitter-free lower bound 100+200+400+400 = 1.1s minus slack).
		if elapsed < 700*time.Millisecond {
			t.Errorf("5 outage cycles in %v: no back-off", elapsed)
		}
		mu.Lock()
		calls := outageCalls
		mu.Unlock()
		if calls > 5*10+10 { // one wave (<= 10 messages) per outage cycle
			t.Errorf("%d messages offered during 5 outage cycles", calls)
		}
		close(down)
		waitFor(t, 20*time.Second, "all published after recovery", func() bool { return rec.published() == 30 })
		rec.check(t)
		for _, m := range rec.snapshot() {
			if m.Attempt != 1 {
				t.Errorf("event %s attempt %d, want 1 (outage attempts are not counted)", m.ID, m.Attempt)
			}
		}
	})
}

// A relay never publishes partitions another session owns; once that
// session ends (a relay stopped or died), the relay takes them.
func TestOwnedPartitionsWaitForTheirOwner(t *testing.T) {
	forEachTarget(t, func(t *testing.T, e env) {
		e.insert(t, e.interleaved(3, 2))
		ctx := context.Background()
		other, err := e.d.OpenSession(ctx, e.db, "other", 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		all := make([]int, e.parts)
		for i := range all {
			all[i] = i
		}
		if got, err := other.Take(ctx, all, time.Now()); err != nil || len(got) != e.parts {
			t.Fatalf("other took %v, %v", got, err)
		}
		var mu sync.Mutex
		closed := false
		var early []string
		rec := newRecorder(func(m Message) error {
			mu.Lock()
			defer mu.Unlock()
			if !closed {
				early = append(early, m.ID)
			}
			return nil
		})
		cfg := testConfig("b")
		cfg.PollInterval = 100 * time.Millisecond
		r := newRelay(t, e, rec, cfg)
		start(t, r)
		time.Sleep(500 * time.Millisecond)
		mu.Lock()
		closed = true
		mu.Unlock()
		if err := other.Close(); err != nil {
			t.Fatal(err)
		}
		waitFor(t, 20*time.Second, "6 published", func() bool { return rec.published() == 6 })
		rec.check(t)
		mu.Lock()
		defer mu.Unlock()
		if len(early) > 0 {
			t.Errorf("events of partitions owned by another session published: %v", early)
		}
	})
}

func TestPartialBatchMarksOnlySuccesses(t *testing.T) {
	forEachTarget(t, func(t *testing.T, e env) {
		e.insert(t, e.interleaved(5, 2))
		rec := newRecorder(func(m Message) error {
			if m.AggregateID == "a2" {
				return errors.New("nope")
			}
			return nil
		})
		cfg := testConfig("r1")
		cfg.Backoff = func(int) time.Duration { return time.Hour }
		r := newRelay(t, e, rec, cfg)
		cycles := armCycles(r)
		start(t, r)
		nextCycle(t, cycles, "partitions taken", func(s cycleSignal) bool { return s.Reason == reasonOwn })
		st := e.stats(t)
		if st.Published != 8 || st.Pending != 2 || rec.published() != 8 {
			t.Errorf("after one cycle: table %+v, publisher %d; want 8 published, 2 pending", st, rec.published())
		}
		if n := e.maxAttempts(t); n != 1 {
			t.Errorf("max attempts %d, want 1 (a2/0 failed once; a2/1 held back uncounted)", n)
		}
	})
}

func TestDeleteOnPublish(t *testing.T) {
	forEachTarget(t, func(t *testing.T, e env) {
		e.insert(t, e.interleaved(4, 3))
		rec := newRecorder(nil)
		cfg := testConfig("r1")
		cfg.DeleteOnPublish = true
		r := newRelay(t, e, rec, cfg)
		cycles := armCycles(r)
		start(t, r)
		nextCycle(t, cycles, "partitions taken", func(s cycleSignal) bool { return s.Reason == reasonOwn })
		if st := e.stats(t); st.Published != 0 || st.Pending != 0 || rec.published() != 12 {
			t.Errorf("table %+v, publisher %d; want an empty table and 12 published", st, rec.published())
		}
	})
}

func TestCleanupDeletesOldPublishedOnly(t *testing.T) {
	forEachTarget(t, func(t *testing.T, e env) {
		e.insert(t, e.interleaved(3, 2))
		var mu sync.Mutex
		clock := time.Now()
		now := func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
		rec := newRecorder(nil)
		cfg := testConfig("r1")
		cfg.Clock = now
		cfg.Retention = time.Hour
		cfg.CleanupBatch = 2 // several cleanup statements
		r := newRelay(t, e, rec, cfg)
		cycles := armCycles(r)
		stop := start(t, r)
		nextCycle(t, cycles, "partitions taken", func(s cycleSignal) bool { return s.Reason == reasonOwn })
		stop()
		e.insert(t, e.events("late", 0, 2)) // pending, never published
		ctx := context.Background()
		// Cleanup health in Stats: nothing past retention, then 6 rows an
		// hour past it, then none after the cleanup.
		health := func(wantPast int64, wantLag bool) {
			t.Helper()
			s, err := r.Stats(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if s.PastRetention != wantPast || (s.CleanupLag > 0) != wantLag {
				t.Errorf("stats: %d rows past retention, cleanup lag %v; want %d, lag %v", s.PastRetention, s.CleanupLag, wantPast, wantLag)
			}
		}
		if n, err := r.cleanup(ctx); err != nil || n != 0 {
			t.Fatalf("cleanup within retention deleted %d, err %v", n, err)
		}
		health(0, false)
		mu.Lock()
		clock = clock.Add(2 * time.Hour)
		mu.Unlock()
		health(6, true)
		n, err := r.cleanup(ctx)
		if err != nil || n != 6 {
			t.Fatalf("cleanup deleted %d, err %v; want 6", n, err)
		}
		if st := e.stats(t); st.Published != 0 || st.Pending != 2 {
			t.Errorf("after cleanup %+v, want 0 published, 2 pending", st)
		}
		health(0, false)
		// Another relay does not clean while r holds the lock.
		cfg.Owner = "r2"
		r2 := newRelay(t, e, rec, cfg)
		if held, err := e.d.TryLock(ctx, e.db, cleanupLockName, "r2", now(), now().Add(time.Minute)); err != nil || held {
			t.Errorf("r2 took the cleanup lock held by r1: %v %v", held, err)
		}
		_ = r2
	})
}

// TestLoneTimeoutIsNotAnOutageWhileBrokerAcks pins the rule for an event the
// broker never answers: alone in its wave, its timeout would look like an
// outage, but while the broker acknowledges other events its attempts count
// and it is dead-lettered after MaxAttempts instead of being retried forever.
func TestLoneTimeoutIsNotAnOutageWhileBrokerAcks(t *testing.T) {
	forEachTarget(t, func(t *testing.T, e env) {
		poison := e.events("p", 0, 1)
		e.insert(t, append(poison, e.events("f", 0, 3)...))
		rec := newRecorder(func(m Message) error {
			if m.ID == poison[0].ID {
				return fmt.Errorf("no ack: %w", context.DeadlineExceeded)
			}
			return nil
		})
		cfg := testConfig("r1")
		cfg.MaxAttempts = 3
		r := newRelay(t, e, rec, cfg)
		start(t, r)
		waitFor(t, 20*time.Second, "the never-acked event dead-lettered", func() bool { return e.stats(t).Dead == 1 })
		if got := rec.published(); got != 3 {
			t.Errorf("published %d, want the 3 healthy events", got)
		}
		rec.check(t)
	})
}

// A handed-over event whose publish fails with a retryable error is
// published again at its retry time, not at the next poll: the hand-over
// lane posts the retry time to the read lane, which owns the schedule
// (PollInterval is an hour here).
func TestHandedOverRetryIsScheduled(t *testing.T) {
	forEachTarget(t, func(t *testing.T, e env) {
		rec := newRecorder(nil)
		p := newStepPublisher(rec)
		p.fail["x"] = errors.New("broker hiccup")
		_, ob, _ := startHandingOver(t, e, p, testConfig("r1"))
		commit(t, ob, "x", 0, 1, false, txoutbox.TimeCritical())
		waitFor(t, 10*time.Second, "x/0 published on its retry", func() bool { return rec.published() == 1 })
		if a := e.maxAttempts(t); a != 1 {
			t.Errorf("max attempts %d, want 1 (one failure, then published)", a)
		}
		rec.check(t)
	})
}
