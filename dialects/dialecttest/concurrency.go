package dialecttest

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/jitoutbox/jitoutbox/dialects"
)

// testSessionTakeConcurrent runs sessions in goroutines that take and
// release overlapping partitions at once, checking that a partition never
// has two owners: Take returns it to one session at a time, and Check
// agrees with what each session was given.
func testSessionTakeConcurrent(t *testing.T, tgt Target) {
	e := setup(t, tgt)
	const (
		workers = 6
		rounds  = 25
		span    = 12 // partitions fought over
	)
	var (
		mu    sync.Mutex
		owner = map[int]string{} // partition -> session holding it
		taken int
		wg    sync.WaitGroup
	)
	sessions := make([]dialects.Session, workers)
	for w := range sessions {
		sessions[w] = e.session(fmt.Sprintf("relay-%d", w))
	}
	for w, s := range sessions {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 1))
			me := s.Token()
			var mine []int
			for range rounds {
				var want []int
				for p := range span {
					if rng.IntN(2) == 0 {
						want = append(want, p)
					}
				}
				got, err := s.Take(e.ctx, except(want, mine...), e.at(0))
				if err != nil {
					t.Errorf("%s: Take: %v", me, err)
					return
				}
				mu.Lock()
				for _, p := range got {
					if o := owner[p]; o != "" {
						t.Errorf("partition %d taken by %s while %s owns it", p, me, o)
					}
					owner[p] = me
					taken++
				}
				mu.Unlock()
				mine = append(mine, got...)
				owned, _, err := s.Check(e.ctx, e.at(0))
				if err != nil {
					t.Errorf("%s: Check: %v", me, err)
					return
				}
				if !equalInts(owned, mine) {
					t.Errorf("%s: Check says %v, Take gave %v", me, owned, mine)
				}
				// Release about half; the bookkeeping forgets them first, so
				// that a fast successor is not flagged.
				var rel, keep []int
				for _, p := range mine {
					if rng.IntN(2) == 0 {
						rel = append(rel, p)
					} else {
						keep = append(keep, p)
					}
				}
				mu.Lock()
				for _, p := range rel {
					delete(owner, p)
				}
				mu.Unlock()
				if err := s.Release(e.ctx, rel); err != nil {
					t.Errorf("%s: Release: %v", me, err)
					return
				}
				mine = keep
			}
		})
	}
	wg.Wait()
	if taken < span {
		t.Fatalf("only %d takes in the whole run", taken)
	}
	t.Logf("%d takes", taken)
}

// equalInts compares two partition lists as sets.
func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	seen := map[int]int{}
	for _, p := range a {
		seen[p]++
	}
	for _, p := range b {
		seen[p]--
	}
	for _, n := range seen {
		if n != 0 {
			return false
		}
	}
	return true
}
