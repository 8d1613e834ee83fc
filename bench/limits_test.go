package bench

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/go-sql-driver/mysql"
	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/internal/testnats"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

var (
	limitsEvents  = flag.Int("limits.events", 100_000, "backlog size for the bare claim+mark loops of BenchmarkLimits and BenchmarkDrainVsLimit")
	limitsSamples = flag.Int("limits.samples", 20_000, "round trips timed by BenchmarkLimits/<db>/select1, messages by jetstream-async")
)

// limitsBatch is the claim size of the bare loops.
const limitsBatch = 500

// BenchmarkLimits measures what the machine allows, without jitoutbox:
//
//   - <db>/claim-mark/{update,delete}/workers=N: a bare loop of BEGIN,
//     SELECT seq ... ORDER BY seq LIMIT 500 FOR UPDATE SKIP LOCKED, UPDATE
//     state/published_at (or DELETE) of those rows, COMMIT, on the outbox
//     table with a seeded backlog; events/s.
//   - <db>/select1: SELECT 1 round trip, p50 and p99 in µs.
//   - jetstream-async: async publish of 200-byte messages with Nats-Msg-Id,
//     window 256, waiting for every ack; msgs/s.
func BenchmarkLimits(b *testing.B) {
	for _, dbName := range []string{"postgres", "mysql"} {
		b.Run(dbName, func(b *testing.B) {
			bd := openBenchDB(b, dbName)
			for _, mode := range []string{"update", "delete"} {
				for _, workers := range []int{1, 4} {
					b.Run(fmt.Sprintf("claim-mark/%s/workers=%d", mode, workers), func(b *testing.B) {
						var cpu cpuMeter
						b.ReportMetric(bareClaimMark(b, bd, workers, mode == "delete", nil, &cpu), "events/s")
						cpu.report(b, "", "event")
					})
				}
			}
			b.Run("select1", func(b *testing.B) {
				p50, p99 := selectOne(b, bd.db)
				b.ReportMetric(float64(p50.Nanoseconds())/1e3, "p50-µs")
				b.ReportMetric(float64(p99.Nanoseconds())/1e3, "p99-µs")
			})
		})
	}
	b.Run("jetstream-async", func(b *testing.B) {
		nc := testnats.Connect(b, testnats.URL(b))
		js, err := jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(256))
		if err != nil {
			b.Fatal(err)
		}
		_, prefix := testnats.Stream(b, js, func(c *jetstream.StreamConfig) { c.Storage = jetstream.FileStorage })
		var cpu cpuMeter
		b.ReportMetric(jetStreamAsync(b, js, prefix, &cpu), "msgs/s")
		cpu.report(b, "", "msg")
	})
}

// BenchmarkDrainVsLimit runs, back to back on one database and one broker,
// the bare claim+mark loop (the database's limit), a bare serial relay loop
// (claim 500, async publish to JetStream, await acks, mark), the partition
// serial loop (the same with the dialect's own session, Read and fenced
// Mark: partitions owned per worker, a plain SELECT, the per-aggregate
// block check; see partitionClaimMark), and jitoutbox's relay draining the
// same backlog, and reports each rate and the ratios drain/limit,
// drain/serial (target >= 1 with one relay), part/serial (what the database
// side of the guarantees costs) and drain/part (what the relay and the
// publisher add). It also meters the CPU the machine
// spends per event in the bare claim+mark loop and in a bare JetStream
// async publish, and reports the CPU ceiling, cores / (the sum of both):
// the rate no relay can pass on this machine, however it overlaps its
// stages, and drain/ceiling. Sub-benchmarks: <db>/relays=N/<mode>,
// the bare loops using N workers.
func BenchmarkDrainVsLimit(b *testing.B) {
	for _, dbName := range []string{"postgres", "mysql"} {
		b.Run(dbName, func(b *testing.B) {
			bd := openBenchDB(b, dbName)
			nc, js := benchJetStream(b)
			for _, relays := range []int{1, 2, 4} {
				for _, mode := range []string{"update", "delete"} {
					b.Run(fmt.Sprintf("relays=%d/%s", relays, mode), func(b *testing.B) {
						del := mode == "delete"
						var limitCPU, jsCPU cpuMeter
						serialCPU, partCPU, drainCPU := cpuMeter{servers: true}, cpuMeter{servers: true}, cpuMeter{servers: true}
						limit := bareClaimMark(b, bd, relays, del, nil, &limitCPU)
						_, prefix := testnats.Stream(b, js, func(c *jetstream.StreamConfig) { c.Storage = jetstream.FileStorage })
						jetStreamAsync(b, js, prefix, &jsCPU)
						serial := bareClaimMark(b, bd, relays, del, &barePublish{js: js, prefix: prefix}, &serialCPU)
						part := partitionClaimMark(b, bd, relays, del, &barePublish{js: js, prefix: prefix}, &partCPU)
						pub := benchPublisher(b, js, nc, "jetstream")
						rate := drain(b, bd, pub, backlog{*limitsEvents, *drainAggregates}, relays, limitsBatch, del, &drainCPU)
						b.ReportMetric(limit, "limit-events/s")
						b.ReportMetric(serial, "serial-events/s")
						b.ReportMetric(rate, "events/s")
						b.ReportMetric(rate/limit, "drain/limit")
						b.ReportMetric(rate/serial, "drain/serial")
						b.ReportMetric(part, "part-events/s")
						b.ReportMetric(part/serial, "part/serial")
						b.ReportMetric(rate/part, "drain/part")
						serialCPU.report(b, "serial-", "event")
						partCPU.report(b, "part-", "event")
						drainCPU.report(b, "", "event")
						// The CPU ceiling: what the machine's cores allow if
						// every cycle went to the bare claim+mark and the
						// bare JetStream publish of each event, perfectly
						// overlapped, and nothing else.
						lc, ok1 := limitCPU.perEvent()
						jc, ok2 := jsCPU.perEvent()
						if ok1 && ok2 {
							ceiling := float64(runtime.NumCPU()) * 1e6 / (lc + jc)
							b.ReportMetric(ceiling, "ceiling-events/s")
							b.ReportMetric(rate/ceiling, "drain/ceiling")
						}
					})
				}
			}
		})
	}
}

// barePublish makes the bare loop publish each claimed batch to JetStream
// (async, all acks awaited) before marking it.
type barePublish struct {
	js     jetstream.JetStream
	prefix string
}

// bareSQL holds a dialect-specific bare loop's statements.
type bareSQL struct {
	sel  string
	mark func(n int) string
	del  func(n int) string
}

func bareStatements(bd *benchDB) bareSQL {
	t := bd.dialect.Table()
	if bd.name == "postgres" {
		return bareSQL{
			sel: "SELECT seq, id::text FROM " + t + " WHERE state = 0 ORDER BY seq LIMIT " + strconv.Itoa(limitsBatch) + " FOR UPDATE SKIP LOCKED",
			mark: func(int) string {
				return "UPDATE " + t + " SET state = 1, published_at = now() WHERE seq = ANY ($1::text::bigint[])"
			},
			del: func(int) string { return "DELETE FROM " + t + " WHERE seq = ANY ($1::text::bigint[])" },
		}
	}
	list := func(n int) string { return strings.TrimSuffix(strings.Repeat("?,", n), ",") }
	return bareSQL{
		sel: "SELECT seq, id FROM " + t + " WHERE state = 0 ORDER BY seq LIMIT " + strconv.Itoa(limitsBatch) + " FOR UPDATE SKIP LOCKED",
		mark: func(n int) string {
			return "UPDATE " + t + " SET state = 1, published_at = NOW(6) WHERE seq IN (" + list(n) + ")"
		},
		del: func(n int) string { return "DELETE FROM " + t + " WHERE seq IN (" + list(n) + ")" },
	}
}

// bareClaimMark seeds -limits.events events b.N times and drains them with a
// bare SQL loop on `workers` goroutines; with pub set, each batch is
// published to JetStream before it is marked. It returns events/s; cpu
// meters the timed drains.
func bareClaimMark(b *testing.B, bd *benchDB, workers int, del bool, pub *barePublish, cpu *cpuMeter) float64 {
	b.Helper()
	st := bareStatements(bd)
	return serialLoop(b, bd, workers, cpu, func() batchFunc {
		return func(ctx context.Context, _ int) (int, error) { return bareBatch(ctx, bd, st, del, pub) }
	})
}

// partitionClaimMark is bareClaimMark with the dialect's own session, read
// and mark: what the guarantees cost now, without any relay code. Before
// each drain (untimed) worker w opens an ownership session
// (dialects.Dialect.OpenSession) and takes the partitions p with
// p % workers == w; each batch is then a plain Read of its partitions (500
// pending rows in seq order, with the per-aggregate block check), published
// as bareClaimMark publishes it, and marked or deleted with the dialect's
// fenced Mark. An empty read ends the worker: its partitions are drained.
// Against bareClaimMark (a transaction held open across the publish, no
// order kept per aggregate with several workers) it measures what the
// database side of jitoutbox's guarantees costs; against the relay's drain,
// what the relay and the publisher add on top.
func partitionClaimMark(b *testing.B, bd *benchDB, workers int, del bool, pub *barePublish, cpu *cpuMeter) float64 {
	b.Helper()
	ctx := context.Background()
	parts, err := bd.dialect.Partitions(ctx, bd.db)
	if err != nil {
		b.Fatal(err)
	}
	return serialLoopWith(b, bd, workers, cpu, func() (batchFunc, func()) {
		sessions := make([]dialects.Session, workers)
		owned := make([][]int, workers)
		for w := range sessions {
			s, err := bd.dialect.OpenSession(ctx, bd.db, "bench-serial-"+strconv.Itoa(w), time.Minute)
			if err != nil {
				b.Fatal(err)
			}
			sessions[w] = s
			var mine []int
			for p := w; p < parts; p += workers {
				mine = append(mine, p)
			}
			taken, err := s.Take(ctx, mine, time.Now())
			if err != nil {
				b.Fatal(err)
			}
			if len(taken) != len(mine) {
				b.Fatalf("partition serial loop: worker %d took %d of %d partitions", w, len(taken), len(mine))
			}
			owned[w] = taken
		}
		closeAll := func() {
			for _, s := range sessions {
				if err := s.Close(); err != nil {
					b.Error(err)
				}
			}
		}
		return func(ctx context.Context, w int) (int, error) {
			res, err := bd.dialect.Read(ctx, bd.db, dialects.ReadRequest{
				Partitions: owned[w], Limit: limitsBatch, Now: time.Now()})
			recs := res.Records
			if err != nil || len(recs) == 0 {
				return 0, err
			}
			ids := make([]string, len(recs))
			seqs := make([]int64, len(recs))
			for i := range recs {
				ids[i], seqs[i] = recs[i].ID, recs[i].Seq
			}
			if err := publishAll(ctx, pub, ids); err != nil {
				return 0, err
			}
			n, err := bd.dialect.Mark(ctx, bd.db, dialects.Mark{
				Token: sessions[w].Token(), Seqs: seqs, At: time.Now(), Delete: del})
			if err != nil {
				return 0, err
			}
			if n != int64(len(seqs)) {
				return 0, fmt.Errorf("partition serial loop: marked %d of %d rows", n, len(seqs))
			}
			return len(recs), nil
		}, closeAll
	})
}

// batchFunc handles one batch on worker w and returns the rows handled, 0
// when the backlog is drained.
type batchFunc func(ctx context.Context, w int) (int, error)

// serialLoop seeds -limits.events events b.N times and drains each seeding
// with a batch function from round, called on `workers` goroutines until it
// returns 0. It returns events/s; cpu meters the timed drains.
func serialLoop(b *testing.B, bd *benchDB, workers int, cpu *cpuMeter, round func() batchFunc) float64 {
	b.Helper()
	return serialLoopWith(b, bd, workers, cpu, func() (batchFunc, func()) { return round(), func() {} })
}

// serialLoopWith is serialLoop with a round that also returns what to do
// (untimed) after its drain.
func serialLoopWith(b *testing.B, bd *benchDB, workers int, cpu *cpuMeter, round func() (batchFunc, func())) float64 {
	b.Helper()
	ctx := context.Background()
	var total time.Duration
	events := 0
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		if _, err := bd.db.ExecContext(ctx, "DELETE FROM "+bd.dialect.Table()); err != nil {
			b.Fatal(err)
		}
		seed(b, bd, *limitsEvents, *drainAggregates)
		batch, finish := round()
		b.StartTimer()
		cpu.start()
		start := time.Now()
		var wg sync.WaitGroup
		counts := make([]int, workers)
		errs := make([]error, workers)
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for deadlocks := 0; ; {
					n, err := batch(ctx, w)
					if isDeadlock(err) && deadlocks < 100 {
						// InnoDB's next-key locks let concurrent SKIP LOCKED
						// loops deadlock; the loser's transaction was rolled
						// back, so run it again, as any client would.
						deadlocks++
						continue
					}
					if err != nil {
						errs[w] = err
						return
					}
					if n == 0 {
						return
					}
					counts[w] += n
				}
			}()
		}
		wg.Wait()
		total += time.Since(start)
		cpu.stop(*limitsEvents)
		b.StopTimer()
		finish()
		b.StartTimer()
		for w := range errs {
			if errs[w] != nil {
				b.Fatal(errs[w])
			}
			events += counts[w]
		}
	}
	if events != *limitsEvents*b.N {
		b.Fatalf("bare loop handled %d events, want %d", events, *limitsEvents*b.N)
	}
	return float64(events) / total.Seconds()
}

// isDeadlock reports whether err is MySQL/MariaDB's deadlock error (1213).
func isDeadlock(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && me.Number == 1213
}

// bareBatch runs one claim+mark transaction and returns the rows handled.
func bareBatch(ctx context.Context, bd *benchDB, st bareSQL, del bool, pub *barePublish) (int, error) {
	tx, err := bd.db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelReadCommitted})
	if err != nil {
		return 0, err
	}
	defer tx.Rollback() //nolint:errcheck // no-op after Commit
	rows, err := tx.QueryContext(ctx, st.sel)
	if err != nil {
		return 0, err
	}
	var seqs []int64
	var ids []string
	for rows.Next() {
		var s int64
		var id string
		if err := rows.Scan(&s, &id); err != nil {
			rows.Close()
			return 0, err
		}
		seqs = append(seqs, s)
		ids = append(ids, id)
	}
	if err := rows.Close(); err != nil {
		return 0, err
	}
	if err := rows.Err(); err != nil {
		return 0, err
	}
	if len(seqs) == 0 {
		return 0, tx.Commit()
	}
	if pub != nil {
		if err := publishAll(ctx, pub, ids); err != nil {
			return 0, err
		}
	}
	q, args := bareMarkArgs(bd, st, seqs, del)
	if _, err := tx.ExecContext(ctx, q, args...); err != nil {
		return 0, err
	}
	return len(seqs), tx.Commit()
}

func bareMarkArgs(bd *benchDB, st bareSQL, seqs []int64, del bool) (string, []any) {
	q := st.mark
	if del {
		q = st.del
	}
	if bd.name == "postgres" {
		var sb strings.Builder
		sb.WriteByte('{')
		for i, s := range seqs {
			if i > 0 {
				sb.WriteByte(',')
			}
			sb.WriteString(strconv.FormatInt(s, 10))
		}
		sb.WriteByte('}')
		return q(len(seqs)), []any{sb.String()}
	}
	args := make([]any, len(seqs))
	for i, s := range seqs {
		args[i] = s
	}
	return q(len(seqs)), args
}

// publishAll publishes one message per id asynchronously (Nats-Msg-Id set)
// and waits for every ack.
func publishAll(ctx context.Context, pub *barePublish, ids []string) error {
	futs := make([]jetstream.PubAckFuture, 0, len(ids))
	for _, id := range ids {
		m := nats.NewMsg(pub.prefix + ".order.order.placed")
		m.Data = payload
		m.Header.Set(jetstream.MsgIDHeader, id)
		f, err := pub.js.PublishMsgAsync(m)
		if err != nil {
			return err
		}
		futs = append(futs, f)
	}
	for _, f := range futs {
		select {
		case <-f.Ok():
		case err := <-f.Err():
			return err
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// selectOne times -limits.samples SELECT 1 round trips b.N times and returns
// p50 and p99.
func selectOne(b *testing.B, db *sql.DB) (p50, p99 time.Duration) {
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	lat := make([]time.Duration, 0, *limitsSamples*b.N)
	var one int
	for i := 0; i < b.N; i++ {
		for j := 0; j < *limitsSamples; j++ {
			s := time.Now()
			if err := conn.QueryRowContext(ctx, "SELECT 1").Scan(&one); err != nil {
				b.Fatal(err)
			}
			lat = append(lat, time.Since(s))
		}
	}
	if one != 1 {
		b.Fatalf("SELECT 1 returned %d", one)
	}
	slices.Sort(lat)
	return lat[len(lat)/2], lat[len(lat)*99/100]
}

// jetStreamAsync publishes -limits.samples 200-byte messages b.N times with
// a window of 256 unacknowledged publishes (the context's
// WithPublishAsyncMaxPending), waits for every ack and returns msgs/s; cpu
// meters the timed publishes.
func jetStreamAsync(b *testing.B, js jetstream.JetStream, prefix string, cpu *cpuMeter) float64 {
	ctx := context.Background()
	body := make([]byte, 200)
	var total time.Duration
	sent := 0
	for i := 0; i < b.N; i++ {
		cpu.start()
		start := time.Now()
		for j := 0; j < *limitsSamples; j++ {
			m := nats.NewMsg(prefix + ".order.order.placed")
			m.Data = body
			m.Header.Set(jetstream.MsgIDHeader, uuid.Must(uuid.NewV7()).String())
			if _, err := js.PublishMsgAsync(m); err != nil {
				b.Fatal(err)
			}
		}
		select {
		case <-js.PublishAsyncComplete():
		case <-time.After(time.Minute):
			b.Fatal("jetstream-async: acks not complete after a minute")
		case <-ctx.Done():
		}
		total += time.Since(start)
		cpu.stop(*limitsSamples)
		sent += *limitsSamples
	}
	return float64(sent) / total.Seconds()
}
