// Package priority keeps bulk publishes from delaying time-critical ones
// on a broker they share.
//
// A broker takes a connection's (or a stream's) messages in the order they
// arrive: a time-critical message published while a wave of 500 backlog
// messages is in flight is acknowledged after all of them. A Gate is shared
// by every lane that publishes through one Publisher (the two lanes of a
// relay, every table of a fleet). Time-critical publishes tell it they
// start (Critical); bulk publishes ask it how many messages to put in
// flight at once (Chunk) and report how long each chunk took (Observe).
// While time-critical publishes are recent (within Window), a bulk chunk
// holds what the broker acknowledges in about Budget, so a time-critical
// message waits behind at most that; with none recent, bulk waves go
// whole and a drain runs at full speed.
//
// The Gate holds three numbers, each read and written atomically: it is a
// meter that lanes consult, not a queue, and owns no goroutine.
package priority

import (
	"sync/atomic"
	"time"
)

const (
	// Window is how long after a time-critical publish bulk publishes
	// stay chunked: a steady time-critical rate of a few events a second
	// keeps them chunked, an isolated one does not slow a drain for long.
	Window = time.Second
	// Budget is what one bulk chunk should take to be acknowledged, and
	// so about the longest a time-critical message waits behind bulk
	// ones. Each chunk also costs the broker's round trip, so a drain
	// beside time-critical traffic goes a little slower.
	Budget = 2 * time.Millisecond
	// MinChunk bounds a chunk from below, for a broker so slow per
	// message that Budget would hold one message: the drain keeps going.
	MinChunk = 8
)

// Gate tells bulk publishes how many messages to put in flight at once.
// The zero value is ready to use; a Gate is safe for concurrent use.
type Gate struct {
	last   atomic.Int64 // unix ns of the last time-critical publish; 0: none yet
	perMsg atomic.Int64 // ns one bulk message took, smoothed; 0: not measured
}

// Critical records that a time-critical publish starts at now.
func (g *Gate) Critical(now time.Time) {
	g.last.Store(now.UnixNano())
}

// Chunk returns how many of n bulk messages to publish together at now: n
// when no time-critical publish started within Window (or n is already
// small), otherwise the number the broker acknowledges in about Budget at
// the rate Observe measured, at least MinChunk.
func (g *Gate) Chunk(now time.Time, n int) int {
	last := g.last.Load()
	if n <= MinChunk || last == 0 || now.UnixNano()-last > int64(Window) {
		return n
	}
	per := g.perMsg.Load()
	if per <= 0 {
		return min(n, MinChunk) // not measured yet: the first chunk measures
	}
	return min(n, max(MinChunk, int(int64(Budget)/per)))
}

// Observe records that a bulk chunk of n messages took d, from its publish
// to its last acknowledgement. The per-message time includes the chunk's
// share of the round trip, so chunk sizes settle where a chunk takes
// Budget: a larger chunk spreads the round trip thinner, measures a lower
// per-message time and is followed by a larger one, and the other way
// round.
func (g *Gate) Observe(n int, d time.Duration) {
	if n <= 0 || d <= 0 {
		return
	}
	sample := int64(d) / int64(n)
	for {
		old := g.perMsg.Load()
		next := sample
		if old > 0 {
			next = old + (sample-old)/4 // smoothed over about four chunks
		}
		if g.perMsg.CompareAndSwap(old, next) {
			return
		}
	}
}
