package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jitoutbox/jitoutbox/relay/natspub"
)

// recorder records every message an ordered consumer delivers. It is safe
// for concurrent use.
type recorder struct {
	mu         sync.Mutex
	deliveries int
	count      map[string]int       // event id -> deliveries with distinct stream sequences
	first      map[string]time.Time // event id -> time of its first delivery
	streamSeqs map[uint64]bool      // stream sequences seen
	redeliv    int                  // deliveries of a stream sequence seen before (consumer side)
	lastSeq    map[string]int64     // aggregate -> payload seq of its last first delivery
	violations int
	examples   []string // first order violations
	bad        int      // messages without id or with an unreadable payload
	changed    chan struct{}
}

func newRecorder() *recorder {
	return &recorder{count: map[string]int{}, first: map[string]time.Time{}, streamSeqs: map[uint64]bool{}, lastSeq: map[string]int64{},
		changed: make(chan struct{})}
}

// consume starts an ordered consumer on stream; stop it with the returned
// function.
func (r *recorder) consume(ctx context.Context, stream jetstream.Stream) (func(), error) {
	cons, err := stream.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{})
	if err != nil {
		return nil, fmt.Errorf("ordered consumer: %w", err)
	}
	cc, err := cons.Consume(r.handle)
	if err != nil {
		return nil, fmt.Errorf("consume: %w", err)
	}
	return cc.Stop, nil
}

func (r *recorder) handle(m jetstream.Msg) {
	now := time.Now()
	id := m.Headers().Get(natspub.HeaderEventID)
	agg := m.Headers().Get(natspub.HeaderAggregateID)
	var p payload
	perr := json.Unmarshal(m.Data(), &p)
	var sseq uint64
	if md, err := m.Metadata(); err == nil {
		sseq = md.Sequence.Stream
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	defer func() {
		close(r.changed)
		r.changed = make(chan struct{})
	}()
	r.deliveries++
	if sseq != 0 {
		if r.streamSeqs[sseq] {
			r.redeliv++
			return
		}
		r.streamSeqs[sseq] = true
	}
	if id == "" || perr != nil || p.Agg != agg {
		r.bad++
		return
	}
	r.count[id]++
	if r.count[id] > 1 {
		return // a duplicate in the stream; only first deliveries are ordered
	}
	r.first[id] = now
	if last := r.lastSeq[agg]; p.Seq <= last {
		r.violations++
		if len(r.examples) < 5 {
			r.examples = append(r.examples, fmt.Sprintf("aggregate %s: seq %d (event %s) after seq %d", agg, p.Seq, id, last))
		}
	}
	r.lastSeq[agg] = max(r.lastSeq[agg], p.Seq)
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
