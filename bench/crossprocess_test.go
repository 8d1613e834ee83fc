package bench

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/dialects/mysql"
	"github.com/jitoutbox/jitoutbox/dialects/postgres"
	"github.com/jitoutbox/jitoutbox/internal/e2e/relayproc"
	"github.com/jitoutbox/jitoutbox/internal/testdb"
	"github.com/jitoutbox/jitoutbox/internal/testnats"
	"github.com/jitoutbox/jitoutbox/notify"
	"github.com/jitoutbox/jitoutbox/notify/natsnotify"
	"github.com/jitoutbox/jitoutbox/notify/pgnotify"
	"github.com/jitoutbox/jitoutbox/relay/natspub"
	"github.com/jitoutbox/jitoutbox/txoutbox"
)

// BenchmarkCrossProcessLatency measures commit-to-receive latency across
// processes: this process commits one time-critical event at a time through
// txoutbox with a cross-process notifier; a jitoutbox-relay process (polling
// only hourly) is woken, reads the row and publishes it to JetStream, where
// this process's consumer receives it. The clock runs from Commit returning
// to the consumer's callback. PostgreSQL uses LISTEN/NOTIFY
// (pgnotify.Notifier, NOTIFY after commit); MariaDB uses a NATS wake.
func BenchmarkCrossProcessLatency(b *testing.B) {
	bin := relayproc.BuildT(b)
	for _, name := range []string{"postgres-listen", "mariadb-nats"} {
		b.Run(name, func(b *testing.B) {
			url := testnats.URL(b)
			nc := testnats.Connect(b, url)
			js, err := jetstream.New(nc)
			if err != nil {
				b.Fatal(err)
			}
			stream, prefix := testnats.Stream(b, js)
			var (
				db *sql.DB
				d  dialects.Dialect
				n  interface {
					notify.Notifier
					Run(context.Context) error
				}
				args []string
			)
			switch name {
			case "postgres-listen":
				var dsn string
				db, dsn = testdb.Postgres(b, "postgres")
				d, err = postgres.New()
				channel := testnats.RandomName("jit_bench_")
				n, err = pgnotify.NewNotifier(db, pgnotify.WithChannel(channel))
				if err != nil {
					b.Fatal(err)
				}
				args = []string{"-dialect", "postgres", "-dsn", dsn, "-wake", "pg", "-wake-channel", channel}
			default:
				var dsn string
				db, dsn = testdb.MySQL(b)
				d, err = mysql.New()
				subject := testnats.RandomName("jitbench.")
				n, err = natsnotify.NewNotifier(nc, natsnotify.WithSubject(subject))
				if err != nil {
					b.Fatal(err)
				}
				args = []string{"-dialect", "mysql", "-dsn", dsn, "-wake", "nats", "-wake-subject", subject}
			}
			if err != nil {
				b.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			b.Cleanup(wg.Wait)
			b.Cleanup(cancel)
			if err := d.Migrate(ctx, db); err != nil {
				b.Fatal(err)
			}
			wg.Add(1)
			go func() { defer wg.Done(); _ = n.Run(ctx) }()
			ob, err := txoutbox.New(db, d, txoutbox.WithNotifier(n))
			if err != nil {
				b.Fatal(err)
			}

			arrived := make(chan string, 64)
			cons, err := stream.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{})
			if err != nil {
				b.Fatal(err)
			}
			cc, err := cons.Consume(func(m jetstream.Msg) {
				select {
				case arrived <- m.Headers().Get(natspub.HeaderEventID):
				case <-ctx.Done():
				}
			})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(cc.Stop)

			p := relayproc.Start(b, bin, append(args, "-nats", url, "-subject-prefix", prefix, "-poll", "1h", "-log-level", "info")...)
			if err := p.Log.Wait(30*time.Second, 1, `"wake source ready"`); err != nil {
				b.Fatal(err)
			}
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				tx, err := ob.Begin(ctx, nil, txoutbox.TimeCritical())
				if err != nil {
					b.Fatal(err)
				}
				id, err := tx.Add(txoutbox.Event{AggregateType: "order", AggregateID: fmt.Sprint(i), EventType: "placed", Payload: payload})
				if err != nil {
					b.Fatal(err)
				}
				if err := tx.Commit(); err != nil {
					b.Fatal(err)
				}
				committed := time.Now()
				timeout := time.NewTimer(20 * time.Second)
			wait:
				for {
					select {
					case got := <-arrived:
						if got == id {
							lat = append(lat, time.Since(committed))
							break wait
						}
					case <-timeout.C:
						b.Fatalf("event %d not delivered within 20s (relay polls hourly: the wake was lost)", i)
					}
				}
				timeout.Stop()
			}
			b.StopTimer()
			slices.Sort(lat)
			pct := func(q float64) float64 {
				return float64(lat[min(len(lat)-1, int(q*float64(len(lat))))].Microseconds()) / 1000
			}
			b.ReportMetric(pct(0.50), "p50-ms")
			b.ReportMetric(pct(0.99), "p99-ms")
			b.ReportMetric(float64(lat[len(lat)-1].Microseconds())/1000, "max-ms")
		})
	}
}

// wakeVariant is one way of waking relays after a time-critical commit.
type wakeVariant struct {
	name string
	// notifier returns the txoutbox notifier (nil: none) and starts what it
	// needs (its Run loop, a listener so NOTIFYs are really delivered).
	notifier func(b *testing.B, ctx context.Context, wg *sync.WaitGroup, db *sql.DB) notify.Notifier
}

func crossProcessVariants(natsURL string) []wakeVariant {
	listenPG := func(b *testing.B, ctx context.Context, wg *sync.WaitGroup, channel string) {
		l, err := pgnotify.NewListener(testdb.PostgresDSN(b), pgnotify.WithChannel(channel))
		if err != nil {
			b.Fatal(err)
		}
		drainWakes(b, ctx, wg, l)
	}
	return []wakeVariant{
		{"none", func(*testing.B, context.Context, *sync.WaitGroup, *sql.DB) notify.Notifier { return nil }},
		{"notify-after-commit", func(b *testing.B, ctx context.Context, wg *sync.WaitGroup, db *sql.DB) notify.Notifier {
			ch := testnats.RandomName("jit_b_")
			listenPG(b, ctx, wg, ch)
			n, err := pgnotify.NewNotifier(db, pgnotify.WithChannel(ch))
			if err != nil {
				b.Fatal(err)
			}
			wg.Add(1)
			go func() { defer wg.Done(); _ = n.Run(ctx) }()
			return n
		}},
		{"notify-in-tx", func(b *testing.B, ctx context.Context, wg *sync.WaitGroup, _ *sql.DB) notify.Notifier {
			ch := testnats.RandomName("jit_b_")
			listenPG(b, ctx, wg, ch)
			n, err := pgnotify.NewTxNotifier(pgnotify.WithChannel(ch))
			if err != nil {
				b.Fatal(err)
			}
			return n
		}},
		{"nats-wake", func(b *testing.B, ctx context.Context, wg *sync.WaitGroup, _ *sql.DB) notify.Notifier {
			nc := testnats.Connect(b, natsURL)
			subject := testnats.RandomName("jitb.")
			l, err := natsnotify.NewListener(testnats.Connect(b, natsURL), natsnotify.WithSubject(subject))
			if err != nil {
				b.Fatal(err)
			}
			drainWakes(b, ctx, wg, l)
			n, err := natsnotify.NewNotifier(nc, natsnotify.WithSubject(subject))
			if err != nil {
				b.Fatal(err)
			}
			wg.Add(1)
			go func() { defer wg.Done(); _ = n.Run(ctx) }()
			return n
		}},
	}
}

// drainWakes listens on s and throws the wakes away (a stand-in relay).
func drainWakes(b *testing.B, ctx context.Context, wg *sync.WaitGroup, s notify.Source) {
	w := notify.NewWakes()
	if err := s.Listen(ctx, w); err != nil {
		b.Fatal(err)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-ctx.Done():
				return
			case <-w.C():
				w.Take()
			}
		}
	}()
}

// BenchmarkCrossProcessCommit measures what the cross-process wake costs the
// committing side: time-critical commits per second (one business INSERT,
// one event) with 1 and 8 writers, for no cross-process wake, NOTIFY after
// commit (pgnotify.Notifier, the default), NOTIFY inside the transaction
// (pgnotify.TxNotifier) and a NATS wake (natsnotify.Notifier). The variants
// run side by side, alternating inside every iteration (each iteration runs
// 32 commits per variant), so the machine's noise hits all alike; each
// reports commits/s and its ratio to "none". Every wake has a listener, so
// NOTIFYs are really queued and delivered.
func BenchmarkCrossProcessCommit(b *testing.B) {
	const perRound = 32
	for _, setup := range []struct {
		name     string
		open     func(*testing.B) *commitDB
		variants []string
	}{
		{"postgres", setupPostgres, []string{"none", "notify-after-commit", "notify-in-tx", "nats-wake"}},
		{"mysql", setupMySQL, []string{"none", "nats-wake"}},
	} {
		b.Run(setup.name, func(b *testing.B) {
			c := setup.open(b)
			natsURL := testnats.URL(b)
			var seq atomic.Int64 // keys stay unique across b.N rounds
			for _, writers := range []int{1, 8} {
				b.Run(fmt.Sprintf("writers-%d", writers), func(b *testing.B) {
					ctx, cancel := context.WithCancel(context.Background())
					var wg sync.WaitGroup
					defer wg.Wait()
					defer cancel()
					c.db.SetMaxIdleConns(writers + 4)
					obs := map[string]*txoutbox.Outbox{}
					for _, v := range crossProcessVariants(natsURL) {
						if !slices.Contains(setup.variants, v.name) {
							continue
						}
						var opts []txoutbox.Option
						if n := v.notifier(b, ctx, &wg, c.db); n != nil {
							opts = append(opts, txoutbox.WithNotifier(n))
						}
						ob, err := txoutbox.New(c.db, c.dialect, opts...)
						if err != nil {
							b.Fatal(err)
						}
						obs[v.name] = ob
					}
					elapsed := map[string]time.Duration{}
					b.ResetTimer()
					for i := 0; i < b.N; i++ {
						for _, name := range setup.variants {
							t0 := time.Now()
							if err := commitParallel(ctx, c, obs[name], writers, perRound, &seq); err != nil {
								b.Fatal(err)
							}
							elapsed[name] += time.Since(t0)
						}
					}
					b.StopTimer()
					commits := float64(b.N * perRound)
					for _, name := range setup.variants {
						b.ReportMetric(commits/elapsed[name].Seconds(), name+"-commits/s")
						if name != "none" {
							// > 1 means faster than no wake, < 1 slower.
							b.ReportMetric(elapsed["none"].Seconds()/elapsed[name].Seconds(), name+"/none")
						}
					}
				})
			}
		})
	}
}

// commitParallel runs total time-critical commits spread over writers
// goroutines.
func commitParallel(ctx context.Context, c *commitDB, ob *txoutbox.Outbox, writers, total int, seq *atomic.Int64) error {
	var (
		wg    sync.WaitGroup
		errMu sync.Mutex
		first error
	)
	for w := 0; w < writers; w++ {
		share := total / writers
		if w < total%writers {
			share++
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < share; j++ {
				if err := commitOne(ctx, c, ob, fmt.Sprintf("x-%d", seq.Add(1))); err != nil {
					errMu.Lock()
					if first == nil {
						first = err
					}
					errMu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	return first
}

func commitOne(ctx context.Context, c *commitDB, ob *txoutbox.Outbox, key string) error {
	tx, err := ob.Begin(ctx, nil, txoutbox.TimeCritical())
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, "INSERT INTO orders (id, total_cents) VALUES ("+c.ph(1)+", "+c.ph(2)+")", key, 12345); err != nil {
		return err
	}
	if _, err := tx.Add(txoutbox.Event{AggregateType: "order", AggregateID: key, EventType: "order.placed",
		Payload: payload, ContentType: "application/json"}); err != nil {
		return err
	}
	return tx.Commit()
}
