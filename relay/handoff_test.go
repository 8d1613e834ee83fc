package relay

import (
	"testing"

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
