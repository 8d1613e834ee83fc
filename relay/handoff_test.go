package relay

import (
	"testing"
	"time"

	"github.com/jitoutbox/jitoutbox/txoutbox"
)

// TestHandoffLazyWakeOncePerCycle checks that ordinary commits send the
// read lane one lazy wake per cycle: the cycle that wake leads to reads
// every row committed before it starts, so a wake per commit would only
// switch goroutines for nothing. After the cycle starts, the next ordinary
// commit wakes it again.
func TestHandoffLazyWakeOncePerCycle(t *testing.T) {
	var h handoff
	lazy := make(chan struct{}, 1)
	h.attach(make(chan struct{}, 1), lazy, make(chan struct{}, 1), nil)
	defer h.detach()
	wakes := func(commits int) int {
		n := 0
		for range commits {
			h.commit(txoutbox.Commit{})
			select {
			case <-lazy: // the read lane takes each wake at once
				n++
			default:
			}
		}
		return n
	}
	if n := wakes(100); n != 1 {
		t.Fatalf("100 ordinary commits before a cycle: %d lazy wakes, want 1", n)
	}
	h.cycleStarts()
	if n := wakes(100); n != 1 {
		t.Fatalf("100 ordinary commits after a cycle started: %d lazy wakes, want 1", n)
	}
	h.detach()
	h.attach(make(chan struct{}, 1), lazy, make(chan struct{}, 1), nil)
	if n := wakes(1); n != 1 {
		t.Fatalf("an ordinary commit in a new run: %d lazy wakes, want 1", n)
	}
}

// A handed-over row does not wait for the ack of another aggregate's
// hand-over batch: while the batch carrying a/0 waits for its ack, b/0 is
// published in a batch of its own (the hand-over lane keeps a window of
// batches in flight). a/0 is published once its ack comes.
func TestHandOverDoesNotWaitForAnotherAggregatesAck(t *testing.T) {
	forEachTarget(t, func(t *testing.T, e env) {
		rec := newRecorder(nil)
		hold := newHoldPublisher(rec, "a/0")
		defer hold.open()
		hooks := &hookRecorder{}
		cfg := testConfig("r1")
		cfg.Hooks = hooks
		_, ob, _ := startHandingOver(t, e, hold, cfg)
		commit(t, ob, "a", 0, 1, false, txoutbox.TimeCritical())
		hold.waitEntered(t)
		commit(t, ob, "b", 0, 1, false, txoutbox.TimeCritical())
		waitFor(t, 5*time.Second, "b/0 published while a/0 waits for its ack", func() bool { return rec.publishedPayload("b/0") })
		if rec.publishedPayload("a/0") {
			t.Error("a/0 published before its publish was let go")
		}
		hold.open()
		waitFor(t, 10*time.Second, "a/0 published", func() bool { return rec.publishedPayload("a/0") })
		rec.check(t)
		hooks.mu.Lock()
		defer hooks.mu.Unlock()
		if hooks.fast != 2 {
			t.Errorf("%d hand-over batches, want 2 (a/0's and b/0's)", hooks.fast)
		}
	})
}
