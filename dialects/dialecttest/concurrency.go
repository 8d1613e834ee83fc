package dialecttest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
)

// testConcurrentClaims runs relays on separate connections until every row
// is published, checking that no row is handed out twice, no aggregate is
// held by two owners at once, and each aggregate's rows are claimed in order.
func testConcurrentClaims(t *testing.T, tgt Target) {
	e := setup(t, tgt)
	const (
		workers    = 6
		aggregates = 12
		rows       = 240
	)
	e.db.SetMaxOpenConns(workers + 2)
	evs := make([]dialects.Event, rows)
	for i := range evs {
		evs[i] = e.event("agg", fmt.Sprintf("g%02d", i%aggregates))
	}
	e.insert(evs...)

	var (
		mu       sync.Mutex
		holder   = map[string]string{} // aggregate -> owner holding it
		lastSeq  = map[string]int64{}  // aggregate -> last claimed seq
		seen     = map[int64]string{}  // seq -> owner
		done     int
		finished = make(chan struct{})
		wg       sync.WaitGroup
	)
	deadline := time.Now().Add(60 * time.Second)
	for w := range workers {
		owner := fmt.Sprintf("relay-%d", w)
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-finished:
					return
				default:
				}
				if time.Now().After(deadline) {
					t.Errorf("%s: deadline passed", owner)
					return
				}
				recs, err := e.d.Claim(e.ctx, e.db, dialects.ClaimRequest{
					Owner: owner, Limit: 1 + (w+i)%7, Now: e.at(time.Second), LeaseUntil: e.at(time.Hour),
				})
				if err != nil {
					t.Errorf("%s: Claim: %v", owner, err)
					return
				}
				mu.Lock()
				mine := map[string]bool{}
				for _, r := range recs {
					if prev, ok := seen[r.Seq]; ok {
						t.Errorf("seq %d handed to %s and %s", r.Seq, prev, owner)
					}
					seen[r.Seq] = owner
					if h, ok := holder[r.AggregateID]; ok && h != owner {
						t.Errorf("aggregate %s held by %s and %s at once", r.AggregateID, h, owner)
					}
					holder[r.AggregateID] = owner
					mine[r.AggregateID] = true
					if r.Seq <= lastSeq[r.AggregateID] {
						t.Errorf("aggregate %s: seq %d claimed after %d", r.AggregateID, r.Seq, lastSeq[r.AggregateID])
					}
					lastSeq[r.AggregateID] = r.Seq
				}
				mu.Unlock()
				if len(recs) == 0 {
					continue
				}
				// "Publish": a database round trip while holding the lease,
				// so other relays' claims overlap with it.
				if _, err := e.d.Stats(e.ctx, e.db); err != nil {
					t.Errorf("%s: Stats: %v", owner, err)
					return
				}
				// Give the aggregates up in the bookkeeping before the
				// database frees them, so a fast successor is not flagged.
				mu.Lock()
				for a := range mine {
					delete(holder, a)
				}
				mu.Unlock()
				n, err := e.d.MarkPublished(e.ctx, e.db, owner, seqs(recs), e.at(2*time.Second))
				if err != nil || n != int64(len(recs)) {
					t.Errorf("%s: MarkPublished: n=%d want %d, err %v", owner, n, len(recs), err)
					return
				}
				mu.Lock()
				done += len(recs)
				if done == rows {
					close(finished)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if done != rows {
		t.Fatalf("published %d of %d rows", done, rows)
	}
	if s := e.stats(); s.Pending != 0 || s.Published != rows {
		t.Fatalf("stats after run: %+v", s)
	}
}
