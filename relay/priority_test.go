package relay

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jitoutbox/jitoutbox/notify"
	"github.com/jitoutbox/jitoutbox/relay/internal/priority"
)

// chunkRecorder is a recorder that takes perMsg a message (a broker's
// ingest time) and notes each call's size; with critical set, it tells
// the relay's gate before every call that a time-critical publish just
// started, as steady time-critical traffic of another lane would.
type chunkRecorder struct {
	*recorder
	gate     *priority.Gate
	critical bool
	perMsg   time.Duration
	mu       sync.Mutex
	sizes    []int
}

func (c *chunkRecorder) Publish(ctx context.Context, batch []Message, errs []error) {
	if c.critical {
		c.gate.Critical(time.Now())
	}
	c.mu.Lock()
	c.sizes = append(c.sizes, len(batch))
	c.mu.Unlock()
	time.Sleep(time.Duration(len(batch)) * c.perMsg)
	c.recorder.Publish(ctx, batch, errs)
}

func (c *chunkRecorder) callSizes() []int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.sizes)
}

// TestBulkWavesChunkedBesideCritical: while time-critical publishes are
// recent, the read lane puts at most priority.Budget's worth of a wave in
// flight at once (a time-critical message on the same broker waits behind
// no more); with none, a wave goes in one call. Every event is published
// once and in order either way.
func TestBulkWavesChunkedBesideCritical(t *testing.T) {
	const events, perMsg = 400, 100 * time.Microsecond
	for _, critical := range []bool{false, true} {
		name := map[bool]string{false: "alone", true: "beside critical"}[critical]
		t.Run(name, func(t *testing.T) {
			e := sqliteEnv(t)
			pub := &chunkRecorder{recorder: newRecorder(nil), critical: critical, perMsg: perMsg}
			cfg := testConfig("r1")
			sig := notify.NewLocal()
			cfg.Sources = []notify.Source{sig}
			r := newRelay(t, e, pub, cfg)
			pub.gate = r.gate
			start(t, r)
			waitOwnsAll(t, e, r)
			e.insert(t, e.interleaved(events, 1))
			if critical {
				// Just before the wake: the start and the insert can
				// outlast the gate's Window on a loaded machine.
				r.gate.Critical(time.Now())
			}
			sig.Notify(nil)
			waitFor(t, 30*time.Second, "every event published", func() bool { return pub.published() == events })
			pub.check(t)
			sizes := pub.callSizes()
			largest := slices.Max(sizes)
			if !critical {
				if largest != events {
					t.Fatalf("no time-critical traffic: the wave went in calls of %v, want one call of %d", sizes, events)
				}
				return
			}
			// A message takes at least perMsg, so a chunk of Budget
			// holds at most Budget/perMsg of them.
			if limit := int(priority.Budget / perMsg); largest > limit {
				t.Fatalf("beside time-critical traffic: calls of %v, want none over %d messages", sizes, limit)
			}
		})
	}
}

// TestChunkedWaveStopsAtAnOutage: a chunk the broker refuses whole as
// unavailable ends its wave: the rest is not offered chunk after chunk
// (each could wait for PublishTimeout), the wave reads as an outage, and
// no attempt is spent.
func TestChunkedWaveStopsAtAnOutage(t *testing.T) {
	e := sqliteEnv(t)
	down := errors.New("not connected")
	pub := &chunkRecorder{recorder: newRecorder(func(Message) error { return Unavailable(down) }), critical: true, perMsg: 100 * time.Microsecond}
	cfg := testConfig("r1")
	sig := notify.NewLocal()
	cfg.Sources = []notify.Source{sig}
	r := newRelay(t, e, pub, cfg)
	pub.gate = r.gate
	r.gate.Critical(time.Now())
	start(t, r)
	waitOwnsAll(t, e, r)
	e.insert(t, e.interleaved(200, 1))
	sig.Notify(nil)
	waitFor(t, 10*time.Second, "a publish", func() bool { return len(pub.callSizes()) > 0 })
	time.Sleep(300 * time.Millisecond) // the outage's first probes
	sizes := pub.callSizes()
	offered := 0
	for _, n := range sizes {
		offered += n
	}
	// Without the stop, the first wave alone is 200/MinChunk = 25 calls.
	if len(sizes) > 6 || offered >= 200 {
		t.Fatalf("during an outage: %d calls offering %d messages (%v); want the wave to stop at its first chunk", len(sizes), offered, sizes)
	}
	if n := e.maxAttempts(t); n != 0 {
		t.Fatalf("an outage spent attempts: max attempts %d", n)
	}
}
