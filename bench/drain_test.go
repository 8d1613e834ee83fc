package bench

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"os"
	"runtime/pprof"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/dialects/sqlite"
	"github.com/jitoutbox/jitoutbox/internal/testdb"
	"github.com/jitoutbox/jitoutbox/internal/testnats"
	"github.com/jitoutbox/jitoutbox/relay"
	"github.com/jitoutbox/jitoutbox/relay/natspub"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

var (
	drainEvents     = flag.Int("drain.events", 100_000, "backlog size for BenchmarkDrain")
	drainAggregates = flag.Int("drain.aggregates", 1_000, "aggregates the backlog is spread over")
	drainFew        = flag.Int("drain.few", 10, "aggregates the backlog of BenchmarkDrainFewAggregates is spread over")
	drainFillFactor = flag.Int("drain.fillfactor", 0, "PostgreSQL: set this fillfactor on the outbox table before seeding (0: the schema's), for before/after comparisons")
	drainProfile    = flag.String("drain.cpuprofile", "", "write a CPU profile of the timed drains only (not the seeding) to this file; with several benchmarks, the last one's")
)

type benchDB struct {
	name    string
	db      *sql.DB
	dialect dialects.Dialect
}

func openBenchDB(b *testing.B, name string) *benchDB {
	db, d := openDB(b, name, 16)
	return &benchDB{name: name, db: db, dialect: d}
}

// openDB opens an isolated database of the named kind ("postgres" through
// lib/pq, "postgres-pgx", "mysql" or "sqlite") with its dialect migrated and
// a pool of conns connections.
func openDB(b *testing.B, name string, conns int) (*sql.DB, dialects.Dialect) {
	db, d, _ := openDBDSN(b, name, conns)
	return db, d
}

// openDBDSN is openDB that also returns the database's DSN.
func openDBDSN(b *testing.B, name string, conns int) (*sql.DB, dialects.Dialect, string) {
	var (
		db  *sql.DB
		dsn string
	)
	dialect := name
	switch name {
	case "postgres":
		db, dsn = testdb.Postgres(b, "postgres")
	case "postgres-pgx":
		db, dsn = testdb.Postgres(b, "pgx")
		dialect = "postgres"
	case "mysql":
		db, dsn = testdb.MySQL(b)
	case "sqlite":
		db, dsn = testdb.SQLite(b)
	default:
		b.Fatalf("unknown database %q (want postgres, postgres-pgx, mysql or sqlite)", name)
	}
	d := testdb.NewDialect(b, dialect)
	if err := d.Migrate(context.Background(), db); err != nil {
		b.Fatal(err)
	}
	if name == "sqlite" {
		conns = min(conns, sqlite.MaxOpenConns) // the pool the dialect asks for (its package doc says why)
	}
	db.SetMaxOpenConns(conns)
	db.SetMaxIdleConns(conns)
	return db, d, dsn
}

// seed writes n events round-robin over aggs aggregates, 1000 per
// transaction, as a busy producer would have left them.
func seed(b *testing.B, bd *benchDB, n, aggs int) {
	ctx := context.Background()
	if *drainFillFactor > 0 && bd.name == "postgres" {
		q := fmt.Sprintf("ALTER TABLE %s SET (fillfactor = %d)", bd.dialect.Table(), *drainFillFactor)
		if _, err := bd.db.ExecContext(ctx, q); err != nil {
			b.Fatal(err)
		}
	}
	if bd.name == "postgres" {
		// Every loop and drain starts from the same table: the rows the
		// one before it updated and deleted are vacuumed away, not left for
		// the next one's reads and autovacuum to pay for. Without it the
		// loop that ran last paid for the others' dead tuples (the relay's
		// drain: PostgreSQL CPU per event 18 µs when it ran first, 23-28 µs
		// when it ran after the serial and partition loops).
		if _, err := bd.db.ExecContext(ctx, "VACUUM "+bd.dialect.Table()); err != nil {
			b.Fatal(err)
		}
	}
	parts, err := bd.dialect.Partitions(ctx, bd.db)
	if err != nil {
		b.Fatal(err)
	}
	const perTx = 1000
	events := make([]dialects.Event, 0, perTx)
	for done := 0; done < n; {
		events = events[:0]
		for i := 0; i < perTx && done < n; i++ {
			now := time.Now().UTC().Truncate(time.Microsecond)
			agg := "agg-" + strconv.Itoa(done%aggs)
			events = append(events, dialects.Event{
				ID: uuid.Must(uuid.NewV7()).String(), AggregateType: "order", AggregateID: agg,
				EventType: "order.placed", Payload: payload, ContentType: "application/json", CreatedAt: now,
				Partition: dialects.PartitionOf("order", agg, parts),
			})
			done++
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
	// Fresh statistics, as autovacuum would leave them on a table in steady
	// use, so that the bare loops of BenchmarkLimits get their usual plans.
	switch bd.name {
	case "postgres":
		_, err := bd.db.ExecContext(ctx, "ANALYZE "+bd.dialect.Table())
		if err != nil {
			b.Fatal(err)
		}
	case "mysql":
		rows, err := bd.db.QueryContext(ctx, "ANALYZE TABLE "+bd.dialect.Table())
		if err != nil {
			b.Fatal(err)
		}
		rows.Close()
	}
}

// BenchmarkDrain measures events per second to deliver a backlog
// (-drain.events over -drain.aggregates aggregates) with 1, 2 and 4 relays,
// batch sizes 100 and 500, to JetStream (marking rows published, "update",
// or deleting them, "delete") and to core NATS ("update").
func BenchmarkDrain(b *testing.B) {
	for _, dbName := range []string{"postgres", "mysql", "sqlite"} {
		b.Run(dbName, func(b *testing.B) {
			bd := openBenchDB(b, dbName)
			nc, js := benchJetStream(b)
			bl := backlog{*drainEvents, *drainAggregates}
			for _, broker := range []string{"jetstream", "core"} {
				modes := []string{"update", "delete"}
				if broker == "core" {
					modes = modes[:1]
				}
				for _, relays := range []int{1, 2, 4} {
					for _, batch := range []int{100, 500} {
						for _, mode := range modes {
							b.Run(fmt.Sprintf("%s/relays=%d/batch=%d/%s", broker, relays, batch, mode), func(b *testing.B) {
								drainRow(b, bd, js, nc, broker, bl, relays, batch, mode == "delete")
							})
						}
					}
				}
			}
		})
	}
}

// BenchmarkDrainFewAggregates is BenchmarkDrain's JetStream delete rows at
// batch 500 with the backlog spread over -drain.few aggregates (default 10)
// instead of -drain.aggregates: many rows of one aggregate in each batch, so
// the per-aggregate hold-back and the relay's publish waves (the k-th row of
// each aggregate waits for the acks of the (k-1)-th) are what is measured.
func BenchmarkDrainFewAggregates(b *testing.B) {
	for _, dbName := range []string{"postgres", "mysql", "sqlite"} {
		b.Run(dbName, func(b *testing.B) {
			bd := openBenchDB(b, dbName)
			nc, js := benchJetStream(b)
			for _, relays := range []int{1, 2} {
				b.Run(fmt.Sprintf("aggregates=%d/relays=%d", *drainFew, relays), func(b *testing.B) {
					drainRow(b, bd, js, nc, "jetstream", backlog{*drainEvents, *drainFew}, relays, 500, true)
				})
			}
		})
	}
}

// drainRow is one row of the drain benchmarks: it drains bl with `relays`
// relays through a fresh stream or subject prefix on broker and reports
// events/s, the time per batch in each stage and the CPU per event.
func drainRow(b *testing.B, bd *benchDB, js jetstream.JetStream, nc *nats.Conn, broker string, bl backlog, relays, batch int, deleteOnPublish bool) {
	st := &stageTimes{}
	pub := st.publisher(benchPublisher(b, js, nc, broker))
	tbd := *bd
	tbd.dialect = st.dialect(bd.dialect)
	var cpu cpuMeter
	rate := drain(b, &tbd, pub, bl, relays, batch, deleteOnPublish, &cpu)
	b.ReportMetric(rate, "events/s")
	st.report(b)
	cpu.report(b, "", "event")
}

// benchJetStream connects to the benchmarks' NATS server and returns the
// connection and a JetStream context that lets enough async publishes be
// pending for a 500-message batch and more.
func benchJetStream(b *testing.B) (*nats.Conn, jetstream.JetStream) {
	b.Helper()
	nc := testnats.Connect(b, testnats.URL(b))
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(4096))
	if err != nil {
		b.Fatal(err)
	}
	return nc, js
}

// benchPublisher returns a publisher to a fresh file-storage stream
// (JetStream) or to core NATS subjects under a fresh prefix.
func benchPublisher(b *testing.B, js jetstream.JetStream, nc *nats.Conn, broker string) relay.Publisher {
	b.Helper()
	_, prefix := testnats.Stream(b, js, func(c *jetstream.StreamConfig) {
		c.Storage = jetstream.FileStorage
	})
	var (
		pub relay.Publisher
		err error
	)
	if broker == "jetstream" {
		pub, err = natspub.NewJetStream(js, natspub.WithSubjectPrefix(prefix))
	} else {
		pub, err = natspub.NewCore(nc, natspub.WithSubjectPrefix(prefix))
	}
	if err != nil {
		b.Fatal(err)
	}
	return pub
}

// stageTimes adds up the time the relays spend in each stage of a batch:
// the read (a non-empty Read of owned partitions; "claim" in the metric
// names, as before), the publish (to the broker's acknowledgements) and the mark
// (or delete). Reported per batch, they show where a drain's time goes and
// how much of it the stages leave unexplained (the relay's own work and
// waiting for the CPU).
type stageTimes struct {
	claims, claimNS, pubNS, marks, markNS atomic.Int64
}

type timedDialect struct {
	dialects.Dialect
	st *stageTimes
}

func (d timedDialect) Read(ctx context.Context, db *sql.DB, req dialects.ReadRequest) (dialects.ReadResult, error) {
	t := time.Now()
	res, err := d.Dialect.Read(ctx, db, req)
	if len(res.Records) > 0 {
		d.st.claims.Add(1)
		d.st.claimNS.Add(int64(time.Since(t)))
	}
	return res, err
}

func (d timedDialect) Mark(ctx context.Context, db *sql.DB, m dialects.Mark) (int64, error) {
	defer d.st.mark(time.Now())
	return d.Dialect.Mark(ctx, db, m)
}

func (st *stageTimes) mark(start time.Time) {
	st.marks.Add(1)
	st.markNS.Add(int64(time.Since(start)))
}

func (st *stageTimes) dialect(d dialects.Dialect) dialects.Dialect { return timedDialect{d, st} }

func (st *stageTimes) publisher(p relay.Publisher) relay.Publisher {
	return relay.PublisherFunc(func(ctx context.Context, batch []relay.Message, errs []error) {
		t := time.Now()
		p.Publish(ctx, batch, errs)
		st.pubNS.Add(int64(time.Since(t)))
	})
}

// report adds claim-ms, publish-ms and mark-ms: the mean time of each stage
// per claimed batch.
func (st *stageTimes) report(b *testing.B) {
	n := float64(st.claims.Load())
	if n == 0 {
		return
	}
	b.ReportMetric(float64(st.claimNS.Load())/n/1e6, "claim-ms/batch")
	b.ReportMetric(float64(st.pubNS.Load())/n/1e6, "publish-ms/batch")
	if m := st.marks.Load(); m > 0 {
		b.ReportMetric(float64(st.markNS.Load())/n/1e6, "mark-ms/batch")
	}
}

// dialectCounts counts the statements a drain's relays send through a
// dialect (reads, empty reads, rows read, marks): the database work behind
// its CPU per event.
type dialectCounts struct {
	reads, empty, rows, marks atomic.Int64
}

type countedDialect struct {
	dialects.Dialect
	c *dialectCounts
}

func (d countedDialect) Read(ctx context.Context, db *sql.DB, req dialects.ReadRequest) (dialects.ReadResult, error) {
	res, err := d.Dialect.Read(ctx, db, req)
	d.c.reads.Add(1)
	d.c.rows.Add(int64(len(res.Records)))
	if len(res.Records) == 0 {
		d.c.empty.Add(1)
	}
	return res, err
}

func (d countedDialect) Mark(ctx context.Context, db *sql.DB, m dialects.Mark) (int64, error) {
	d.c.marks.Add(1)
	return d.Dialect.Mark(ctx, db, m)
}

func (c *dialectCounts) dialect(d dialects.Dialect) dialects.Dialect { return countedDialect{d, c} }

// log logs the counts of a drain of events by relays.
func (c *dialectCounts) log(b *testing.B, relays, events int) {
	b.Logf("relays=%d: %d reads (%d empty), %.2f rows read per event, %d marks",
		relays, c.reads.Load(), c.empty.Load(), float64(c.rows.Load())/float64(events), c.marks.Load())
}

// publishedCounter is a relay.Hooks that counts published events and
// signals when a target is reached, so that the benchmark waits without
// querying the database it measures.
type publishedCounter struct {
	n      atomic.Int64
	target int64
	done   chan struct{}
	once   sync.Once
}

func (c *publishedCounter) BatchStart(ctx context.Context, _ relay.BatchStartInfo) context.Context {
	return ctx
}

func (c *publishedCounter) BatchEnd(_ context.Context, info relay.BatchEndInfo) {
	if c.n.Add(int64(info.Published)) >= c.target {
		c.once.Do(func() { close(c.done) })
	}
}

// backlog is the shape of a seeded backlog: events spread round-robin over
// aggregates.
type backlog struct{ events, aggregates int }

// drain seeds bl b.N times, runs `relays` relays until all are published and
// returns events per second over the timed drains; cpu meters the timed
// drains. It checks afterwards that no row is left pending.
func drain(b *testing.B, bd *benchDB, pub relay.Publisher, bl backlog, relays, batch int, deleteOnPublish bool, cpu *cpuMeter) float64 {
	ctx := context.Background()
	var total time.Duration
	events := 0
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		if _, err := bd.db.ExecContext(ctx, "DELETE FROM "+bd.dialect.Table()); err != nil {
			b.Fatal(err)
		}
		seed(b, bd, bl.events, bl.aggregates)
		b.StartTimer()
		counter := &publishedCounter{target: int64(bl.events), done: make(chan struct{})}
		cpu.start()
		stopProfile := startProfile(b, *drainProfile)
		start := time.Now()
		rctx, cancel := context.WithCancel(ctx)
		var wg sync.WaitGroup
		var dc dialectCounts
		for r := 0; r < relays; r++ {
			rl, err := relay.New(bd.db, dc.dialect(bd.dialect), pub, relay.Config{
				BatchSize: batch, DeleteOnPublish: deleteOnPublish, Hooks: counter,
			})
			if err != nil {
				b.Fatal(err)
			}
			wg.Add(1)
			go func() { defer wg.Done(); _ = rl.Run(rctx) }()
		}
		select {
		case <-counter.done:
		case <-time.After(10 * time.Minute):
			b.Fatalf("drain: %d of %d published after 10 minutes", counter.n.Load(), bl.events)
		}
		total += time.Since(start)
		stopProfile()
		cpu.stop(bl.events)
		dc.log(b, relays, bl.events)
		events += bl.events
		cancel()
		wg.Wait()
		b.StopTimer()
		st, err := bd.dialect.Stats(ctx, bd.db)
		if err != nil {
			b.Fatal(err)
		}
		if st.Pending != 0 || counter.n.Load() != int64(bl.events) {
			b.Fatalf("drain: %d published, %d still pending", counter.n.Load(), st.Pending)
		}
		b.StartTimer()
	}
	return float64(events) / total.Seconds()
}

// startProfile starts a CPU profile written to path, if set, and returns
// the function that stops it.
func startProfile(b *testing.B, path string) (stop func()) {
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		b.Fatal(err)
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			b.Error(err)
		}
	}
}
