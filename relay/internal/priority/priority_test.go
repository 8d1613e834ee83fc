package priority

import (
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestChunkWholeWithoutCritical: with no time-critical publish, or none
// within Window, a bulk wave goes whole, measured or not.
func TestChunkWholeWithoutCritical(t *testing.T) {
	var g Gate
	now := time.Unix(1_000, 0)
	if n := g.Chunk(now, 500); n != 500 {
		t.Fatalf("no critical publish yet: chunk %d, want 500", n)
	}
	g.Observe(100, 10*time.Millisecond)
	if n := g.Chunk(now, 500); n != 500 {
		t.Fatalf("measured, no critical publish: chunk %d, want 500", n)
	}
	g.Critical(now)
	if n := g.Chunk(now.Add(Window+time.Millisecond), 500); n != 500 {
		t.Fatalf("critical publish older than Window: chunk %d, want 500", n)
	}
}

// TestChunkAfterCritical: within Window of a time-critical publish, a
// chunk holds about Budget's worth of messages at the measured rate, at
// least MinChunk, at most the wave.
func TestChunkAfterCritical(t *testing.T) {
	var g Gate
	now := time.Unix(1_000, 0)
	g.Critical(now)
	if n := g.Chunk(now, 500); n != MinChunk {
		t.Fatalf("not measured yet: chunk %d, want MinChunk %d", n, MinChunk)
	}
	g.Observe(500, 25*time.Millisecond) // 50 µs a message
	want := int(Budget / (50 * time.Microsecond))
	if n := g.Chunk(now.Add(Window/2), 500); n != want {
		t.Fatalf("50 µs a message: chunk %d, want %d", n, want)
	}
	if n := g.Chunk(now, want/2); n != want/2 {
		t.Fatalf("a wave smaller than the chunk: %d, want it whole (%d)", n, want/2)
	}
	var slow Gate
	slow.Critical(now)
	slow.Observe(10, 100*time.Millisecond) // 10 ms a message
	if n := slow.Chunk(now, 500); n != MinChunk {
		t.Fatalf("a broker slower than Budget a message: chunk %d, want MinChunk %d", n, MinChunk)
	}
}

// TestChunkSettlesAtBudget: against a broker whose chunk takes a round
// trip plus a time per message, chunk sizes settle where a chunk takes
// about Budget, from above and from below.
func TestChunkSettlesAtBudget(t *testing.T) {
	const rtt, per = 300 * time.Microsecond, 40 * time.Microsecond
	want := int((Budget - rtt) / per) // 42
	for _, start := range []time.Duration{time.Microsecond, time.Millisecond} {
		var g Gate
		now := time.Unix(1_000, 0)
		g.Critical(now)
		g.Observe(1, start)
		n := 0
		for range 40 {
			n = g.Chunk(now, 10_000)
			g.Observe(n, rtt+time.Duration(n)*per)
		}
		if n < want*9/10 || n > want*11/10 {
			t.Errorf("first sample %v a message: settled at %d messages a chunk (%v), want about %d (%v)",
				start, n, rtt+time.Duration(n)*per, want, Budget)
		}
	}
}

// TestGateConcurrent: lanes call the gate from many goroutines (run with
// -race); chunks stay within their bounds.
func TestGateConcurrent(t *testing.T) {
	var g Gate
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 1000 {
				now := time.Now()
				if i%2 == 0 {
					g.Critical(now)
				}
				n := g.Chunk(now, 100+j%400)
				if n < 1 || n > 100+j%400 {
					t.Errorf("chunk %d of a wave of %d", n, 100+j%400)
					return
				}
				g.Observe(n, time.Duration(n)*20*time.Microsecond)
			}
		})
	}
	wg.Wait()
}
