package chaos

import (
	"encoding/json"
	"fmt"
	"sync"
	"time"
)

// recorder records every message the run's consumer delivers. It is safe
// for concurrent use.
type recorder struct {
	mu         sync.Mutex
	deliveries int
	count      map[string]int       // event id -> deliveries with distinct broker positions
	first      map[string]time.Time // event id -> time of its first delivery
	positions  map[string]bool      // broker positions seen (stream sequences, partition/offsets)
	redeliv    int                  // deliveries of a position seen before (consumer side)
	lastSeq    map[string]int64     // aggKey -> payload seq of its last first delivery
	violations int
	violBy     map[string]int // tenant -> its order violations
	examples   []string       // first order violations
	bad        int            // messages without id or with an unreadable payload
	changed    chan struct{}
}

func newRecorder() *recorder {
	return &recorder{count: map[string]int{}, first: map[string]time.Time{}, positions: map[string]bool{}, lastSeq: map[string]int64{},
		violBy: map[string]int{}, changed: make(chan struct{})}
}

// record counts one delivery.
func (r *recorder) record(d delivery) {
	now := time.Now()
	var p payload
	perr := json.Unmarshal(d.body, &p)
	r.mu.Lock()
	defer r.mu.Unlock()
	defer func() {
		close(r.changed)
		r.changed = make(chan struct{})
	}()
	r.deliveries++
	if d.pos != "" {
		if r.positions[d.pos] {
			r.redeliv++
			return
		}
		r.positions[d.pos] = true
	}
	if d.id == "" || perr != nil || p.Agg != d.agg {
		r.bad++
		return
	}
	r.count[d.id]++
	if r.count[d.id] > 1 {
		return // a duplicate in the broker; only first deliveries are ordered
	}
	r.first[d.id] = now
	key := aggKey(p.Tenant, d.agg)
	if last := r.lastSeq[key]; p.Seq <= last {
		r.violations++
		r.violBy[p.Tenant]++
		if len(r.examples) < 5 {
			r.examples = append(r.examples, fmt.Sprintf("aggregate %s: seq %d (event %s) after seq %d", key, p.Seq, d.id, last))
		}
	}
	r.lastSeq[key] = max(r.lastSeq[key], p.Seq)
}

// missing returns how many of ids the consumer has not seen, and a channel
// closed on the next delivery.
func (r *recorder) missing(ids map[string]evRef) (int, <-chan struct{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for id := range ids {
		if r.count[id] == 0 {
			n++
		}
	}
	return n, r.changed
}
