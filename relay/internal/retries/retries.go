// Package retries keeps the moments a relay's failed rows become due
// again. The read lane owns a Schedule and runs a cycle at each of its
// times; the hand-over lane posts its failures' times to a Box, which the
// read lane empties into its Schedule between cycles.
package retries

import (
	"slices"
	"sync"
	"time"
)

// MaxTimes bounds the distinct retry times a Schedule remembers.
const MaxTimes = 256

// Schedule remembers when failed rows become due again, so that each of
// those moments gets a cycle, even when a later failure is scheduled after
// an earlier, still pending one. Times are kept sorted; beyond MaxTimes the
// second-latest is dropped, so the latest time is always kept and nothing
// waits for the safety-net poll. The zero value is empty; it is not safe
// for concurrent use (one goroutine owns it).
type Schedule struct {
	times []time.Time
}

// Add remembers t.
func (s *Schedule) Add(t time.Time) {
	i, found := slices.BinarySearchFunc(s.times, t, func(a, b time.Time) int { return a.Compare(b) })
	if found {
		return
	}
	s.times = slices.Insert(s.times, i, t)
	if n := len(s.times); n > MaxTimes {
		s.times = slices.Delete(s.times, n-2, n-1)
	}
}

// AddAll remembers each of ts.
func (s *Schedule) AddAll(ts []time.Time) {
	for _, t := range ts {
		s.Add(t)
	}
}

// Due drops the times that have come by now.
func (s *Schedule) Due(now time.Time) {
	i := 0
	for i < len(s.times) && !s.times[i].After(now) {
		i++
	}
	s.times = slices.Delete(s.times, 0, i)
}

// Next returns how long until the earliest remembered time (0 if it has
// come), and false when nothing is scheduled.
func (s *Schedule) Next(now time.Time) (time.Duration, bool) {
	if len(s.times) == 0 {
		return 0, false
	}
	return max(s.times[0].Sub(now), 0), true
}

// Box is a mailbox of retry times from one goroutine to another: Add never
// blocks (the reader may be busy with a backlog), and the reader takes
// the times when Wake fires or between its cycles.
type Box struct {
	mu    sync.Mutex
	times []time.Time
	wake  chan struct{}
}

// NewBox returns an empty Box.
func NewBox() *Box { return &Box{wake: make(chan struct{}, 1)} }

// Add posts t and wakes the reader.
func (b *Box) Add(t time.Time) {
	b.mu.Lock()
	b.times = append(b.times, t)
	b.mu.Unlock()
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

// Take returns, and forgets, the posted times.
func (b *Box) Take() []time.Time {
	b.mu.Lock()
	defer b.mu.Unlock()
	t := b.times
	b.times = nil
	return t
}

// Wake receives (coalesced) after each Add.
func (b *Box) Wake() <-chan struct{} { return b.wake }
