package bench

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/internal/testdb"
	"github.com/jitoutbox/jitoutbox/relay"
)

var joinTrials = flag.Int("join.trials", 5, "joins BenchmarkJoin measures per database")

// BenchmarkJoin measures how soon a relay that joins a lone relay takes
// partitions, on every database target (SQLite, PostgreSQL with lib/pq and
// with pgx, MariaDB). Each trial starts a relay with the default config
// (30 s rebalance), waits until it owns every partition, starts a second
// one, and measures from that start until the second relay owns a
// partition (first-*-ms) and until it owns its share (share-*-ms). Nothing
// is published: the table is empty. -join.trials trials per database.
func BenchmarkJoin(b *testing.B) {
	for _, tgt := range testdb.Targets() {
		b.Run(tgt.Name, func(b *testing.B) {
			ctx := context.Background()
			db, _ := tgt.Open(b)
			d := testdb.NewDialect(b, tgt.Dialect)
			if err := d.Migrate(ctx, db); err != nil {
				b.Fatal(err)
			}
			parts, err := d.Partitions(ctx, db)
			if err != nil {
				b.Fatal(err)
			}
			var first, share []time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				for trial := range *joinTrials {
					f, s := joinTrial(b, db, d, parts, fmt.Sprintf("join-%d-%d", i, trial))
					first = append(first, f)
					share = append(share, s)
				}
			}
			b.StopTimer()
			ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
			slices.Sort(first)
			slices.Sort(share)
			b.ReportMetric(ms(first[len(first)/2]), "first-p50-ms")
			b.ReportMetric(ms(first[len(first)-1]), "first-max-ms")
			b.ReportMetric(ms(share[len(share)/2]), "share-p50-ms")
			b.ReportMetric(ms(share[len(share)-1]), "share-max-ms")
			b.ReportMetric(float64(len(first)), "trials")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// joinTrial runs one join next to a lone relay and returns the time from
// the joiner's start until it owns a partition and until it owns its share.
func joinTrial(b *testing.B, db *sql.DB, d dialects.Dialect, parts int, name string) (first, share time.Duration) {
	quiet := slog.New(slog.DiscardHandler)
	discard := relay.PublisherFunc(func(context.Context, []relay.Message, []error) {})
	run := func(owner string) (*relay.Relay, func()) {
		rl, err := relay.New(db, d, discard, relay.Config{Owner: owner, Logger: quiet, Retention: -1})
		if err != nil {
			b.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- rl.Run(ctx) }()
		return rl, func() {
			cancel()
			if err := <-done; err != nil {
				b.Error(err)
			}
		}
	}
	owned := func(rl *relay.Relay) int {
		n := 0
		for p := range parts {
			if rl.Owns(p) {
				n++
			}
		}
		return n
	}
	waitFor := func(what string, since time.Time, cond func() bool) time.Duration {
		for until := since.Add(60 * time.Second); !cond(); time.Sleep(200 * time.Microsecond) {
			if time.Now().After(until) {
				b.Fatalf("join: no %s after 60s", what)
			}
		}
		return time.Since(since)
	}
	alone, stopAlone := run(name + "-alone")
	defer stopAlone()
	waitFor("lone relay owning every partition", time.Now(), func() bool { return owned(alone) == parts })
	start := time.Now()
	joiner, stopJoiner := run(name + "-joiner")
	defer stopJoiner()
	first = waitFor("partition taken by the joiner", start, func() bool { return owned(joiner) > 0 })
	share = waitFor("share taken by the joiner", start, func() bool { return owned(joiner) >= parts/2 })
	return first, share
}
