package relay

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Poison and slow brokers: publishers that reject some events for good,
// hang past PublishTimeout, or acknowledge late. Run against every target:
//
//	go test -race -run 'Poison|Hanging|LateAck|SlowBroker' ./relay/

// TestPoisonPublisherDeadLettersOthersFlow: a publisher rejects about one
// event in nine, scattered over half the aggregates, permanently. Each
// rejected event is dead-lettered at its first attempt, never retried; every
// other event is published exactly once, in order per aggregate, including
// (with ReleaseOnDead) the events behind a dead one and the aggregates that
// never see poison.
func TestPoisonPublisherDeadLettersOthersFlow(t *testing.T) {
	forEachTarget(t, func(t *testing.T, e env) {
		const aggs, perAgg = 12, 9
		evs := e.interleaved(aggs, perAgg)
		e.insert(t, evs)
		poison := map[string]bool{}
		for _, ev := range evs {
			// Even aggregates get poison at index 1 and 5.
			var a, i int
			if _, err := fmt.Sscanf(string(ev.Payload), "a%d/%d", &a, &i); err != nil {
				t.Fatal(err)
			}
			if a%2 == 0 && (i == 1 || i == 5) {
				poison[ev.ID] = true
			}
		}
		var rejected sync.Map // id -> attempts
		rec := newRecorder(func(m Message) error {
			if poison[m.ID] {
				n, _ := rejected.LoadOrStore(m.ID, new(atomic.Int32))
				n.(*atomic.Int32).Add(1)
				return Permanent(errors.New("broker: message rejected by schema"))
			}
			return nil
		})
		dl := newRecorder(nil)
		cfg := testConfig("poison")
		cfg.DeadLetter = dl
		cfg.ReleaseOnDead = true // the events behind a dead one flow (blocking: TestPermanentErrorDeadLettersAtOnce)
		cfg.BatchSize = 25       // several batches, poison in many of them
		r := newRelay(t, e, rec, cfg)
		start(t, r)
		want := len(evs) - len(poison)
		waitFor(t, 30*time.Second, "healthy events published", func() bool { return rec.published() == want })
		waitFor(t, 10*time.Second, "poison dead, nothing pending", func() bool {
			st := e.stats(t)
			return st.Dead == int64(len(poison)) && st.Pending == 0
		})
		rec.check(t)
		rejected.Range(func(k, v any) bool {
			if n := v.(*atomic.Int32).Load(); n != 1 {
				t.Errorf("poison event %s offered %d times, want 1", k, n)
			}
			return true
		})
		var dead []string
		for _, m := range dl.snapshot() {
			dead = append(dead, m.ID)
			if !poison[m.ID] {
				t.Errorf("dead-letter publisher got healthy event %s", m.ID)
			}
		}
		if len(dead) != len(poison) {
			t.Errorf("dead-letter publisher got %d events, want %d", len(dead), len(poison))
		}
		statsSettle(t, r, 5*time.Second, fmt.Sprintf("want %d dead-lettered, 0 retried", len(poison)), func(st Stats) bool {
			return st.DeadLettered == uint64(len(poison)) && st.Retried == 0
		})
	})
}

// hangingPublisher blocks every Publish until its context ends, as a broker
// that accepts the connection but never acknowledges. It records how many
// calls it got and whether each had a deadline within PublishTimeout.
type hangingPublisher struct {
	timeout    time.Duration
	calls      atomic.Int64
	noDeadline atomic.Int64
	release    chan struct{} // closed: the broker recovers, Publish accepts
}

func (h *hangingPublisher) Publish(ctx context.Context, batch []Message, errs []error) {
	h.calls.Add(1)
	if dl, ok := ctx.Deadline(); !ok || time.Until(dl) > h.timeout {
		h.noDeadline.Add(1)
	}
	select {
	case <-h.release:
		return
	case <-ctx.Done():
	}
	for i := range errs {
		errs[i] = fmt.Errorf("ack wait: %w", ctx.Err())
	}
}

// TestHangingPublisherGivesUpAtTimeoutNoBusyLoop: a broker that never
// acknowledges. Each Publish gets a context ending at PublishTimeout; the
// relay treats the wave as an outage (no attempt counted, nothing dead),
// backs off instead of looping, and delivers everything once the broker
// recovers.
func TestHangingPublisherGivesUpAtTimeoutNoBusyLoop(t *testing.T) {
	forEachTarget(t, func(t *testing.T, e env) {
		e.insert(t, e.interleaved(8, 3))
		cfg := testConfig("hang")
		cfg.PublishTimeout = 100 * time.Millisecond
		cfg.LeaseDuration = time.Second
		cfg.PollInterval = 400 * time.Millisecond // caps the outage back-off
		h := &hangingPublisher{timeout: cfg.PublishTimeout, release: make(chan struct{})}
		r := newRelay(t, e, h, cfg)
		start(t, r)
		waitFor(t, 10*time.Second, "first Publish", func() bool { return h.calls.Load() >= 1 })

		// Count Publish calls and cycles over a window. Each call lasts
		// PublishTimeout (100ms) and is followed by a back-off of at least
		// 100ms (doubling to 400ms), so at most window/200ms + 1 calls fit.
		const window = 2 * time.Second
		c0, s0 := h.calls.Load(), r.c.cycles.Load()
		deadline := time.Now().Add(window)
		waitFor(t, window+time.Second, "window", func() bool { return time.Now().After(deadline) })
		calls, cycles := h.calls.Load()-c0, int64(r.c.cycles.Load()-s0)
		t.Logf("hanging broker: %d Publish calls, %d cycles in %v", calls, cycles, window)
		if limit := int64(window/(200*time.Millisecond)) + 1; calls > limit || cycles > limit+1 {
			t.Errorf("%d Publish calls and %d cycles in %v: want at most %d (busy loop)", calls, cycles, window, limit)
		}
		if calls < 2 {
			t.Errorf("%d Publish calls in %v: the relay stopped trying", calls, window)
		}
		if n := h.noDeadline.Load(); n != 0 {
			t.Errorf("%d Publish calls without a deadline within PublishTimeout", n)
		}
		if n := e.maxAttempts(t); n != 0 {
			t.Errorf("attempts counted while the broker hung: %d", n)
		}
		if st := e.stats(t); st.Dead != 0 || st.Pending != 24 {
			t.Errorf("while hanging: dead %d pending %d, want 0 and 24", st.Dead, st.Pending)
		}

		close(h.release)
		waitFor(t, 20*time.Second, "all published after recovery", func() bool { return e.stats(t).Pending == 0 })
		statsSettle(t, r, 5*time.Second, "want 24 published", func(st Stats) bool { return st.Published == 24 })
	})
}

// offer is one Publish of one event by one relay.
type offer struct {
	owner      string
	start, end time.Time
	acked      bool
}

// lateAckBroker acknowledges each message after a delay that depends on the
// event and on how often it was offered: the first two offers take 0-159ms,
// later ones 0-39ms. (Keyed on offers, not Message.Attempt: a wave that
// only times out counts as an outage, which counts no attempt.)
// Messages whose delay passes the context's end get its error, as when the
// acknowledgement arrives after the relay stopped waiting (a broker without
// deduplication then stores the message twice: lateStored counts those).
type lateAckBroker struct {
	mu         sync.Mutex
	offers     map[string][]offer
	acks       map[string]int
	lateStored int
}

func newLateAckBroker() *lateAckBroker {
	return &lateAckBroker{offers: map[string][]offer{}, acks: map[string]int{}}
}

func ackDelay(m Message, offered int) time.Duration {
	f := fnv.New32a()
	fmt.Fprintf(f, "%s/%d", m.ID, offered)
	span := uint32(160)
	if offered >= 2 {
		span = 40
	}
	return time.Duration(f.Sum32()%span) * time.Millisecond
}

func (b *lateAckBroker) publisher(owner string) Publisher {
	return PublisherFunc(func(ctx context.Context, batch []Message, errs []error) {
		begin := time.Now()
		delay := make([]time.Duration, len(batch))
		b.mu.Lock()
		for i, m := range batch {
			delay[i] = ackDelay(m, len(b.offers[m.ID]))
		}
		b.mu.Unlock()
		order := make([]int, len(batch))
		for i := range order {
			order[i] = i
		}
		slices.SortFunc(order, func(x, y int) int { return int(delay[x] - delay[y]) })
		acked := make([]bool, len(batch))
		timer := time.NewTimer(time.Hour)
		defer timer.Stop()
		expired := false
		for _, i := range order {
			if !expired {
				timer.Reset(time.Until(begin.Add(delay[i])))
				select {
				case <-timer.C:
					acked[i] = true
					continue
				case <-ctx.Done():
					expired = true
				}
			}
			errs[i] = fmt.Errorf("ack wait: %w", ctx.Err())
		}
		end := time.Now()
		b.mu.Lock()
		defer b.mu.Unlock()
		for i, m := range batch {
			b.offers[m.ID] = append(b.offers[m.ID], offer{owner: owner, start: begin, end: end, acked: acked[i]})
			if acked[i] {
				b.acks[m.ID]++
			} else {
				b.lateStored++
			}
		}
	})
}

// TestLateAckSlowBrokerTwoRelays: two relays share the table and a broker
// whose acknowledgements arrive late, some within PublishTimeout (delivered
// once, not retried), some after it (retried with a counted attempt). No
// event is offered by one relay while the other holds it (leases respected),
// none is acknowledged twice, and every one is delivered.
func TestLateAckSlowBrokerTwoRelays(t *testing.T) {
	forEachTarget(t, func(t *testing.T, e env) {
		const aggs, perAgg = 10, 5
		evs := e.interleaved(aggs, perAgg)
		e.insert(t, evs)
		b := newLateAckBroker()
		var relays []*Relay
		var stops []func()
		for _, owner := range []string{"ra", "rb"} {
			cfg := testConfig(owner)
			cfg.PublishTimeout = 100 * time.Millisecond
			cfg.LeaseDuration = 500 * time.Millisecond
			cfg.PollInterval = 200 * time.Millisecond
			cfg.MaxAttempts = 100
			cfg.BatchSize = 20
			r := newRelay(t, e, b.publisher(owner), cfg)
			relays = append(relays, r)
			stops = append(stops, start(t, r))
		}
		waitFor(t, 60*time.Second, "all acknowledged", func() bool {
			b.mu.Lock()
			defer b.mu.Unlock()
			return len(b.acks) == len(evs)
		})
		waitFor(t, 10*time.Second, "nothing pending", func() bool { return e.stats(t).Pending == 0 })
		for _, stop := range stops {
			stop() // counters are final once Run has returned
		}

		b.mu.Lock()
		defer b.mu.Unlock()
		retriedEvents := 0
		for id, offers := range b.offers {
			if b.acks[id] != 1 {
				t.Errorf("event %s acknowledged %d times", id, b.acks[id])
			}
			if len(offers) > 1 {
				retriedEvents++
			}
			for i := range offers {
				for j := i + 1; j < len(offers); j++ {
					x, y := offers[i], offers[j]
					if x.owner != y.owner && x.start.Before(y.end) && y.start.Before(x.end) {
						t.Errorf("event %s offered by %s and %s at once", id, x.owner, y.owner)
					}
				}
			}
		}
		var retried, published uint64
		for _, r := range relays {
			st, err := r.Stats(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			retried += st.Retried
			published += st.Published
		}
		if st := e.stats(t); st.Dead != 0 {
			t.Errorf("%d dead", st.Dead)
		}
		if published != uint64(len(evs)) {
			t.Errorf("relays published %d, want %d", published, len(evs))
		}
		t.Logf("late acks: %d events, %d offered more than once, %d late acknowledgements (stored twice without dedupe), %d counted retries",
			len(evs), retriedEvents, b.lateStored, retried)
		if retriedEvents == 0 || b.lateStored == 0 {
			t.Errorf("no acknowledgement came after the timeout: the test did not exercise retries")
		}
		if retried > uint64(b.lateStored) {
			t.Errorf("%d retries counted for %d late acknowledgements", retried, b.lateStored)
		}
	})
}

// TestHangingPublisherMemoryBounded runs many cycles against a hanging
// broker with a full backlog (each cycle claims BatchSize rows, builds their
// messages, times out and releases them) and checks that the heap in use
// does not grow. The relay keeps nothing per cycle: the claimed records and
// messages die with the cycle, the retry schedule is capped at 256 times, the
// latency histograms have a fixed size. Were one cycle's records or messages
// kept (about 300 bytes each, 400 per cycle), 40 cycles would add ~5 MB; the
// bound of 3 MiB leaves room for allocator noise.
func TestHangingPublisherMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	e := sqliteEnv(t)
	for i := 0; i < 4; i++ {
		e.insert(t, e.interleaved(400, 1))
	}
	cfg := testConfig("mem")
	cfg.PublishTimeout = 5 * time.Millisecond
	cfg.LeaseDuration = time.Second
	cfg.PollInterval = 10 * time.Millisecond // outage back-off stays at its 100ms floor
	cfg.BatchSize = 400
	h := &hangingPublisher{timeout: cfg.PublishTimeout, release: make(chan struct{})}
	r := newRelay(t, e, h, cfg)
	start(t, r)

	heap := func() uint64 {
		runtime.GC()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapInuse
	}
	const warm, measured = 10, 40
	waitFor(t, 60*time.Second, "warm-up cycles", func() bool { return h.calls.Load() >= warm })
	before := heap()
	waitFor(t, 120*time.Second, "measured cycles", func() bool { return h.calls.Load() >= warm+measured })
	after := heap()
	growth := int64(after) - int64(before)
	t.Logf("HeapInuse after %d hanging cycles: %d KiB, after %d more: %d KiB (growth %d KiB)",
		warm, before/1024, measured, after/1024, growth/1024)
	if growth > 3<<20 {
		t.Errorf("heap in use grew by %d KiB over %d cycles of a hanging broker", growth/1024, measured)
	}
	if st := e.stats(t); st.Pending != 1600 || st.Dead != 0 {
		t.Errorf("pending %d dead %d, want 1600 and 0", st.Pending, st.Dead)
	}
}
