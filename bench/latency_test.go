package bench

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/internal/testnats"
	"github.com/jitoutbox/jitoutbox/notify"
	"github.com/jitoutbox/jitoutbox/relay"
	"github.com/jitoutbox/jitoutbox/relay/natspub"
	"github.com/jitoutbox/jitoutbox/txoutbox"
)

var (
	latDuration = flag.Duration("latency.duration", 3*time.Second, "how long each BenchmarkLatency case commits events")
	latOut      = flag.String("latency.out", "", "append raw BenchmarkLatency samples (TSV: benchmark, kind, microseconds) to this file")
	latRate     = flag.Int("latency.rate", 200, "commits per second of the light load")
	latWriters  = flag.Int("latency.writers", 8, "writers of the heavy load (each commits as fast as it can)")
	latDBs      = flag.String("latency.dbs", "postgres,postgres-pgx,mysql,sqlite", "comma-separated databases BenchmarkLatency and BenchmarkLatencyStages run on (postgres = lib/pq, postgres-pgx = pgx stdlib, mysql, sqlite)")
)

// latMode is one way an event reaches the relay.
type latMode struct {
	name string
	// critical commits with txoutbox.TimeCritical; wake wires the relay to
	// the Outbox with txoutbox.WithRelay (the hand-over of committed rows
	// of its partitions for critical commits, lazy wakes for ordinary
	// ones).
	critical, wake bool
	// poll is the relay's PollInterval (0: the default).
	poll time.Duration
}

var latModes = []latMode{
	{name: "critical", critical: true, wake: true},
	{name: "ordinary", wake: true},
	{name: "poll-100ms", poll: 100 * time.Millisecond},
	{name: "poll-1s", poll: time.Second},
}

// latOpen opens an isolated database of the named kind with its dialect
// migrated.
func latOpen(b *testing.B, name string) (*sql.DB, dialects.Dialect) {
	return openDB(b, name, 32)
}

// latEvent holds the instants (ns since the tracker's base, 0 when not yet
// seen) of one event's way from COMMIT to the consumer.
type latEvent struct {
	commit, claimed, ack, recv atomic.Int64
	// read: the relay published the event from a read batch (its read
	// lane), not from a hand-over.
	read atomic.Bool
}

// latTracker records per-event instants keyed by event id.
type latTracker struct {
	base time.Time
	mu   sync.Mutex
	ev   map[string]*latEvent
	n    atomic.Int64 // events received

	// Batches the relay claimed, by the fast path (ids of time-critical
	// commits) and by scanning, and their rows.
	fastBatches, fastRows, scanBatches, scanRows atomic.Int64
}

func newLatTracker() *latTracker {
	return &latTracker{base: time.Now(), ev: make(map[string]*latEvent)}
}

// now returns ns since base (always > 0).
func (t *latTracker) now() int64 { return int64(time.Since(t.base)) + 1 }

func (t *latTracker) add(id string) *latEvent {
	e := &latEvent{}
	t.mu.Lock()
	t.ev[id] = e
	t.mu.Unlock()
	return e
}

func (t *latTracker) get(id string) *latEvent {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.ev[id]
}

func (t *latTracker) drop(id string) {
	t.mu.Lock()
	delete(t.ev, id)
	t.mu.Unlock()
}

func (t *latTracker) committed() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	var n int64
	for _, e := range t.ev {
		if e.commit.Load() != 0 {
			n++
		}
	}
	return n
}

type latBatchStartKey struct{}

// latBatchStart is what BatchStart leaves in the batch's context.
type latBatchStart struct {
	at   int64
	fast bool
}

// latHooks timestamps claims (BatchStart) and acknowledgements (Published).
type latHooks struct{ t *latTracker }

var (
	_ relay.Hooks         = latHooks{}
	_ relay.PublishedHook = latHooks{}
)

func (h latHooks) BatchStart(ctx context.Context, info relay.BatchStartInfo) context.Context {
	if info.FastPath {
		h.t.fastBatches.Add(1)
		h.t.fastRows.Add(int64(info.Size))
	} else {
		h.t.scanBatches.Add(1)
		h.t.scanRows.Add(int64(info.Size))
	}
	return context.WithValue(ctx, latBatchStartKey{}, latBatchStart{at: h.t.now(), fast: info.FastPath})
}

func (h latHooks) BatchEnd(context.Context, relay.BatchEndInfo) {}

func (h latHooks) Published(ctx context.Context, msg relay.Message, _ time.Duration) {
	now := h.t.now()
	if e := h.t.get(msg.ID); e != nil {
		e.ack.Store(now)
		if c, ok := ctx.Value(latBatchStartKey{}).(latBatchStart); ok {
			e.claimed.Store(c.at)
			e.read.Store(!c.fast)
		}
	}
}

// BenchmarkLatency measures commit-to-delivery latency: from Commit
// returning to a JetStream consumer receiving the event (and to the relay
// seeing the PubAck), for time-critical commits woken in process, ordinary
// commits (lazy wake), and poll-only relays at 100 ms and 1 s, at a light
// steady load and a heavy one. Run it with -benchtime=1x; each case commits
// for -latency.duration.
func BenchmarkLatency(b *testing.B) {
	for _, dbName := range strings.Split(*latDBs, ",") {
		b.Run(dbName, func(b *testing.B) {
			db, d := latOpen(b, dbName)
			url := testnats.URL(b)
			pubNC := testnats.Connect(b, url)
			js, err := jetstream.New(pubNC, jetstream.WithPublishAsyncMaxPending(4096))
			if err != nil {
				b.Fatal(err)
			}
			subNC := testnats.Connect(b, url)
			subJS, err := jetstream.New(subNC)
			if err != nil {
				b.Fatal(err)
			}
			for _, mode := range latModes {
				for _, load := range []string{"light", "heavy"} {
					b.Run(mode.name+"/"+load, func(b *testing.B) {
						for i := 0; i < b.N; i++ {
							latencyCase(b, db, d, js, subJS, mode, load == "heavy")
						}
					})
				}
			}
		})
	}
}

// latencyCase runs one window of commits through a fresh relay and stream
// and reports the percentiles.
func latencyCase(b *testing.B, db *sql.DB, d dialects.Dialect, js, subJS jetstream.JetStream, mode latMode, heavy bool) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stream, prefix := testnats.Stream(b, js)
	subStream, err := subJS.Stream(ctx, stream.CachedInfo().Config.Name)
	if err != nil {
		b.Fatal(err)
	}
	tr := newLatTracker()

	// Consumer: an ordered JetStream consumer on its own connection.
	cons, err := subStream.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{})
	if err != nil {
		b.Fatal(err)
	}
	cc, err := cons.Consume(func(m jetstream.Msg) {
		now := tr.now()
		if e := tr.get(m.Headers().Get(natspub.HeaderEventID)); e != nil && e.recv.CompareAndSwap(0, now) {
			tr.n.Add(1)
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
	cfg := relay.Config{PollInterval: mode.poll, Hooks: latHooks{tr}, Retention: -1}
	var obOpts []txoutbox.Option
	rl, err := relay.New(db, d, pub, cfg)
	if err != nil {
		b.Fatal(err)
	}
	if mode.wake {
		obOpts = append(obOpts, txoutbox.WithRelay(rl))
	}
	ob, err := txoutbox.New(db, d, obOpts...)
	if err != nil {
		b.Fatal(err)
	}
	rctx, cancelRelay := context.WithCancel(ctx)
	relayDone := make(chan error, 1)
	go func() { relayDone <- rl.Run(rctx) }()
	var stopOnce sync.Once
	stopRelay := func() {
		stopOnce.Do(func() {
			cancelRelay()
			if err := <-relayDone; err != nil {
				b.Error(err)
			}
		})
	}
	defer stopRelay()
	latAwaitOwnership(b, ctx, db, d, rl)

	var txOpts []txoutbox.TxOption
	if mode.critical {
		txOpts = append(txOpts, txoutbox.TimeCritical())
	}
	var seq atomic.Int64
	var failed atomic.Pointer[error]
	commitOne := func() bool {
		key := fmt.Sprintf("agg-%d", seq.Add(1)%1000)
		tx, err := ob.Begin(ctx, nil, txOpts...)
		if err != nil {
			failed.CompareAndSwap(nil, &err)
			return false
		}
		id, err := tx.Add(txoutbox.Event{AggregateType: "order", AggregateID: key, EventType: "order.placed",
			Payload: payload, ContentType: "application/json"})
		if err != nil {
			_ = tx.Rollback()
			failed.CompareAndSwap(nil, &err)
			return false
		}
		e := tr.add(id)
		if err := tx.Commit(); err != nil {
			tr.drop(id)
			failed.CompareAndSwap(nil, &err)
			return false
		}
		e.commit.Store(tr.now())
		return true
	}

	b.ResetTimer()
	start := time.Now()
	deadline := start.Add(*latDuration)
	var wg sync.WaitGroup
	if heavy {
		for w := 0; w < *latWriters; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for time.Now().Before(deadline) && commitOne() {
				}
			}()
		}
	} else {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tick := time.NewTicker(time.Second / time.Duration(*latRate))
			defer tick.Stop()
			for time.Now().Before(deadline) {
				<-tick.C
				if !commitOne() {
					return
				}
			}
		}()
	}
	wg.Wait()
	window := time.Since(start)
	if p := failed.Load(); p != nil {
		b.Fatalf("commit: %v", *p)
	}

	// Wait until every committed event has reached the consumer.
	want := tr.committed()
	wait := 30*time.Second + 2*max(mode.poll, relay.DefaultLazyDelay)
	for until := time.Now().Add(wait); tr.n.Load() < want; {
		if time.Now().After(until) {
			b.Fatalf("only %d of %d events received after %s", tr.n.Load(), want, wait)
		}
		time.Sleep(2 * time.Millisecond)
	}
	b.StopTimer()
	latReport(b, tr, want, window)

	// Leave an empty table for the next case.
	stopRelay()
	if _, err := db.ExecContext(context.Background(), "DELETE FROM "+d.Table()); err != nil {
		b.Fatal(err)
	}
}

// latAwaitOwnership waits until rl owns every partition of the table. The
// window starts then: a commit before the relay owns its partition is not
// handed over but read at the take-over, and a heavy window's first
// ~100 ms of such commits (about 2% of its samples) would be its p99.
func latAwaitOwnership(b *testing.B, ctx context.Context, db *sql.DB, d dialects.Dialect, rl *relay.Relay) {
	parts, err := d.Partitions(ctx, db)
	if err != nil {
		b.Fatal(err)
	}
	until := time.Now().Add(30 * time.Second)
	for {
		owned := 0
		for p := range parts {
			if rl.Owns(p) {
				owned++
			}
		}
		if owned == parts {
			return
		}
		if time.Now().After(until) {
			b.Fatalf("the relay owns %d of %d partitions after 30s", owned, parts)
		}
		time.Sleep(time.Millisecond)
	}
}

// latReport computes and reports percentiles and writes raw samples.
func latReport(b *testing.B, tr *latTracker, committed int64, window time.Duration) {
	var recv, ack, claim, publish, deliver, readRecv, fastRecv []int64
	tr.mu.Lock()
	for _, e := range tr.ev {
		c, r := e.commit.Load(), e.recv.Load()
		if c == 0 || r == 0 {
			continue
		}
		recv = append(recv, r-c)
		if a := e.ack.Load(); a != 0 {
			ack = append(ack, a-c)
			deliver = append(deliver, r-a)
			if cl := e.claimed.Load(); cl != 0 {
				claim = append(claim, cl-c)
				publish = append(publish, a-cl)
				if e.read.Load() {
					readRecv = append(readRecv, r-c)
				} else {
					fastRecv = append(fastRecv, r-c)
				}
			}
		}
	}
	tr.mu.Unlock()
	if len(recv) == 0 {
		b.Fatal("no samples")
	}
	ms := func(ns int64) float64 { return float64(ns) / 1e6 }
	pct := func(s []int64, p float64) int64 {
		if len(s) == 0 {
			return 0
		}
		i := int(p*float64(len(s))+0.5) - 1
		return s[min(max(i, 0), len(s)-1)]
	}
	for _, s := range [][]int64{recv, ack, claim, publish, deliver, readRecv, fastRecv} {
		slices.Sort(s)
	}
	b.ReportMetric(ms(pct(recv, 0.50)), "p50-ms")
	b.ReportMetric(ms(pct(recv, 0.90)), "p90-ms")
	b.ReportMetric(ms(pct(recv, 0.99)), "p99-ms")
	b.ReportMetric(ms(recv[len(recv)-1]), "max-ms")
	b.ReportMetric(ms(pct(ack, 0.50)), "ack-p50-ms")
	b.ReportMetric(ms(pct(ack, 0.99)), "ack-p99-ms")
	// Stages: Commit returned -> batch claimed (wake + claim statement(s),
	// or the hand-over, including any wait for the relay to finish its
	// previous batch); claimed -> PubAck (JetStream publish and ack); PubAck
	// -> consumer receive (p50 only; can be negative: the server delivers
	// and acks at about the same time). The p99 of the first two say which
	// stage the tail of p99-ms is in.
	b.ReportMetric(ms(pct(claim, 0.50)), "claim-p50-ms")
	b.ReportMetric(ms(pct(claim, 0.99)), "claim-p99-ms")
	b.ReportMetric(ms(pct(publish, 0.50)), "pub-p50-ms")
	b.ReportMetric(ms(pct(publish, 0.99)), "pub-p99-ms")
	b.ReportMetric(ms(pct(deliver, 0.50)), "deliver-p50-ms")
	b.ReportMetric(float64(committed)/window.Seconds(), "commits/s")
	// How the relay claimed: batches per second over the window and rows
	// per batch, fast path (claim by id) and scan.
	perBatch := func(rows, batches int64) float64 {
		if batches == 0 {
			return 0
		}
		return float64(rows) / float64(batches)
	}
	b.ReportMetric(float64(tr.fastBatches.Load()+tr.scanBatches.Load())/window.Seconds(), "batches/s")
	b.ReportMetric(perBatch(tr.fastRows.Load(), tr.fastBatches.Load()), "fast-rows/batch")
	b.ReportMetric(perBatch(tr.scanRows.Load(), tr.scanBatches.Load()), "scan-rows/batch")
	// Events of the measured kind that the relay published from a read
	// batch rather than a hand-over (a time-critical row that could not be
	// handed over: an earlier row of its aggregate was pending at the
	// flush, or the hand-over queue was full), as a fraction of the
	// samples, and their own p50 (Commit returned -> consumer).
	b.ReportMetric(float64(len(readRecv))/float64(len(recv)), "read-frac")
	b.ReportMetric(ms(pct(readRecv, 0.50)), "read-p50-ms")
	// The events handed over (or critically read) alone, and those read
	// alone: once read-frac nears 1%, the tail of p99-ms is the read
	// lane's.
	b.ReportMetric(ms(pct(fastRecv, 0.99)), "fast-p99-ms")
	b.ReportMetric(ms(pct(readRecv, 0.99)), "read-p99-ms")
	b.ReportMetric(float64(len(recv)), "samples")
	b.ReportMetric(0, "ns/op")

	if *latOut == "" {
		return
	}
	f, err := os.OpenFile(*latOut, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		b.Fatal(err)
	}
	var sb strings.Builder
	for _, v := range recv {
		fmt.Fprintf(&sb, "%s\tcommit-recv\t%.1f\n", b.Name(), float64(v)/1e3)
	}
	for _, v := range ack {
		fmt.Fprintf(&sb, "%s\tcommit-ack\t%.1f\n", b.Name(), float64(v)/1e3)
	}
	if _, err := f.WriteString(sb.String()); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
}

// stageTimer collects durations of one stage.
type stageTimer struct {
	name string
	d    []time.Duration
}

func (s *stageTimer) report(b *testing.B) {
	if len(s.d) == 0 {
		return
	}
	slices.Sort(s.d)
	p := func(q float64) float64 {
		i := min(max(int(q*float64(len(s.d))+0.5)-1, 0), len(s.d)-1)
		return float64(s.d[i].Nanoseconds()) / 1e3
	}
	b.ReportMetric(p(0.5), s.name+"-p50-us")
	b.ReportMetric(p(0.99), s.name+"-p99-us")
}

// BenchmarkLatencyStages times, one at a time and with nothing else of ours
// running, each stage a time-critical event can pass through, so that the
// figures of BenchmarkLatency can be split: the in-process wake (a
// notify.Local signal), a SELECT 1 round trip, the dialect's Read of one
// owned partition holding the event (what a relay woken across processes
// does; in process the committed row is handed over without a read), the
// fenced Mark, a JetStream publish awaiting its ack through natspub,
// JetStream publish to consumer receive, and a bare synchronous JetStream
// publish (jspub-bare, the broker's own cost). Every iteration commits one
// fresh event first (untimed).
func BenchmarkLatencyStages(b *testing.B) {
	for _, dbName := range strings.Split(*latDBs, ",") {
		b.Run(dbName, func(b *testing.B) {
			ctx := context.Background()
			db, d := latOpen(b, dbName)
			url := testnats.URL(b)
			js, err := jetstream.New(testnats.Connect(b, url))
			if err != nil {
				b.Fatal(err)
			}
			subJS, err := jetstream.New(testnats.Connect(b, url))
			if err != nil {
				b.Fatal(err)
			}
			stream, prefix := testnats.Stream(b, js)
			got := consumeEventIDs(b, ctx, subJS, stream.CachedInfo().Config.Name)
			pub, err := natspub.NewJetStream(js, natspub.WithSubjectPrefix(prefix))
			if err != nil {
				b.Fatal(err)
			}
			ob, err := txoutbox.New(db, d)
			if err != nil {
				b.Fatal(err)
			}
			parts, err := d.Partitions(ctx, db)
			if err != nil {
				b.Fatal(err)
			}
			sess, err := d.OpenSession(ctx, db, "stages", time.Minute)
			if err != nil {
				b.Fatal(err)
			}
			defer sess.Close()
			all := make([]int, parts)
			for p := range all {
				all[p] = p
			}
			if taken, err := sess.Take(ctx, all, time.Now()); err != nil || len(taken) != parts {
				b.Fatalf("stages: took %d of %d partitions: %v", len(taken), parts, err)
			}
			local := notify.NewLocal()
			lctx, lcancel := context.WithCancel(ctx)
			defer lcancel()
			wakes := notify.NewWakes()
			if err := local.Listen(lctx, wakes); err != nil {
				b.Fatal(err)
			}
			st := map[string]*stageTimer{}
			names := []string{"wake", "select1", "read", "mark", "jspub", "jsrecv", "jspub-bare"}
			for _, n := range names {
				st[n] = &stageTimer{name: n}
			}
			// Each event has its own aggregate, so nothing of its aggregate
			// is pending before it.
			var aggSeq int
			commit := func() (string, int) {
				tx, err := ob.Begin(ctx, nil)
				if err != nil {
					b.Fatal(err)
				}
				aggSeq++
				agg := fmt.Sprintf("stage-%d", aggSeq)
				id, err := tx.Add(txoutbox.Event{AggregateType: "order", AggregateID: agg, EventType: "order.placed",
					Payload: payload, ContentType: "application/json"})
				if err != nil {
					b.Fatal(err)
				}
				if err := tx.Commit(); err != nil {
					b.Fatal(err)
				}
				return id, dialects.PartitionOf("order", agg, parts)
			}
			timeIt := func(name string, f func()) {
				t0 := time.Now()
				f()
				st[name].d = append(st[name].d, time.Since(t0))
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				id, part := commit()
				time.Sleep(time.Millisecond) // let the wake listener go idle, as between commits
				b.StartTimer()
				timeIt("wake", func() { local.Notify([]int{part}); <-wakes.C(); wakes.Take() })
				timeIt("select1", func() {
					var one int
					if err := db.QueryRowContext(ctx, "SELECT 1").Scan(&one); err != nil {
						b.Fatal(err)
					}
				})
				var recs []dialects.Record
				timeIt("read", func() {
					var res dialects.ReadResult
					res, err = d.Read(ctx, db, dialects.ReadRequest{Partitions: []int{part}, Limit: 500, Now: time.Now()})
					recs = res.Records
					if err != nil || len(recs) != 1 || recs[0].ID != id {
						b.Fatalf("read of partition %d: %d rows, %v", part, len(recs), err)
					}
				})
				msg := relay.Message{ID: recs[0].ID, AggregateType: recs[0].AggregateType, AggregateID: recs[0].AggregateID,
					EventType: recs[0].EventType, Payload: recs[0].Payload, ContentType: recs[0].ContentType,
					CreatedAt: recs[0].CreatedAt, Attempt: 1}
				errs := make([]error, 1)
				var t0 time.Time
				timeIt("jspub", func() {
					t0 = time.Now()
					pub.Publish(ctx, []relay.Message{msg}, errs)
					if errs[0] != nil {
						b.Fatal(errs[0])
					}
				})
				if rid := <-got; rid != id {
					b.Fatalf("received %s, want %s", rid, id)
				}
				st["jsrecv"].d = append(st["jsrecv"].d, time.Since(t0))
				// The broker's own cost: a bare synchronous JetStream publish
				// of the same payload on the same connection (no natspub).
				timeIt("jspub-bare", func() {
					if _, err := js.Publish(ctx, prefix+".bare", payload); err != nil {
						b.Fatal(err)
					}
				})
				<-got
				timeIt("mark", func() {
					n, err := d.Mark(ctx, db, dialects.Mark{Token: sess.Token(), Seqs: []int64{recs[0].Seq}, At: time.Now()})
					if err != nil || n != 1 {
						b.Fatalf("mark: %d rows, %v", n, err)
					}
				})
			}
			b.StopTimer()
			for _, n := range names {
				st[n].report(b)
			}
		})
	}
}

// consumeEventIDs consumes stream with an ordered consumer on subJS and
// sends each message's event id on the returned channel (buffer of one:
// the benchmark reads each before the next arrives); the consumer stops
// when b ends.
func consumeEventIDs(b *testing.B, ctx context.Context, subJS jetstream.JetStream, stream string) <-chan string {
	b.Helper()
	subStream, err := subJS.Stream(ctx, stream)
	if err != nil {
		b.Fatal(err)
	}
	got := make(chan string, 1)
	cons, err := subStream.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{})
	if err != nil {
		b.Fatal(err)
	}
	cc, err := cons.Consume(func(m jetstream.Msg) { got <- m.Headers().Get(natspub.HeaderEventID) })
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(cc.Stop)
	return got
}
