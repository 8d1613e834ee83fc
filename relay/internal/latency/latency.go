// Package latency keeps a bounded, log-linear latency histogram: values are
// grouped by power of two, each power split into subBuckets linear buckets,
// so quantiles are accurate to about 1/subBuckets (12.5%) at any scale and
// memory is fixed.
package latency

import (
	"math/bits"
	"sync"
	"time"
)

const (
	subBits    = 3
	subBuckets = 1 << subBits
	// powers covers microsecond values up to 2^48 µs (about 9 years).
	powers     = 48
	numBuckets = (powers + 1) * subBuckets
)

// Histogram records durations with microsecond resolution. The zero value is
// ready to use and safe for concurrent use.
type Histogram struct {
	mu     sync.Mutex
	counts [numBuckets]uint64
	total  uint64
	max    time.Duration
}

// Summary is a snapshot of a Histogram.
type Summary struct {
	Count              uint64
	P50, P90, P99, Max time.Duration
}

// bucketOf maps a value in microseconds to its bucket index.
func bucketOf(us uint64) int {
	if us < subBuckets {
		return int(us)
	}
	exp := bits.Len64(us) - 1 - subBits // us >> exp is in [subBuckets, 2*subBuckets)
	idx := (exp+1)*subBuckets + int(us>>uint(exp)) - subBuckets
	return min(idx, numBuckets-1)
}

// upperOf returns the largest microsecond value in bucket idx.
func upperOf(idx int) uint64 {
	if idx < subBuckets {
		return uint64(idx)
	}
	exp := idx/subBuckets - 1
	mant := uint64(idx%subBuckets + subBuckets)
	return (mant+1)<<uint(exp) - 1
}

// Record adds one duration; negative durations count as zero.
func (h *Histogram) Record(d time.Duration) {
	d = max(d, 0)
	i := bucketOf(uint64(d / time.Microsecond))
	h.mu.Lock()
	h.counts[i]++
	h.total++
	h.max = max(h.max, d)
	h.mu.Unlock()
}

// Summary returns the count, the 50th, 90th and 99th percentiles (bucket upper
// bounds, never above Max) and the maximum.
func (h *Histogram) Summary() Summary {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := Summary{Count: h.total, Max: h.max}
	if h.total == 0 {
		return s
	}
	s.P50 = h.quantile(0.50)
	s.P90 = h.quantile(0.90)
	s.P99 = h.quantile(0.99)
	return s
}

func (h *Histogram) quantile(q float64) time.Duration {
	rank := uint64(q*float64(h.total) + 0.5)
	rank = min(max(rank, 1), h.total)
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			return min(time.Duration(upperOf(i))*time.Microsecond, h.max)
		}
	}
	return h.max
}
