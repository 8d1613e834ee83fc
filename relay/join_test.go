package relay

import (
	"strconv"
	"testing"
	"time"

	"github.com/jitoutbox/jitoutbox/internal/testdb"
)

// TestJoinerSeenAtOnce: relays that already share the table (one alone,
// or two) see a relay join at once, not at their next rebalance, and
// release its share to it. Their RebalanceInterval (and on SQLite their
// lease renewal) is a minute, so without that the joiner would own nothing
// for at least 48 s and the test fails. The delays are logged, not
// asserted: BenchmarkJoin in bench/ measures them.
func TestJoinerSeenAtOnce(t *testing.T) {
	for _, tgt := range testdb.Targets() {
		t.Run(tgt.Name, func(t *testing.T) {
			for _, before := range []int{1, 2} {
				t.Run(strconv.Itoa(before)+"-before", func(t *testing.T) {
					testJoiner(t, openEnv(t, tgt), before)
				})
			}
		})
	}
}

func testJoiner(t *testing.T, e env, before int) {
	cfg := func(name string) Config {
		c := testConfig(name)
		c.RebalanceInterval = time.Minute
		c.LeaseDuration = 2 * time.Minute // SQLite renews every (lease - publish timeout) / 2
		return c
	}
	rec := newRecorder(nil)
	var running []*Relay
	for i := range before {
		r := newRelay(t, e, rec, cfg("r"+strconv.Itoa(i)))
		start(t, r)
		running = append(running, r)
		if i == 0 {
			waitOwnsAll(t, e, r)
			continue
		}
		waitFor(t, 10*time.Second, "the relays share the partitions", func() bool {
			return ownedBy(e, r) == e.parts/len(running)
		})
	}
	joiner := newRelay(t, e, rec, cfg("joiner"))
	begin := time.Now()
	start(t, joiner)
	waitFor(t, 10*time.Second, "the joiner owns a partition", func() bool { return ownedBy(e, joiner) > 0 })
	first := time.Since(begin)
	share := e.parts / (before + 1)
	waitFor(t, 10*time.Second, "the joiner owns its share", func() bool { return ownedBy(e, joiner) >= share })
	fair := time.Since(begin)
	t.Logf("joiner next to %d relays: first partition after %v, its share (%d) after %v", before, first, share, fair)
	total := ownedBy(e, joiner)
	for _, r := range running {
		total += ownedBy(e, r)
	}
	if total > e.parts {
		t.Fatalf("%d partitions owned among %d relays, more than the table's %d", total, before+1, e.parts)
	}
}
