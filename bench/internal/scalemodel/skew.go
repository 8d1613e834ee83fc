package scalemodel

import (
	"strconv"

	"github.com/jitoutbox/jitoutbox/dialects"
)

// relayLoads returns each active relay's share of the events and the
// number of aggregates it carries, for s.Aggregates aggregates named as the
// benchmarks seed them (type "order", ids agg-0, agg-1, ..., the same
// number of events each), placed by dialects.PartitionOf, with partition p
// owned by relay p % active (relays own equal counts of partitions; which
// ones is the rebalance's choice, so this is one likely assignment). Both
// are nil when s.Aggregates is 0: many aggregates, even shares.
func relayLoads(s Scenario, active int) (loads []float64, aggs []int) {
	if s.Aggregates <= 0 || active <= 0 {
		return nil, nil
	}
	aggs = make([]int, active)
	for i := range s.Aggregates {
		p := dialects.PartitionOf("order", "agg-"+strconv.Itoa(i), s.Partitions)
		aggs[p%active]++
	}
	loads = make([]float64, active)
	for r, a := range aggs {
		loads[r] = float64(a) / float64(s.Aggregates)
	}
	return loads, aggs
}
