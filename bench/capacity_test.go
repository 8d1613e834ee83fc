package bench

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/internal/testnats"
	"github.com/jitoutbox/jitoutbox/relay"
	"github.com/jitoutbox/jitoutbox/relay/natspub"
	"github.com/jitoutbox/jitoutbox/txoutbox"
)

var (
	capWindow  = flag.Duration("capacity.window", 3*time.Second, "how long BenchmarkCapacity commits at each offered rate (and for each baseline)")
	capWriters = flag.Int("capacity.writers", 8, "writers of BenchmarkCapacity (the baseline commits flat out with as many)")
	capDBs     = flag.String("capacity.dbs", "postgres,mysql,sqlite", "comma-separated databases BenchmarkCapacity runs on")
	capSteps   = flag.String("capacity.steps", "0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9,1.0", "offered rates, as fractions of the baseline, tried in order until one fails")
	capCPUAt   = flag.Float64("capacity.cpuat", 0.3, "fraction of the baseline at which BenchmarkCapacity also commits without a relay and drains those rows, to set the hand-over's CPU per event beside a drain's (0: skip)")
	capBase    = flag.Float64("capacity.base", 0, "take this baseline (commits/s) instead of measuring it: builds compared at one offered rate, on a machine whose load varies")
	capProfile = flag.String("capacity.cpuprofile", "", "write a CPU profile of BenchmarkCapacity's search steps only (not the baselines or the drain) to this file")
)

// capP99 is the time-critical p99 a rate must keep to count as sustained.
const capP99 = 10 * time.Millisecond

// BenchmarkCapacity finds the highest sustained commit rate, one event per
// commit and every fourth one time-critical, at which the time-critical
// commit-to-consumer p99 stays <= 10 ms, and reports it as a fraction of
// the baseline: the rate at which the same database commits the same
// transaction with a hand-written outbox INSERT (the columns txoutbox
// fills) and no relay running, -capacity.writers writers flat out. The
// baseline is measured before and after the search (base-before,
// base-after) and their mean is the denominator of capacity/baseline.
//
// The search offers the rates of -capacity.steps (fractions of the
// baseline before) in order, open loop: -capacity.writers writers commit
// the k-th transaction at start + k/rate (or at once when behind), through
// txoutbox with an in-process relay (txoutbox.WithRelay, default config) to
// JetStream. A step is sustained when the writers reached 95% of the
// offered rate and the time-critical p99 (Commit returned -> consumer
// received) is <= 10 ms; the search stops at the first step that is not,
// and then tries the midpoint below it once. Bounded: at most
// len(steps)+1 windows of -capacity.window, plus the waits for delivery.
//
// With -capacity.cpuat (a fraction, 0.3 by default), before the relay runs
// the writers also commit at that rate through txoutbox without a relay
// (ref-self-cpu-µs/commit: this process's CPU per commit), and the relay
// then drains those rows with no consumer attached
// (drain-self-cpu-µs/event). When the search tries that fraction, the
// hand-over's cost is the step's CPU per commit less the reference
// (handover-self-cpu-µs/event: the relay and the consumer, one event per
// commit), reported beside the drain's as handover/drain-cpu.
func BenchmarkCapacity(b *testing.B) {
	var steps []float64
	for _, s := range strings.Split(*capSteps, ",") {
		var f float64
		if _, err := fmt.Sscan(s, &f); err != nil || f <= 0 {
			b.Fatalf("-capacity.steps: bad fraction %q", s)
		}
		steps = append(steps, f)
	}
	for _, dbName := range strings.Split(*capDBs, ",") {
		b.Run(dbName, func(b *testing.B) {
			ctx := context.Background()
			db, d := openDB(b, dbName, 2*(*capWriters)+8)
			parts, err := d.Partitions(ctx, db)
			if err != nil {
				b.Fatal(err)
			}
			hand := handInsert(dbName, d.Table())
			for i := 0; i < b.N; i++ {
				before := *capBase
				if before <= 0 {
					before = capBaseline(b, db, d, hand, parts)
				}

				url := testnats.URL(b)
				js, err := jetstream.New(testnats.Connect(b, url), jetstream.WithPublishAsyncMaxPending(4096))
				if err != nil {
					b.Fatal(err)
				}
				subJS, err := jetstream.New(testnats.Connect(b, url))
				if err != nil {
					b.Fatal(err)
				}
				stream, prefix := testnats.Stream(b, js)
				subStream, err := subJS.Stream(ctx, stream.CachedInfo().Config.Name)
				if err != nil {
					b.Fatal(err)
				}
				var cur atomic.Pointer[latTracker]
				var published atomic.Int64
				pub, err := natspub.NewJetStream(js, natspub.WithSubjectPrefix(prefix))
				if err != nil {
					b.Fatal(err)
				}
				rl, err := relay.New(db, d, pub, relay.Config{Retention: -1, Hooks: capHooks{&cur, &published}})
				if err != nil {
					b.Fatal(err)
				}
				ob, err := txoutbox.New(db, d, txoutbox.WithRelay(rl))
				if err != nil {
					b.Fatal(err)
				}
				// The reference: the same commits at -capacity.cpuat with no
				// relay; the rows stay pending for the drain below.
				var ref, drain capResult // drain: per event of the drain
				drainCPU := cpuMeter{servers: true}
				if *capCPUAt > 0 {
					plain, err := txoutbox.New(db, d)
					if err != nil {
						b.Fatal(err)
					}
					ref = capStep(b, plain, nil, *capCPUAt*before)
					b.Logf("%s: without a relay at %.0f/s (%.2f of baseline): reached %.0f/s; CPU µs per commit: machine %.0f, this process %.0f, servers: %s; context switches per commit %.1f",
						dbName, ref.offered, *capCPUAt, ref.reached, ref.machineUSPerCommit, ref.selfUSPerCommit, ref.servers, ref.switchesPerCommit)
					drainCPU.start()
				}
				rctx, cancel := context.WithCancel(ctx)
				relayDone := make(chan error, 1)
				go func() { relayDone <- rl.Run(rctx) }()
				// The relay takes its partitions on its first rebalance.
				for until := time.Now().Add(10 * time.Second); !rl.Owns(0); time.Sleep(5 * time.Millisecond) {
					if time.Now().After(until) {
						b.Fatal("capacity: the relay owns no partition after 10s")
					}
				}
				if *capCPUAt > 0 {
					for until := time.Now().Add(2 * time.Minute); published.Load() < ref.committed; time.Sleep(time.Millisecond) {
						if time.Now().After(until) {
							b.Fatalf("capacity: drain: %d of %d published after 2 minutes", published.Load(), ref.committed)
						}
					}
					drainCPU.stop(int(ref.committed))
					// Settle before the search: the drain's last marks are
					// still being written, and the first step would measure
					// them (its p99 was 14-80 ms at 0.1 of the baseline).
					for until := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
						st, err := rl.Stats(ctx)
						if err == nil && st.Pending == 0 {
							break
						}
						if time.Now().After(until) {
							b.Fatalf("capacity: drain: rows still pending a minute after their publish (%v)", err)
						}
					}
					time.Sleep(time.Second)
					drain.setCPU(&drainCPU)
					b.Logf("%s: drain of %d events: CPU µs per event: machine %.0f, this process %.0f, servers: %s; context switches per event %.1f", dbName, ref.committed,
						drain.machineUSPerCommit, drain.selfUSPerCommit, drain.servers, drain.switchesPerCommit)
				}
				// The consumer starts after the drain and takes only what
				// the search publishes.
				cons, err := subStream.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{DeliverPolicy: jetstream.DeliverNewPolicy})
				if err != nil {
					b.Fatal(err)
				}
				cc, err := cons.Consume(func(m jetstream.Msg) {
					tr := cur.Load()
					if tr == nil {
						return
					}
					now := tr.now()
					if e := tr.get(m.Headers().Get(natspub.HeaderEventID)); e != nil && e.recv.CompareAndSwap(0, now) {
						tr.n.Add(1)
					}
				})
				if err != nil {
					b.Fatal(err)
				}
				stopProfile := startProfile(b, *capProfile)

				var best, first, atCPU capResult
				try := func(f float64) bool {
					tr := newLatTracker()
					cur.Store(tr)
					r := capStep(b, ob, tr, f*before)
					b.Logf("%s: offered %.0f/s (%.2f of baseline): reached %.0f/s, time-critical p50 %.2f ms, p99 %.2f ms (commit -> batch start p99 %.2f ms, batch start -> ack p99 %.2f ms, ack -> consumer p99 %.2f ms), sustained %v; "+
						"time-critical from a read: %d of %d (p99 %.2f ms; handed over p99 %.2f ms); hand-over batches %d (%.1f rows each), read batches %d (%.1f rows each); cpu-busy %.2f; CPU µs per commit: machine %.0f, this process %.0f, servers: %s",
						dbName, r.offered, f, r.reached, ms(r.p50), ms(r.p99), ms(r.claimP99), ms(r.pubP99), ms(r.delivP99), r.ok,
						r.read, r.measured, ms(r.readP99), ms(r.handedP99), r.fastBatches, perRow(r.fastRows, r.fastBatches), r.scanBatches, perRow(r.scanRows, r.scanBatches), r.cpuBusy, r.machineUSPerCommit, r.selfUSPerCommit, r.servers)
					if r.ok && r.reached > best.reached {
						best = r
					}
					if math.Abs(f-*capCPUAt) < 1e-9 {
						atCPU = r
					}
					return r.ok
				}
				for j, f := range steps {
					if try(f) {
						continue
					}
					first = capResult{offered: f * before}
					b.ReportMetric(f, "first-unsustained-fraction")
					if j > 0 {
						try((steps[j-1] + f) / 2)
					}
					break
				}
				stopProfile()
				cancel()
				if err := <-relayDone; err != nil {
					b.Error(err)
				}
				cc.Stop()
				cur.Store(nil)
				if _, err := db.ExecContext(ctx, "DELETE FROM "+d.Table()); err != nil {
					b.Fatal(err)
				}
				after := *capBase
				if after <= 0 {
					after = capBaseline(b, db, d, hand, parts)
				}
				base := (before + after) / 2
				b.ReportMetric(before, "base-before-commits/s")
				b.ReportMetric(after, "base-after-commits/s")
				b.ReportMetric(best.reached, "capacity-commits/s")
				b.ReportMetric(best.reached/base, "capacity/baseline")
				b.ReportMetric(ms(best.p99), "p99-ms-at-capacity")
				b.ReportMetric(first.offered, "first-unsustained-offered/s")
				if drainUS := drain.selfUSPerCommit; ref.selfUSPerCommit > 0 && drainUS > 0 {
					b.ReportMetric(ref.selfUSPerCommit, "ref-self-cpu-µs/commit")
					b.ReportMetric(drainUS, "drain-self-cpu-µs/event")
					if atCPU.selfUSPerCommit > 0 {
						hand := atCPU.selfUSPerCommit - ref.selfUSPerCommit
						b.ReportMetric(atCPU.selfUSPerCommit, "relay-self-cpu-µs/commit")
						b.ReportMetric(hand, "handover-self-cpu-µs/event")
						b.ReportMetric(hand/drainUS, "handover/drain-cpu")
						b.ReportMetric(atCPU.switchesPerCommit-ref.switchesPerCommit, "handover-ctx-switches/event")
					}
				}
				b.ReportMetric(0, "ns/op")
			}
		})
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func perRow(rows, batches int64) float64 {
	if batches == 0 {
		return 0
	}
	return float64(rows) / float64(batches)
}

// capResult is one step of the capacity search.
type capResult struct {
	offered, reached float64
	p50, p99         time.Duration
	// Of the time-critical p99: Commit returned -> the relay's batch
	// started (the hand-over, or waiting behind the batch in flight), and
	// batch start -> PubAck.
	claimP99, pubP99 time.Duration
	// PubAck -> the consumer received it (the broker's delivery).
	delivP99 time.Duration
	// Time-critical events the relay published from a read batch (not
	// handed over), of all measured, and their p99; the p99 of the
	// handed-over ones.
	read, measured        int
	readP99, handedP99    time.Duration
	fastRows, fastBatches int64 // hand-over lane batches in the step
	scanRows, scanBatches int64 // read lane batches in the step
	// Busy fraction of all cores (the whole machine) and this process's
	// CPU per commit, over the commit window.
	cpuBusy, selfUSPerCommit float64
	machineUSPerCommit       float64
	servers                  string // each server's CPU µs per commit
	ok                       bool
	committed                int64
	switchesPerCommit        float64 // this process's context switches per commit
}

// setCPU fills r's CPU figures from the step's meter.
func (r *capResult) setCPU(cpu *cpuMeter) {
	if cpu.ok && cpu.wall > 0 {
		r.cpuBusy = cpu.busyFraction()
		r.selfUSPerCommit = float64(cpu.self.Microseconds()) / float64(cpu.events)
		r.machineUSPerCommit, _ = cpu.perEvent()
		r.servers = cpu.split.perEvent(cpu.events)
	}
	r.switchesPerCommit = float64(cpu.switches) / float64(max(cpu.events, 1))
}

// capHooks is latHooks for the tracker of the current step; it also
// counts every published event.
type capHooks struct {
	cur       *atomic.Pointer[latTracker]
	published *atomic.Int64
}

func (h capHooks) BatchStart(ctx context.Context, info relay.BatchStartInfo) context.Context {
	if t := h.cur.Load(); t != nil {
		return latHooks{t}.BatchStart(ctx, info)
	}
	return ctx
}

func (h capHooks) BatchEnd(context.Context, relay.BatchEndInfo) {}

var (
	_ relay.Hooks         = capHooks{}
	_ relay.PublishedHook = capHooks{}
)

func (h capHooks) Published(ctx context.Context, msg relay.Message, d time.Duration) {
	h.published.Add(1)
	if t := h.cur.Load(); t != nil {
		latHooks{t}.Published(ctx, msg, d)
	}
}

// capStep offers rate commits/s for -capacity.window and waits for every
// time-critical event to reach the consumer. With tr nil it measures only
// the commits (rate reached and CPU) and waits for nothing.
func capStep(b *testing.B, ob *txoutbox.Outbox, tr *latTracker, rate float64) capResult {
	ctx := context.Background()
	var next atomic.Int64
	var failed atomic.Pointer[error]
	start := time.Now()
	deadline := start.Add(*capWindow)
	interval := time.Duration(float64(time.Second) / rate)
	var last atomic.Int64 // ns since start of the last commit's return
	var wg sync.WaitGroup
	cpu := cpuMeter{servers: true}
	cpu.start()
	for w := 0; w < *capWriters; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				k := next.Add(1) - 1
				due := start.Add(time.Duration(k) * interval)
				if !due.Before(deadline) || failed.Load() != nil {
					return
				}
				if wait := time.Until(due); wait > 0 {
					time.Sleep(wait)
				}
				critical := k%4 == 0
				var opts []txoutbox.TxOption
				if critical {
					opts = append(opts, txoutbox.TimeCritical())
				}
				tx, err := ob.Begin(ctx, nil, opts...)
				if err != nil {
					failed.CompareAndSwap(nil, &err)
					return
				}
				id, err := tx.Add(txoutbox.Event{AggregateType: "order", AggregateID: fmt.Sprintf("agg-%d", k%1000),
					EventType: "order.placed", Payload: payload, ContentType: "application/json"})
				if err != nil {
					_ = tx.Rollback()
					failed.CompareAndSwap(nil, &err)
					return
				}
				var e *latEvent
				if critical && tr != nil {
					e = tr.add(id)
				}
				if err := tx.Commit(); err != nil {
					failed.CompareAndSwap(nil, &err)
					return
				}
				if e != nil {
					e.commit.Store(tr.now())
				}
				for t := int64(time.Since(start)); ; {
					l := last.Load()
					if t <= l || last.CompareAndSwap(l, t) {
						break
					}
				}
			}
		}()
	}
	wg.Wait()
	committed := next.Load() - int64(*capWriters) // each writer drew one ticket it did not use
	cpu.stop(int(max(committed, 1)))
	if p := failed.Load(); p != nil {
		b.Fatalf("capacity: commit: %v", *p)
	}
	window := max(time.Duration(last.Load()), *capWindow)
	if tr == nil {
		r := capResult{offered: rate, reached: float64(committed) / window.Seconds(), committed: committed}
		r.setCPU(&cpu)
		return r
	}
	want := tr.committed()
	for until := time.Now().Add(60 * time.Second); tr.n.Load() < want; time.Sleep(2 * time.Millisecond) {
		if time.Now().After(until) {
			b.Fatalf("capacity: %d of %d time-critical events received after 60s", tr.n.Load(), want)
		}
	}
	var lat, claim, pubd, deliv, readLat, handedLat []time.Duration
	tr.mu.Lock()
	for _, e := range tr.ev {
		if c, r := e.commit.Load(), e.recv.Load(); c != 0 && r != 0 {
			lat = append(lat, time.Duration(r-c))
			if cl, a := e.claimed.Load(), e.ack.Load(); cl != 0 && a != 0 {
				claim = append(claim, time.Duration(cl-c))
				pubd = append(pubd, time.Duration(a-cl))
				deliv = append(deliv, time.Duration(r-a))
				if e.read.Load() {
					readLat = append(readLat, time.Duration(r-c))
				} else {
					handedLat = append(handedLat, time.Duration(r-c))
				}
			}
		}
	}
	tr.mu.Unlock()
	if len(lat) == 0 {
		b.Fatal("capacity: no samples")
	}
	q := func(s []time.Duration, p float64) time.Duration {
		if len(s) == 0 {
			return 0
		}
		slices.Sort(s)
		return s[min(len(s)-1, int(math.Ceil(p*float64(len(s))))-1)]
	}
	r := capResult{offered: rate, reached: float64(committed) / window.Seconds(), p50: q(lat, 0.5), p99: q(lat, 0.99),
		claimP99: q(claim, 0.99), pubP99: q(pubd, 0.99), delivP99: q(deliv, 0.99),
		read: len(readLat), measured: len(lat), readP99: q(readLat, 0.99), handedP99: q(handedLat, 0.99),
		fastRows: tr.fastRows.Load(), fastBatches: tr.fastBatches.Load(), scanRows: tr.scanRows.Load(), scanBatches: tr.scanBatches.Load()}
	r.setCPU(&cpu)
	r.ok = r.reached >= 0.95*rate && r.p99 <= capP99
	return r
}

// handInsert returns the INSERT a developer writes by hand for one event:
// the columns txoutbox fills, placeholders of the database.
func handInsert(dbName, table string) string {
	cols := "id, aggregate_type, aggregate_id, event_type, payload, content_type, headers, critical, created_at, next_attempt_at, part"
	ph := func(int) string { return "?" }
	if strings.HasPrefix(dbName, "postgres") {
		cols = strings.Replace(cols, "payload,", "payload_json,", 1)
		ph = func(n int) string { return fmt.Sprintf("$%d", n) }
	}
	var sb strings.Builder
	sb.WriteString("INSERT INTO " + table + " (" + cols + ") VALUES (")
	for i := 1; i <= 11; i++ {
		if i > 1 {
			sb.WriteString(", ")
		}
		sb.WriteString(ph(i))
	}
	sb.WriteString(")")
	return sb.String()
}

// capBaseline commits the capacity benchmark's transaction (one outbox row,
// every fourth critical) with a hand-written INSERT on -capacity.writers
// writers flat out for -capacity.window, no relay running, and returns
// commits/s. The rows are deleted afterwards (untimed).
func capBaseline(b *testing.B, db *sql.DB, d dialects.Dialect, q string, parts int) float64 {
	ctx := context.Background()
	var genMu sync.Mutex
	var n atomic.Int64
	var failed atomic.Pointer[error]
	cpu := cpuMeter{servers: true}
	cpu.start()
	start := time.Now()
	deadline := start.Add(*capWindow)
	var wg sync.WaitGroup
	for w := 0; w < *capWriters; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) && failed.Load() == nil {
				k := n.Add(1)
				agg := fmt.Sprintf("agg-%d", k%1000)
				now := time.Now().UTC()
				genMu.Lock()
				id := uuid.Must(uuid.NewV7()).String()
				genMu.Unlock()
				err := func() error {
					tx, err := db.BeginTx(ctx, nil)
					if err != nil {
						return err
					}
					defer tx.Rollback() //nolint:errcheck // no-op after Commit
					if _, err := tx.ExecContext(ctx, q, id, "order", agg, "order.placed", string(payload), "application/json",
						"{}", k%4 == 0, now, now, dialects.PartitionOf("order", agg, parts)); err != nil {
						return err
					}
					return tx.Commit()
				}()
				if err != nil {
					failed.CompareAndSwap(nil, &err)
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	cpu.stop(int(max(n.Load(), 1)))
	if p := failed.Load(); p != nil {
		b.Fatalf("capacity baseline: %v", *p)
	}
	if us, ok := cpu.perEvent(); ok {
		b.Logf("baseline: %.0f commits/s; cpu-busy %.2f; CPU µs per commit: machine %.0f, this process %.0f, servers: %s",
			float64(n.Load())/elapsed.Seconds(), cpu.busyFraction(), us,
			float64(cpu.self.Microseconds())/float64(cpu.events), cpu.split.perEvent(cpu.events))
	}
	if _, err := db.ExecContext(ctx, "DELETE FROM "+d.Table()); err != nil {
		b.Fatal(err)
	}
	return float64(n.Load()) / elapsed.Seconds()
}
