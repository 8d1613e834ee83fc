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

// TestLeaverSharesAtOnce: when one of three relays leaves, the relay that
// watched it takes its partitions and gives the third relay its share at
// once; the third relay is told (the releasing session interrupts the
// others' waits), so no partition waits unowned for a rebalance. Their
// RebalanceInterval is a minute: without the nudge the released partitions
// stay free that long and the test fails.
func TestLeaverSharesAtOnce(t *testing.T) {
	for _, tgt := range testdb.Targets() {
		if tgt.Name == "sqlite" {
			continue // leases: a left relay's partitions are free at once and taken on the next lease renewal
		}
		t.Run(tgt.Name, func(t *testing.T) {
			e := openEnv(t, tgt)
			rec := newRecorder(nil)
			var relays []*Relay
			var stops []func()
			for i := range 3 {
				c := testConfig("r" + strconv.Itoa(i))
				c.RebalanceInterval = time.Minute
				r := newRelay(t, e, rec, c)
				stops = append(stops, start(t, r))
				relays = append(relays, r)
				waitFor(t, 10*time.Second, "the relays share the partitions", func() bool {
					for _, r := range relays {
						if ownedBy(e, r) < e.parts/len(relays) {
							return false
						}
					}
					return true
				})
			}
			stops[0]()
			left := relays[1:]
			begin := time.Now()
			waitFor(t, 5*time.Second, "every partition owned by the two relays left, each its share", func() bool {
				a, b := ownedBy(e, left[0]), ownedBy(e, left[1])
				return a+b == e.parts && a >= e.parts/2 && b >= e.parts/2
			})
			t.Logf("shared after %v", time.Since(begin))
		})
	}
}
