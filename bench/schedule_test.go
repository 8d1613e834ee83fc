package bench

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/internal/sqlcount"
	"github.com/jitoutbox/jitoutbox/internal/testnats"
	"github.com/jitoutbox/jitoutbox/notify"
	"github.com/jitoutbox/jitoutbox/relay"
	"github.com/jitoutbox/jitoutbox/relay/natspub"
	"github.com/jitoutbox/jitoutbox/txoutbox"
)

var (
	schedDBs    = flag.String("schedule.dbs", "postgres", "databases of the BenchmarkScheduled* benchmarks (postgres, postgres-pgx, mysql, sqlite)")
	schedWindow = flag.Duration("schedule.window", 65*time.Second, "window BenchmarkScheduledIdle counts statements over, per table state (at least two 30 s polls)")
	schedRows   = flag.Int("schedule.rows", 100_000, "events BenchmarkScheduledIdle schedules 1-2 h ahead")
	schedDue    = flag.Int("schedule.due", 200, "events BenchmarkScheduledDue schedules, 40 ms apart from 2 s ahead")
	schedEvents = flag.Int("schedule.events", 100_000, "events of each drain of BenchmarkScheduledDrain")
	schedAggs   = flag.Int("schedule.aggregates", 1_000, "aggregates the events of BenchmarkScheduledDrain are spread over")
	schedRounds = flag.Int("schedule.rounds", 4, "rounds of BenchmarkScheduledDrain; each drains once scheduled and once ordinary, the order alternating")
	schedTrace  = flag.Bool("schedule.trace", false, "BenchmarkScheduledDue logs (with -v) each event's due time into the run and latency, in due order")
)

// countedDB opens an isolated database of the named kind, migrated, whose
// connections go through a counting driver (internal/sqlcount).
func countedDB(b *testing.B, name string) (*benchDB, *sqlcount.Counter) {
	raw, d, dsn := openDBDSN(b, name, 16)
	raw.SetMaxIdleConns(0) // only the counted pool keeps connections
	driver := map[string]string{"postgres": "postgres", "postgres-pgx": "pgx", "mysql": "mysql", "sqlite": "sqlite"}[name]
	counter := &sqlcount.Counter{}
	db, err := sqlcount.Open(driver, dsn, counter)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	conns := 16
	if name == "sqlite" {
		conns = 1 // sqlite.MaxOpenConns, as openDBDSN sets it
	}
	db.SetMaxOpenConns(conns)
	db.SetMaxIdleConns(conns)
	return &benchDB{name: name, db: db, dialect: d}, counter
}

// seedScheduled writes n events round-robin over aggs aggregates, perTx
// per transaction through the dialect's Insert; schedule sets the i-th
// event's NotBefore or Delay (nil: an ordinary backlog).
func seedScheduled(b *testing.B, bd *benchDB, n, aggs, perTx int, schedule func(i int, ev *dialects.Event)) {
	ctx := context.Background()
	parts, err := bd.dialect.Partitions(ctx, bd.db)
	if err != nil {
		b.Fatal(err)
	}
	events := make([]dialects.Event, 0, perTx)
	for done := 0; done < n; {
		events = events[:0]
		now := time.Now().UTC().Truncate(time.Microsecond)
		for ; len(events) < perTx && done < n; done++ {
			agg := "agg-" + strconv.Itoa(done%aggs)
			ev := dialects.Event{
				ID: uuid.Must(uuid.NewV7()).String(), AggregateType: "order", AggregateID: agg,
				EventType: "order.placed", Payload: payload, ContentType: "application/json", CreatedAt: now,
				Partition: dialects.PartitionOf("order", agg, parts),
			}
			if schedule != nil {
				schedule(done, &ev)
			}
			events = append(events, ev)
		}
		tx, err := bd.db.BeginTx(ctx, nil)
		if err != nil {
			b.Fatal(err)
		}
		if err := bd.dialect.Insert(ctx, tx, events); err != nil {
			b.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			b.Fatal(err)
		}
	}
}

// emptyTable deletes every row and the holds that ended, and on PostgreSQL
// vacuums, so that each drain starts from the same table (see seed).
func emptyTable(b *testing.B, bd *benchDB, dbNow time.Time) {
	ctx := context.Background()
	if _, err := bd.db.ExecContext(ctx, "DELETE FROM "+bd.dialect.Table()); err != nil {
		b.Fatal(err)
	}
	if _, err := bd.dialect.ReleaseHolds(ctx, bd.db, dbNow.Add(time.Hour), 1<<30); err != nil {
		b.Fatal(err)
	}
	if strings.HasPrefix(bd.name, "postgres") {
		if _, err := bd.db.ExecContext(ctx, "VACUUM "+bd.dialect.Table()); err != nil {
			b.Fatal(err)
		}
	}
}

// dbOffset measures the database's clock minus this process's with
// Dialect.Now: the sample of the shortest of 5 round trips, the database
// taken to read its clock halfway through it (error at most half of rtt).
func dbOffset(b *testing.B, bd *benchDB) (offset, rtt time.Duration) {
	rtt = -1
	for range 5 {
		before := time.Now()
		at, err := bd.dialect.Now(context.Background(), bd.db)
		if err != nil {
			b.Fatal(err)
		}
		after := time.Now()
		if d := after.Sub(before); rtt < 0 || d < rtt {
			rtt, offset = d, at.Sub(before.Add(d/2))
		}
	}
	return offset, rtt
}

// BenchmarkScheduledIdle counts the statements (and BEGIN/COMMIT) an idle
// relay sends (internal/sqlcount), with the default config wired by
// txoutbox.WithRelay as in BenchmarkIdle, side by side on one table: first
// with no rows (empty-stmts/s), then holding -schedule.rows events (10,000
// aggregates) scheduled 1 to 2 hours ahead, none due in the window
// (scheduled-stmts/s); each window is -schedule.window. Databases:
// -schedule.dbs. Command:
//
//	go test -run '^$' -bench '^BenchmarkScheduledIdle$' -benchtime=1x ./bench/ -schedule.dbs=postgres,mysql,sqlite
func BenchmarkScheduledIdle(b *testing.B) {
	for _, dbName := range strings.Split(*schedDBs, ",") {
		b.Run(dbName, func(b *testing.B) {
			bd, counter := countedDB(b, dbName)
			nc, js := benchJetStream(b)
			pub := benchPublisher(b, js, nc, "jetstream")
			for i := 0; i < b.N; i++ {
				emptyTable(b, bd, time.Now())
				empty, emptyStart := schedIdleWindow(b, bd, counter, pub)
				n := *schedRows
				seedScheduled(b, bd, n, 10_000, 5000, func(i int, ev *dialects.Event) {
					ev.Delay = time.Hour + time.Duration(i)*time.Hour/time.Duration(n)
				})
				st, err := bd.dialect.Stats(context.Background(), bd.db)
				if err != nil {
					b.Fatal(err)
				}
				if st.Scheduled != int64(n) {
					b.Fatalf("scheduled idle: %d rows scheduled, want %d", st.Scheduled, n)
				}
				sched, schedStart := schedIdleWindow(b, bd, counter, pub)
				b.ReportMetric(empty, "empty-stmts/s")
				b.ReportMetric(sched, "scheduled-stmts/s")
				b.ReportMetric(float64(emptyStart), "empty-startup-stmts")
				b.ReportMetric(float64(schedStart), "scheduled-startup-stmts")
				b.ReportMetric(schedWindow.Seconds(), "window-s")
			}
			b.ReportMetric(0, "ns/op")
		})
	}
}

// schedIdleWindow runs a relay with the default config over
// -idle.warmup and then -schedule.window, and returns the statements per
// second of the window and those of the warm-up (start-up cycle, first
// take of partitions, cleanup). It fails if the relay published anything.
func schedIdleWindow(b *testing.B, bd *benchDB, counter *sqlcount.Counter, pub relay.Publisher) (float64, int64) {
	pc := &publishedCounter{target: 1, done: make(chan struct{})}
	rl, err := relay.New(bd.db, bd.dialect, pub, relay.Config{Hooks: pc})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := txoutbox.New(bd.db, bd.dialect, txoutbox.WithRelay(rl)); err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	before := counter.Total()
	go func() { done <- rl.Run(ctx) }()
	// Measurement windows, not synchronisation: the relay runs on its own
	// clock.
	time.Sleep(*idleWarmup)
	start := counter.Total()
	time.Sleep(*schedWindow)
	end := counter.Total()
	cancel()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	if n := pc.n.Load(); n != 0 {
		b.Fatalf("scheduled idle: the relay published %d events, none due", n)
	}
	return float64(end-start) / schedWindow.Seconds(), start - before
}

// BenchmarkScheduledDue measures how late a scheduled event reaches a
// JetStream consumer: -schedule.due events of distinct aggregates, each
// with its own NotBefore (the database's time + 2 s + i·40 ms), committed
// in one transaction up front to an idle relay with the default config.
// Latency = consumer receipt - the row's DeliverAt, both on the database's
// clock (the process's clock plus an offset measured with Dialect.Now, the
// shortest of 5 round trips). "in-process": the Outbox is wired with
// txoutbox.WithRelay (the commit tells the relay of scheduled events);
// "other-writer": another *sql.DB and an Outbox without WithRelay, whose
// notify.Local reaches the relay as a Source, as a wake from another
// process would (a lazy wake, a cycle, then NextDue). p50/p99/max, and
// min (negative: early). Command:
//
//	go test -run '^$' -bench '^BenchmarkScheduledDue$' -benchtime=1x ./bench/
func BenchmarkScheduledDue(b *testing.B) {
	for _, dbName := range strings.Split(*schedDBs, ",") {
		b.Run(dbName, func(b *testing.B) {
			db, d, dsn := openDBDSN(b, dbName, 16)
			bd := &benchDB{name: dbName, db: db, dialect: d}
			_, js := benchJetStream(b)
			subJS, err := jetstream.New(testnats.Connect(b, testnats.URL(b)))
			if err != nil {
				b.Fatal(err)
			}
			for _, mode := range []string{"in-process", "other-writer"} {
				b.Run(mode, func(b *testing.B) {
					for i := 0; i < b.N; i++ {
						schedDueCase(b, bd, dsn, js, subJS, mode == "other-writer")
					}
					b.ReportMetric(0, "ns/op")
				})
			}
		})
	}
}

func schedDueCase(b *testing.B, bd *benchDB, dsn string, js, subJS jetstream.JetStream, otherWriter bool) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stream, prefix := testnats.Stream(b, js)
	subStream, err := subJS.Stream(ctx, stream.CachedInfo().Config.Name)
	if err != nil {
		b.Fatal(err)
	}
	var (
		mu   sync.Mutex
		recv = map[string]time.Time{}
		got  atomic.Int64
	)
	cons, err := subStream.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{})
	if err != nil {
		b.Fatal(err)
	}
	cc, err := cons.Consume(func(m jetstream.Msg) {
		now := time.Now()
		mu.Lock()
		defer mu.Unlock()
		if id := m.Headers().Get(natspub.HeaderEventID); recv[id].IsZero() {
			recv[id] = now
			got.Add(1)
		}
	})
	if err != nil {
		b.Fatal(err)
	}
	defer cc.Stop()
	pub, err := natspub.NewJetStream(js, natspub.WithSubjectPrefix(prefix))
	if err != nil {
		b.Fatal(err)
	}

	var (
		cfg    relay.Config
		ob     *txoutbox.Outbox
		writer = bd.db
	)
	local := notify.NewLocal()
	if otherWriter {
		cfg.Sources = []notify.Source{local}
		driver := map[string]string{"postgres": "postgres", "postgres-pgx": "pgx", "mysql": "mysql", "sqlite": "sqlite"}[bd.name]
		writer, err = sql.Open(driver, dsn)
		if err != nil {
			b.Fatal(err)
		}
		defer writer.Close()
	}
	rl, err := relay.New(bd.db, bd.dialect, pub, cfg)
	if err != nil {
		b.Fatal(err)
	}
	if otherWriter {
		ob, err = txoutbox.New(writer, bd.dialect, txoutbox.WithNotifier(local))
	} else {
		ob, err = txoutbox.New(writer, bd.dialect, txoutbox.WithRelay(rl))
	}
	if err != nil {
		b.Fatal(err)
	}
	rctx, cancelRelay := context.WithCancel(ctx)
	relayDone := make(chan error, 1)
	go func() { relayDone <- rl.Run(rctx) }()
	defer func() {
		cancelRelay()
		if err := <-relayDone; err != nil {
			b.Error(err)
		}
	}()
	if _, err := bd.db.ExecContext(ctx, "DELETE FROM "+bd.dialect.Table()); err != nil {
		b.Fatal(err)
	}
	time.Sleep(*idleWarmup) // let the relay take its partitions and go idle

	offset, rtt := dbOffset(b, bd)
	n := *schedDue
	base := time.Now().Add(offset + 2*time.Second)
	tx, err := ob.Begin(ctx, nil)
	if err != nil {
		b.Fatal(err)
	}
	run := uuid.NewString()[:8]
	for i := range n {
		_, err := tx.Add(txoutbox.Event{AggregateType: "order", AggregateID: fmt.Sprintf("due-%s-%d", run, i),
			EventType: "order.reminder", Payload: payload, ContentType: "application/json",
			NotBefore: base.Add(time.Duration(i) * 40 * time.Millisecond)})
		if err != nil {
			b.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	rows, err := bd.dialect.List(ctx, bd.db, dialects.ListFilter{State: dialects.StatePending, Limit: n + 1})
	if err != nil {
		b.Fatal(err)
	}
	if len(rows) != n || got.Load() != 0 {
		b.Fatalf("scheduled due: %d rows pending and %d received after the commit, want %d and 0", len(rows), got.Load(), n)
	}
	slices.SortFunc(rows, func(x, y dialects.Row) int { return x.DeliverAt.Compare(y.DeliverAt) })

	last := base.Add(time.Duration(n) * 40 * time.Millisecond)
	// An event the relay overlooks waits for its safety-net poll: wait for
	// that too, so that the figures show it rather than a failure.
	wait := 2*relay.DefaultPollInterval + 10*time.Second
	for until := last.Add(-offset + wait); got.Load() < int64(n); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(until) {
			b.Fatalf("scheduled due: %d of %d received %v after the last was due", got.Load(), n, wait)
		}
	}
	mu.Lock()
	lat := make([]time.Duration, 0, n)
	var trace []string
	late := 0
	for _, r := range rows {
		l := recv[r.ID].Add(offset).Sub(r.DeliverAt)
		lat = append(lat, l)
		if l > 20*time.Millisecond {
			late++
		}
		if *schedTrace {
			trace = append(trace, fmt.Sprintf("%8.1f ms due, %6.2f ms late", float64(r.DeliverAt.Sub(rows[0].DeliverAt))/1e6, float64(l)/1e6))
		}
	}
	mu.Unlock()
	if *schedTrace {
		b.Logf("events in due order:\n%s", strings.Join(trace, "\n"))
	}
	slices.Sort(lat)
	ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
	pct := func(p float64) time.Duration { return lat[min(max(int(p*float64(len(lat))+0.5)-1, 0), len(lat)-1)] }
	b.ReportMetric(ms(pct(0.50)), "p50-ms")
	b.ReportMetric(ms(pct(0.99)), "p99-ms")
	b.ReportMetric(ms(lat[len(lat)-1]), "max-ms")
	b.ReportMetric(ms(lat[0]), "min-ms")
	b.ReportMetric(float64(offset.Microseconds()), "offset-us")
	b.ReportMetric(float64(rtt.Microseconds()), "rtt-us")
	b.ReportMetric(float64(late), "late-20ms")
	b.ReportMetric(float64(len(lat)), "samples")
}
