package bench

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/dialects/mysql"
	"github.com/jitoutbox/jitoutbox/dialects/postgres"
	"github.com/jitoutbox/jitoutbox/dialects/sqlite"
	"github.com/jitoutbox/jitoutbox/internal/sqlcount"
	"github.com/jitoutbox/jitoutbox/internal/testdb"
	"github.com/jitoutbox/jitoutbox/internal/testnats"
	"github.com/jitoutbox/jitoutbox/relay"
	"github.com/jitoutbox/jitoutbox/relay/natspub"
	"github.com/jitoutbox/jitoutbox/txoutbox"
)

var (
	idleDuration = flag.Duration("idle.duration", 65*time.Second,
		"window BenchmarkIdle counts statements over with the default config (at least two 30 s polls; the 100 ms poller uses min(this, 10s))")
	idleWarmup = flag.Duration("idle.warmup", time.Second, "time BenchmarkIdle lets a relay run its start-up cycle and cleanup before counting")
	idleTrace  = flag.Bool("idle.trace", false, "BenchmarkIdle logs (with -v) each statement of the counted window, with its time into the window")
)

// BenchmarkIdle counts the statements (and BEGIN/COMMIT/ROLLBACK) an idle
// relay sends, through a counting driver (internal/sqlcount), ownership
// upkeep included (its session, rebalance reads, lease renewals on SQLite),
// with the default config (wired to an Outbox with txoutbox.WithRelay, 30 s
// safety-net poll, 30 s rebalance) and with a 100 ms poller. The start-up
// cycle, the first take of partitions and cleanup are counted apart
// (startup-stmts). Run it with -benchtime=1x.
func BenchmarkIdle(b *testing.B) {
	for _, dbName := range []string{"postgres", "mysql", "sqlite"} {
		b.Run(dbName, func(b *testing.B) {
			var (
				dsn, driver string
				d           dialects.Dialect
				err         error
			)
			switch dbName {
			case "postgres":
				_, dsn = testdb.Postgres(b, "postgres")
				driver = "postgres"
				d, err = postgres.New()
			case "mysql":
				_, dsn = testdb.MySQL(b)
				driver = "mysql"
				d, err = mysql.New()
			case "sqlite":
				_, dsn = testdb.SQLite(b)
				driver = "sqlite"
				d, err = sqlite.New()
			}
			if err != nil {
				b.Fatal(err)
			}
			counter := &sqlcount.Counter{}
			var trace struct {
				sync.Mutex
				start time.Time // zero: not in a counted window
				lines []string
			}
			if *idleTrace {
				counter.BeforeStatement = func(q string) {
					trace.Lock()
					defer trace.Unlock()
					if !trace.start.IsZero() {
						q = strings.Join(strings.Fields(q), " ")
						trace.lines = append(trace.lines, fmt.Sprintf("%7.3fs %.100s", time.Since(trace.start).Seconds(), q))
					}
				}
			}
			db, err := sqlcount.Open(driver, dsn, counter)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { db.Close() })
			if err := d.Migrate(context.Background(), db); err != nil {
				b.Fatal(err)
			}
			nc := testnats.Connect(b, testnats.URL(b))
			js, err := jetstream.New(nc)
			if err != nil {
				b.Fatal(err)
			}
			_, prefix := testnats.Stream(b, js)
			pub, err := natspub.NewJetStream(js, natspub.WithSubjectPrefix(prefix))
			if err != nil {
				b.Fatal(err)
			}
			for _, c := range []struct {
				name   string
				cfg    func() relay.Config
				window time.Duration
			}{
				{"default", func() relay.Config { return relay.Config{} }, *idleDuration},
				{"poll-100ms", func() relay.Config {
					return relay.Config{PollInterval: 100 * time.Millisecond}
				}, min(*idleDuration, 10*time.Second)},
			} {
				b.Run(c.name, func(b *testing.B) {
					for i := 0; i < b.N; i++ {
						rl, err := relay.New(db, d, pub, c.cfg())
						if err != nil {
							b.Fatal(err)
						}
						// Wired as an application wires it; nothing commits.
						if _, err := txoutbox.New(db, d, txoutbox.WithRelay(rl)); err != nil {
							b.Fatal(err)
						}
						ctx, cancel := context.WithCancel(context.Background())
						done := make(chan error, 1)
						before := counter.Total()
						go func() { done <- rl.Run(ctx) }()
						// Measurement windows, not synchronisation: the
						// relay runs on its own clock.
						time.Sleep(*idleWarmup)
						trace.Lock()
						trace.start, trace.lines = time.Now(), nil
						start := counter.Total()
						trace.Unlock()
						time.Sleep(c.window)
						trace.Lock()
						end := counter.Total()
						lines := trace.lines
						trace.start = time.Time{}
						trace.Unlock()
						if *idleTrace {
							b.Logf("%d statements and transaction commands in the window; statements (BEGIN/COMMIT not listed):\n%s",
								end-start, strings.Join(lines, "\n"))
						}
						cancel()
						if err := <-done; err != nil {
							b.Fatal(err)
						}
						b.ReportMetric(float64(end-start)/c.window.Seconds(), "stmts/s")
						b.ReportMetric(float64(start-before), "startup-stmts")
						b.ReportMetric(c.window.Seconds(), "window-s")
					}
				})
			}
		})
	}
}
