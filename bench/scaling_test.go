package bench

import (
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jitoutbox/jitoutbox/internal/testnats"
)

// BenchmarkDrainScaling runs, back to back in one sub-benchmark per
// database and mode, on the same backlog (-limits.events over
// -drain.aggregates aggregates) and broker: the bare serial loop with one
// worker (claim 500 FOR UPDATE SKIP LOCKED, async publish, await acks,
// mark, COMMIT), the partition serial loop with one worker (the dialect's
// session, Read and fenced Mark), and the relay with 1, 2 and 4 relays
// (batch 500). It reports each rate and the ratios the partitions issue
// sets targets for: drain1/serial (>= 1.0), drain2/drain1 (>= 1.2) and
// drain4/drain1 (never below 1), plus drain1/part (what the relay adds to
// the bare use of the dialect).
func BenchmarkDrainScaling(b *testing.B) {
	for _, dbName := range []string{"postgres", "mysql"} {
		b.Run(dbName, func(b *testing.B) {
			bd := openBenchDB(b, dbName)
			nc, js := benchJetStream(b)
			for _, mode := range []string{"update", "delete"} {
				b.Run(mode, func(b *testing.B) {
					del := mode == "delete"
					var serialCPU, partCPU cpuMeter
					_, prefix := testnats.Stream(b, js, func(c *jetstream.StreamConfig) { c.Storage = jetstream.FileStorage })
					serial := bareClaimMark(b, bd, 1, del, &barePublish{js: js, prefix: prefix}, &serialCPU)
					part := partitionClaimMark(b, bd, 1, del, &barePublish{js: js, prefix: prefix}, &partCPU)
					var rates [5]float64
					var cpus [5]cpuMeter
					for _, relays := range []int{1, 2, 4} {
						pub := benchPublisher(b, js, nc, "jetstream")
						rates[relays] = drain(b, bd, pub, backlog{*limitsEvents, *drainAggregates}, relays, limitsBatch, del, &cpus[relays])
					}
					b.ReportMetric(serial, "serial-events/s")
					b.ReportMetric(part, "part-events/s")
					b.ReportMetric(rates[1], "relays1-events/s")
					b.ReportMetric(rates[2], "relays2-events/s")
					b.ReportMetric(rates[4], "relays4-events/s")
					b.ReportMetric(rates[1]/serial, "drain1/serial")
					b.ReportMetric(rates[1]/part, "drain1/part")
					b.ReportMetric(rates[2]/rates[1], "drain2/drain1")
					b.ReportMetric(rates[4]/rates[1], "drain4/drain1")
					serialCPU.report(b, "serial-", "event")
					partCPU.report(b, "part-", "event")
					cpus[1].report(b, "relays1-", "event")
					cpus[2].report(b, "relays2-", "event")
					cpus[4].report(b, "relays4-", "event")
					b.ReportMetric(0, "ns/op")
				})
			}
		})
	}
}
