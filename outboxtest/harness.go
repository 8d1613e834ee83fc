package outboxtest

import (
	"context"
	"database/sql"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/notify"
	"github.com/jitoutbox/jitoutbox/relay"
)

// Test-friendly defaults Start applies to zero Config fields.
const (
	// TestPollInterval is the relay's safety-net poll in a Harness.
	TestPollInterval = 100 * time.Millisecond
	// TestLazyDelay bounds how long an ordinary commit waits for a cycle.
	TestLazyDelay = 5 * time.Millisecond
	// TestBackoff is the delay before every retry in a Harness.
	TestBackoff = 10 * time.Millisecond
)

// Options configures Start.
type Options struct {
	// Config is the relay's configuration. Zero fields get the relay's
	// defaults, except: PollInterval TestPollInterval, LazyDelay
	// TestLazyDelay, Backoff a constant TestBackoff, Logger warnings and
	// errors to the test's output. The Harness's Notifier is added to
	// Sources; Hooks, if set, still receive every call.
	Config relay.Config
	// Recorder is the publisher; nil for a new one.
	Recorder *Recorder
}

// Harness is a relay running with a Recorder for the life of a test.
type Harness struct {
	// Recorder receives every message the relay publishes.
	Recorder *Recorder
	// Relay is the running relay (for Stats).
	Relay *relay.Relay
	// Notifier wakes the relay: pass it to txoutbox.WithNotifier so that
	// commits are published at once instead of at the next poll.
	Notifier *notify.Local

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
func Start(t testing.TB, db *sql.DB, d dialects.Dialect, opts Options) *Harness {
	t.Helper()
	h := &Harness{
		Recorder: opts.Recorder,
		Notifier: notify.NewLocal(),
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
	cfg.Sources = append(append([]notify.Source(nil), cfg.Sources...), h.Notifier)
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
	return h
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

// WaitDrained blocks until nothing is pending in the table (everything
// committed so far has been published or dead-lettered), waking after each
// of the relay's batches (and at most every TestPollInterval as a safety
// net). It fails the test when ctx ends first.
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
