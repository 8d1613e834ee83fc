package bench

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/relay"
)

// BenchmarkScheduledDrain compares, side by side in -schedule.rounds rounds
// (the order alternating), two drains of -schedule.events events over
// -schedule.aggregates aggregates by one relay with the default config
// (batch 500) to JetStream, each drain in a fresh database written in
// 1,000-event transactions: "scheduled", every event with the same
// NotBefore, the relay started after the writes and idle until they fall
// due, rate = events / (the last publish - the due time, on the
// database's clock); and "ordinary", the same events unscheduled, rate =
// events / the time from the relay's start to the last publish (as
// BenchmarkDrain). It reports each kind's rate over all its drains, their
// ratio, the median of the rounds' own ratios, the statements (and
// BEGIN/COMMIT) per 1,000 events from relay start to the last publish
// (internal/sqlcount), and how long after the due time the first batch
// was published. Command:
//
//	go test -run '^$' -bench '^BenchmarkScheduledDrain$' -benchtime=1x -v ./bench/
func BenchmarkScheduledDrain(b *testing.B) {
	for _, dbName := range strings.Split(*schedDBs, ",") {
		b.Run(dbName+"/jetstream", func(b *testing.B) {
			nc, js := benchJetStream(b)
			n := *schedEvents
			var (
				spent      [2]time.Duration // scheduled, ordinary
				stmts      [2]int64
				ratios     []float64
				firstAfter []float64
				seedTime   time.Duration
			)
			for range b.N {
				for round := range *schedRounds {
					var rates [2]float64
					for k := range 2 {
						kind := k
						if round%2 == 1 {
							kind = 1 - k
						}
						pub := benchPublisher(b, js, nc, "jetstream")
						var d time.Duration
						var s int64
						if kind == 0 {
							var first time.Duration
							d, s, first, seedTime = schedDrainScheduled(b, dbName, pub, n, seedTime)
							firstAfter = append(firstAfter, float64(first)/1e6)
						} else {
							d, s = schedDrainOrdinary(b, dbName, pub, n)
						}
						spent[kind] += d
						stmts[kind] += s
						rates[kind] = float64(n) / d.Seconds()
					}
					b.Logf("round %d events/s: scheduled %.0f, ordinary %.0f, ratio %.3f", round+1, rates[0], rates[1], rates[0]/rates[1])
					ratios = append(ratios, rates[0]/rates[1])
				}
			}
			drains := float64(b.N * *schedRounds)
			sched := drains * float64(n) / spent[0].Seconds()
			ord := drains * float64(n) / spent[1].Seconds()
			b.ReportMetric(sched, "scheduled-events/s")
			b.ReportMetric(ord, "ordinary-events/s")
			b.ReportMetric(sched/ord, "scheduled/ordinary")
			b.ReportMetric(median(ratios), "scheduled/ordinary-median")
			b.ReportMetric(float64(stmts[0])/drains/float64(n)*1000, "scheduled-stmts/1k-events")
			b.ReportMetric(float64(stmts[1])/drains/float64(n)*1000, "ordinary-stmts/1k-events")
			b.ReportMetric(median(firstAfter), "first-after-due-ms")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// schedDrainOrdinary seeds n unscheduled events in a fresh database,
// drains them with one relay and returns the time from its start to the
// last publish and the statements it sent meanwhile.
func schedDrainOrdinary(b *testing.B, dbName string, pub relay.Publisher, n int) (time.Duration, int64) {
	bd, counter := countedDB(b, dbName)
	defer bd.db.Close() // the next drain has its own database
	t0 := time.Now()
	seedScheduled(b, bd, n, *schedAggs, 1000, nil)
	analyze(b, bd)
	b.Logf("ordinary drain: %d events written in %v", n, time.Since(t0).Round(time.Millisecond))
	pc := &publishedCounter{target: int64(n), done: make(chan struct{})}
	stop := schedStartRelay(b, bd, pub, pc)
	defer stop()
	start, before := time.Now(), counter.Total()
	schedWaitDrained(b, pc, n)
	return time.Since(start), counter.Total() - before
}

// schedDrainScheduled seeds n events in a fresh database, all due at one
// moment far enough ahead for the writes (prevSeed, the last seeding's
// duration, sizes it) to end and the relay to start and go idle before it;
// it returns the time from the due time to the last publish, the
// statements the relay sent from its start to then, how long after the due
// time the first batch was published, and this seeding's duration.
func schedDrainScheduled(b *testing.B, dbName string, pub relay.Publisher, n int, prevSeed time.Duration) (span time.Duration, stmts int64, first, seedTime time.Duration) {
	bd, counter := countedDB(b, dbName)
	defer bd.db.Close() // the next drain has its own database
	offset, _ := dbOffset(b, bd)
	lead := 3*time.Second + prevSeed*3/2
	if prevSeed == 0 {
		lead = 3*time.Second + time.Duration(n)*time.Second/2000
	}
	t0 := time.Now()
	due := t0.Add(offset + lead).UTC().Truncate(time.Microsecond)
	seedScheduled(b, bd, n, *schedAggs, 1000, func(_ int, ev *dialects.Event) { ev.NotBefore = due })
	analyze(b, bd)
	seedTime = time.Since(t0)
	b.Logf("scheduled drain: %d events written in %v", n, seedTime.Round(time.Millisecond))
	pc := &publishedCounter{target: int64(n), done: make(chan struct{})}
	fh := &firstHook{publishedCounter: pc}
	stop := schedStartRelay(b, bd, pub, fh)
	defer stop()
	before := counter.Total()
	if left := due.Sub(time.Now().Add(offset)); left < time.Second {
		b.Fatalf("scheduled drain: the writes ended %v before the due time, want at least 1s", left)
	}
	schedWaitDrained(b, pc, n)
	end := time.Now().Add(offset)
	stmts = counter.Total() - before
	if f := fh.first.Load(); f != nil {
		first = f.Add(offset).Sub(due)
	}
	if first < 0 {
		b.Fatalf("scheduled drain: the first batch was published %v before its due time", -first)
	}
	return end.Sub(due), stmts, first, seedTime
}

// analyze refreshes the table's statistics after seeding, as seed does.
func analyze(b *testing.B, bd *benchDB) {
	q := map[string]string{"postgres": "ANALYZE ", "postgres-pgx": "ANALYZE ", "mysql": "ANALYZE TABLE "}[bd.name]
	if q == "" {
		return
	}
	rows, err := bd.db.QueryContext(context.Background(), q+bd.dialect.Table())
	if err != nil {
		b.Fatal(err)
	}
	rows.Close()
}

// firstHook is a publishedCounter that also records when the first batch
// ended.
type firstHook struct {
	*publishedCounter
	first atomic.Pointer[time.Time]
}

func (h *firstHook) BatchEnd(ctx context.Context, info relay.BatchEndInfo) {
	if info.Published > 0 {
		now := time.Now()
		h.first.CompareAndSwap(nil, &now)
	}
	h.publishedCounter.BatchEnd(ctx, info)
}

// schedStartRelay runs a relay with the default config and hooks, and
// returns the function that stops it.
func schedStartRelay(b *testing.B, bd *benchDB, pub relay.Publisher, hooks relay.Hooks) (stop func()) {
	rl, err := relay.New(bd.db, bd.dialect, pub, relay.Config{Hooks: hooks})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- rl.Run(ctx) }()
	return func() {
		cancel()
		if err := <-done; err != nil {
			b.Error(err)
		}
	}
}

// schedWaitDrained waits until pc has seen n events published.
func schedWaitDrained(b *testing.B, pc *publishedCounter, n int) {
	select {
	case <-pc.done:
	case <-time.After(10 * time.Minute):
		b.Fatalf("drain: %d of %d published after 10 minutes", pc.n.Load(), n)
	}
}
