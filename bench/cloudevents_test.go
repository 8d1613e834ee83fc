package bench

import (
	"flag"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jitoutbox/jitoutbox/internal/testnats"
	"github.com/jitoutbox/jitoutbox/relay"
	"github.com/jitoutbox/jitoutbox/relay/cloudevents"
	"github.com/jitoutbox/jitoutbox/relay/natspub"
)

var (
	ceDBs    = flag.String("cloudevents.dbs", "postgres", "databases of BenchmarkDrainCloudEvents (postgres, postgres-pgx, mysql, sqlite)")
	ceRounds = flag.Int("cloudevents.rounds", 6, "rounds of BenchmarkDrainCloudEvents; each drains the backlog once per shape, the order alternating")
)

// BenchmarkDrainCloudEvents drains the same backlog (-drain.events over
// -drain.aggregates, 1 relay, batch 500, rows marked) to JetStream with
// natspub's default shape and with its CloudEvents option in binary and
// structured mode, side by side in one run: -cloudevents.rounds rounds, each
// draining once per shape, the order reversed every other round so that a
// drift of the machine weighs on every shape alike. It reports each
// shape's events/s over all its drains, the ratios binary/default and
// structured/default of those, the median over the rounds of each round's
// own ratio (<shape>/default-median: the drains of one round ran back to
// back, so on a machine shared with other work it is the steadier figure),
// and each shape's CPU per event.
func BenchmarkDrainCloudEvents(b *testing.B) {
	shapes := []struct {
		name string
		opts []natspub.Option
	}{
		{"default", nil},
		{"binary", []natspub.Option{natspub.CloudEvents("https://orders.example.com", cloudevents.Binary)}},
		{"structured", []natspub.Option{natspub.CloudEvents("https://orders.example.com", cloudevents.Structured)}},
	}
	for _, dbName := range strings.Split(*ceDBs, ",") {
		b.Run(dbName+"/jetstream/relays=1/batch=500", func(b *testing.B) {
			bd := openBenchDB(b, dbName)
			_, js := benchJetStream(b)
			bl := backlog{*drainEvents, *drainAggregates}
			events := make([]int, len(shapes))
			spent := make([]time.Duration, len(shapes))
			cpus := make([]cpuMeter, len(shapes))
			roundRatios := make([][]float64, len(shapes))
			for round := range *ceRounds {
				roundRates := make([]float64, len(shapes))
				for k := range shapes {
					i := k
					if round%2 == 1 {
						i = len(shapes) - 1 - k
					}
					pub := ceBenchPublisher(b, js, shapes[i].opts...)
					rate := drain(b, bd, pub, bl, 1, 500, false, &cpus[i])
					n := bl.events * b.N
					events[i] += n
					spent[i] += time.Duration(float64(n) / rate * float64(time.Second))
					roundRates[i] = rate
				}
				b.Logf("round %d events/s: default %.0f, binary %.0f, structured %.0f", round+1, roundRates[0], roundRates[1], roundRates[2])
				for i := range shapes[1:] {
					roundRatios[i+1] = append(roundRatios[i+1], roundRates[i+1]/roundRates[0])
				}
			}
			rates := make([]float64, len(shapes))
			for i, s := range shapes {
				rates[i] = float64(events[i]) / spent[i].Seconds()
				b.ReportMetric(rates[i], s.name+"-events/s")
				cpus[i].report(b, s.name+"-", "event")
			}
			for i, s := range shapes[1:] {
				b.ReportMetric(rates[i+1]/rates[0], s.name+"/default")
				b.ReportMetric(median(roundRatios[i+1]), s.name+"/default-median")
			}
			b.ReportMetric(0, "ns/op")
		})
	}
}

// ceBenchPublisher returns a JetStream publisher with opts to a fresh
// file-storage stream.
func ceBenchPublisher(b *testing.B, js jetstream.JetStream, opts ...natspub.Option) relay.Publisher {
	b.Helper()
	_, prefix := testnats.Stream(b, js, func(c *jetstream.StreamConfig) { c.Storage = jetstream.FileStorage })
	pub, err := natspub.NewJetStream(js, append(opts, natspub.WithSubjectPrefix(prefix))...)
	if err != nil {
		b.Fatal(fmt.Errorf("bench: %w", err))
	}
	return pub
}

// median returns the median of xs (the mean of the middle two for an even
// count); xs is sorted in place.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	slices.Sort(xs)
	if n := len(xs); n%2 == 0 {
		return (xs[n/2-1] + xs[n/2]) / 2
	}
	return xs[len(xs)/2]
}
