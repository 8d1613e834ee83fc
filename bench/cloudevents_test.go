package bench

import (
	"flag"
	"fmt"
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
	ceRounds = flag.Int("cloudevents.rounds", 2, "rounds of BenchmarkDrainCloudEvents; each drains the backlog once per shape, the order alternating")
)

// BenchmarkDrainCloudEvents drains the same backlog (-drain.events over
// -drain.aggregates, 1 relay, batch 500, rows marked) to JetStream with
// natspub's default shape and with its CloudEvents option in binary and
// structured mode, side by side in one run: -cloudevents.rounds rounds, each
// draining once per shape, the order reversed every other round so that a
// drift of the machine weighs on every shape alike. It reports each
// shape's events/s over all its drains, the ratios binary/default and
// structured/default, and each shape's CPU per event.
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
			for round := range *ceRounds {
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
					b.Logf("round %d %s: %.0f events/s", round+1, shapes[i].name, rate)
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
