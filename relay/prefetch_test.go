package relay

import (
	"context"
	"database/sql"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
)

// claimCounter counts full and speculative (windowed) claims.
type claimCounter struct {
	dialects.Dialect
	full, speculative, speculativeRows atomic.Int32
}

func (c *claimCounter) Claim(ctx context.Context, db *sql.DB, req dialects.ClaimRequest) ([]dialects.Record, error) {
	recs, err := c.Dialect.Claim(ctx, db, req)
	if req.Window > 0 {
		c.speculative.Add(1)
		c.speculativeRows.Add(int32(len(recs)))
	} else {
		c.full.Add(1)
	}
	return recs, err
}

// TestPrefetchKeepsOrder drains backlogs with the next batch claimed while
// the current one is published: with many aggregates the speculative claims
// find rows, with few every one comes back empty (all held back behind the
// batch in flight) and the relay claims again after marking. Either way
// every event is published once, in order per aggregate; without
// Config.Prefetch no speculative claim is made.
func TestPrefetchKeepsOrder(t *testing.T) {
	cases := []struct {
		name            string
		aggs, perAgg    int
		noPrefetch      bool
		wantSpecRows    bool // speculative claims must have found rows
		wantSpeculative bool
	}{
		{"many aggregates", 40, 3, false, true, true},
		{"few aggregates", 3, 40, false, false, true},
		{"prefetch off", 40, 3, true, false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			forEachTarget(t, func(t *testing.T, e env) {
				e.insert(t, e.interleaved(c.aggs, c.perAgg))
				total := c.aggs * c.perAgg
				cc := &claimCounter{Dialect: e.d}
				rec := newRecorder(nil)
				cfg := testConfig("r1")
				cfg.BatchSize = 8
				cfg.Prefetch = !c.noPrefetch
				r, err := New(e.db, cc, rec, cfg)
				if err != nil {
					t.Fatal(err)
				}
				stop := start(t, r)
				waitFor(t, 30*time.Second, "every event published", func() bool { return rec.published() == total })
				stop()
				rec.check(t)
				if n := rec.published(); n != total {
					t.Errorf("published %d, want %d", n, total)
				}
				if st := e.stats(t); st.Pending != 0 {
					t.Errorf("pending after drain: %+v", st)
				}
				spec, rows := cc.speculative.Load(), cc.speculativeRows.Load()
				if c.wantSpeculative != (spec > 0) {
					t.Errorf("%d speculative claims, want some: %v", spec, c.wantSpeculative)
				}
				if c.wantSpecRows && rows == 0 {
					t.Errorf("%d speculative claims found no rows", spec)
				}
				t.Logf("claims: %d full, %d speculative (%d rows)", cc.full.Load(), spec, rows)
			})
		})
	}
}

// TestStopReleasesPrefetchedBatch: a relay stopped while it publishes a
// batch releases the batch it claimed ahead as well, so that another relay
// takes every unconfirmed row at once.
func TestStopReleasesPrefetchedBatch(t *testing.T) {
	forEachTarget(t, func(t *testing.T, e env) {
		// Batch 1: a0/0 a1/0; claimed ahead: a2/0 a2/1 (a0/1, a1/1 held back).
		e.insert(t, e.interleaved(3, 2))
		entered := make(chan struct{}, 1)
		pub := PublisherFunc(func(ctx context.Context, batch []Message, errs []error) {
			select {
			case entered <- struct{}{}:
			default:
			}
			<-ctx.Done()
			for i := range errs {
				errs[i] = ctx.Err()
			}
		})
		cc := &claimCounter{Dialect: e.d}
		cfg := testConfig("r1")
		cfg.BatchSize = 2
		cfg.Prefetch = true
		r, err := New(e.db, cc, pub, cfg)
		if err != nil {
			t.Fatal(err)
		}
		stop := start(t, r)
		<-entered
		waitFor(t, 10*time.Second, "the claim ahead", func() bool { return cc.speculativeRows.Load() == 2 })
		stop()
		got, err := e.d.Claim(context.Background(), e.db, dialects.ClaimRequest{
			Owner: "other", Limit: 100, Now: time.Now(), LeaseUntil: time.Now().Add(time.Minute),
		})
		if err != nil || len(got) != 6 {
			t.Errorf("another owner claimed %d rows at once (err %v), want 6", len(got), err)
		}
		if n := e.maxAttempts(t); n != 0 {
			t.Errorf("stop counted an attempt: max attempts %d", n)
		}
	})
}
