package outboxtest

import (
	"context"
	"database/sql"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/relay"
	"github.com/jitoutbox/jitoutbox/txoutbox"
)

// Test-friendly defaults Start applies to zero Config fields.
const (
	// TestPollInterval is the relay's safety-net poll in a Harness.
	TestPollInterval = 100 * time.Millisecond
	// TestLazyDelay bounds how long an ordinary commit waits for a cycle.
	TestLazyDelay = 5 * time.Millisecond
	// TestBackoff is the delay before every retry in a Harness.
	TestBackoff = 10 * time.Millisecond
	// ownWait bounds how long Start waits for the relay to own every
	// partition.
	ownWait = 10 * time.Second
)

// Options configures Start.
type Options struct {
	// Config is the relay's configuration. Zero fields get the relay's
	// defaults, except: PollInterval TestPollInterval, LazyDelay
	// TestLazyDelay, Backoff a constant TestBackoff, Logger warnings and
	// errors to the test's output. Hooks, if set, still receive every
	// call.
	Config relay.Config
	// Recorder is the publisher; nil for a new one.
	Recorder *Recorder
}

// Harness is a relay running with a Recorder for the life of a test.
type Harness struct {
	// Recorder receives every message the relay publishes.
	Recorder *Recorder
	// Relay is the running relay: for Stats, and for txoutbox.WithRelay
	// when the test builds its own Outbox (Outbox does it for you), so
	// that commits are handed to the relay at once instead of waiting for
	// its next poll.
	Relay *relay.Relay

	t  testing.TB
	db *sql.DB
	d  dialects.Dialect

	mu      sync.Mutex
	batches chan struct{} // closed and replaced after every batch

	stopOnce sync.Once
	cancel   context.CancelFunc
	done     chan struct{}
	runErr   error
}

// Start runs a relay on db and d that publishes to a Recorder until the test
// ends (it is stopped in t.Cleanup, and no goroutine outlives it). The table
// must exist (d.Migrate). It fails the test if the relay cannot be created.
//
// Start returns once the relay owns every partition of the table, so that
// the time-critical commits of an Outbox made with h.Outbox (or
// txoutbox.WithRelay(h.Relay)) are handed to it at once. When another relay
// on the same table keeps some partitions for longer than 10s, Start logs
// it and returns: those partitions' events are then published by that
// relay.
func Start(t testing.TB, db *sql.DB, d dialects.Dialect, opts Options) *Harness {
	t.Helper()
	h := &Harness{
		Recorder: opts.Recorder,
		t:        t,
		db:       db,
		d:        d,
		batches:  make(chan struct{}),
		done:     make(chan struct{}),
	}
	if h.Recorder == nil {
		h.Recorder = NewRecorder()
	}
	cfg := opts.Config
	if cfg.PollInterval == 0 {
		cfg.PollInterval = TestPollInterval
	}
	if cfg.LazyDelay == 0 {
		cfg.LazyDelay = TestLazyDelay
	}
	if cfg.Backoff == nil {
		cfg.Backoff = func(int) time.Duration { return TestBackoff }
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	cfg.Hooks = &hooks{inner: cfg.Hooks, h: h}
	r, err := relay.New(db, d, h.Recorder, cfg)
	if err != nil {
		t.Fatalf("outboxtest: start relay: %v", err)
	}
	h.Relay = r
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	go func() {
		defer close(h.done)
		h.runErr = r.Run(ctx)
	}()
	t.Cleanup(h.Stop)
	h.awaitOwnership()
	return h
}

// awaitOwnership waits, up to ownWait, until the relay owns every
// partition; it wakes after each of the relay's batches (a take runs one)
// and every millisecond.
func (h *Harness) awaitOwnership() {
	h.t.Helper()
	n, err := h.d.Partitions(context.Background(), h.db)
	if err != nil {
		h.t.Fatalf("outboxtest: start relay: %v", err)
	}
	deadline := time.NewTimer(ownWait)
	defer deadline.Stop()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for {
		owned := 0
		for p := range n {
			if h.Relay.Owns(p) {
				owned++
			}
		}
		if owned == n {
			return
		}
		select {
		case <-h.done:
			return // the relay ended; Stop reports why
		case <-deadline.C:
			h.t.Logf("outboxtest: the relay owns %d of %d partitions after %v: another relay on the table owns the others", owned, n, ownWait)
			return
		case <-tick.C:
		}
	}
}

// Outbox returns a txoutbox.Outbox on the Harness's database and dialect,
// wired to its relay with txoutbox.WithRelay, then opts: time-critical
// commits are handed to the relay in memory and published at once, and
// ordinary commits wake it within TestLazyDelay. It fails the test if the
// Outbox cannot be created.
func (h *Harness) Outbox(opts ...txoutbox.Option) *txoutbox.Outbox {
	h.t.Helper()
	ob, err := txoutbox.New(h.db, h.d, append([]txoutbox.Option{txoutbox.WithRelay(h.Relay)}, opts...)...)
	if err != nil {
		h.t.Fatalf("outboxtest: outbox: %v", err)
	}
	return ob
}

// Stop stops the relay and waits for it to return; it reports an error the
// relay returned with t.Errorf. It is called by t.Cleanup and may be called
// earlier; later calls do nothing.
func (h *Harness) Stop() {
	h.stopOnce.Do(func() {
		h.cancel()
		<-h.done
		if h.runErr != nil {
			h.t.Errorf("outboxtest: relay: %v", h.runErr)
		}
	})
}

// WaitPublished blocks until the Recorder has accepted every one of ids and
// returns their messages in the order of ids; see AwaitPublished.
func (h *Harness) WaitPublished(ctx context.Context, ids ...string) []relay.Message {
	h.t.Helper()
	return WaitPublished(ctx, h.t, h.Recorder, ids...)
}

// WaitDrained blocks until the table is drained (see AwaitDrained: nothing
// pending could still be published; events held behind a dead event of
// their aggregate do not count), waking after each of the relay's batches
// (and at most every TestPollInterval as a safety net). It fails the test
// when ctx ends first.
func (h *Harness) WaitDrained(ctx context.Context) {
	h.t.Helper()
	tick := time.NewTicker(TestPollInterval)
	defer tick.Stop()
	if err := awaitDrained(ctx, h.db, h.d, h.batchSignal, tick.C); err != nil {
		h.t.Fatalf("%v", err)
	}
}

// batchSignal returns a channel closed after the relay's next batch.
func (h *Harness) batchSignal() <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.batches
}

func (h *Harness) batchEnded() {
	h.mu.Lock()
	defer h.mu.Unlock()
	close(h.batches)
	h.batches = make(chan struct{})
}

// hooks signals batch ends and forwards to the user's hooks.
type hooks struct {
	inner relay.Hooks
	h     *Harness
}

var (
	_ relay.PublishedHook  = (*hooks)(nil)
	_ relay.DeadLetterHook = (*hooks)(nil)
)

func (k *hooks) BatchStart(ctx context.Context, info relay.BatchStartInfo) context.Context {
	if k.inner != nil {
		return k.inner.BatchStart(ctx, info)
	}
	return ctx
}

func (k *hooks) BatchEnd(ctx context.Context, info relay.BatchEndInfo) {
	if k.inner != nil {
		k.inner.BatchEnd(ctx, info)
	}
	k.h.batchEnded()
}

func (k *hooks) Published(ctx context.Context, msg relay.Message, latency time.Duration) {
	if p, ok := k.inner.(relay.PublishedHook); ok {
		p.Published(ctx, msg, latency)
	}
}

func (k *hooks) DeadLettered(ctx context.Context, msg relay.Message, err error) {
	if p, ok := k.inner.(relay.DeadLetterHook); ok {
		p.DeadLettered(ctx, msg, err)
	}
}
