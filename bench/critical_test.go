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
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/internal/e2e/relayproc"
	"github.com/jitoutbox/jitoutbox/internal/testnats"
	"github.com/jitoutbox/jitoutbox/notify"
	"github.com/jitoutbox/jitoutbox/notify/natsnotify"
	"github.com/jitoutbox/jitoutbox/notify/pgnotify"
	"github.com/jitoutbox/jitoutbox/relay/natspub"
	"github.com/jitoutbox/jitoutbox/txoutbox"
)

var (
	critHot      = flag.Int("critical.hot", 20_000, "BenchmarkCriticalBehindBacklog: backlog events of the one hot aggregate")
	critOthers   = flag.Int("critical.others", 2_000, "BenchmarkCriticalBehindBacklog: backlog events spread over 200 other aggregates")
	critRelays   = flag.Int("critical.relays", 4, "BenchmarkCriticalBehindBacklog: jitoutbox-relay processes")
	critRate     = flag.Int("critical.rate", 50, "BenchmarkCriticalBehindBacklog: time-critical commits per second")
	critAfter    = flag.Duration("critical.after", 3*time.Second, "BenchmarkCriticalBehindBacklog: how long it goes on committing after the backlog drained")
	critDBs      = flag.String("critical.dbs", "postgres", "BenchmarkCriticalBehindBacklog: comma-separated databases: postgres (pgnotify wakes), mysql (MariaDB, natsnotify wakes)")
	critRelayBin = flag.String("critical.relaybin", "", "BenchmarkCriticalBehindBacklog: a jitoutbox-relay binary to run (default: build this module's), e.g. another version's for a side-by-side run")
)

// BenchmarkCriticalBehindBacklog measures time-critical latency while a
// backlog drains, relays in other processes: critical.relays
// jitoutbox-relay processes share the table; a backlog of critical.hot
// events of one aggregate and critical.others events of other aggregates
// is written, then this process commits time-critical events of fresh
// aggregates at critical.rate per second (txoutbox with a cross-process
// notifier: pgnotify on PostgreSQL, natsnotify on MariaDB) until the
// backlog has drained and critical.after longer. JetStream consumers in
// this process receive everything: the time-critical events (aggregate
// type "urgent") on a consumer of their own, as the service that needs
// them would. It reports commit-to-receive p50 and
// p99 of the time-critical events committed while the backlog drained,
// their p99 after it, and the drain's duration (from the end of the
// backlog's write to its last event received). The hot aggregate's events
// go one per Publish call (one aggregate: one wave each), so the relay
// owning its partition is deep in a chain of reads for the whole drain.
func BenchmarkCriticalBehindBacklog(b *testing.B) {
	bin := *critRelayBin
	if bin == "" {
		bin = relayproc.BuildT(b)
	}
	for _, name := range strings.Split(*critDBs, ",") {
		b.Run(fmt.Sprintf("%s/relays=%d", name, *critRelays), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				criticalBehindBacklog(b, bin, name)
			}
		})
	}
}

func criticalBehindBacklog(b *testing.B, bin, name string) {
	b.StopTimer()
	url := testnats.URL(b)
	nc := testnats.Connect(b, url)
	js, err := jetstream.New(nc)
	if err != nil {
		b.Fatal(err)
	}
	stream, prefix := testnats.Stream(b, js)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	b.Cleanup(wg.Wait)
	b.Cleanup(cancel)

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
	case "postgres":
		var dsn string
		db, d, dsn = openDBDSN(b, "postgres", 8)
		channel := testnats.RandomName("jit_crit_")
		n, err = pgnotify.NewNotifier(db, pgnotify.WithChannel(channel))
		args = []string{"-dialect", "postgres", "-dsn", dsn, "-wake", "pg", "-wake-channel", channel}
	case "mysql":
		var dsn string
		db, d, dsn = openDBDSN(b, "mysql", 8)
		subject := testnats.RandomName("jitcrit.")
		n, err = natsnotify.NewNotifier(nc, natsnotify.WithSubject(subject))
		args = []string{"-dialect", "mysql", "-dsn", dsn, "-wake", "nats", "-wake-subject", subject}
	default:
		b.Fatalf("unknown database %q (want postgres or mysql)", name)
	}
	if err != nil {
		b.Fatal(err)
	}
	wg.Add(1)
	go func() { defer wg.Done(); _ = n.Run(ctx) }()
	ob, err := txoutbox.New(db, d, txoutbox.WithNotifier(n))
	if err != nil {
		b.Fatal(err)
	}

	// Arrivals, by event id; the backlog's are counted down.
	var (
		mu       sync.Mutex
		arrived  = map[string]time.Time{}
		stored   = map[string]time.Time{} // when JetStream stored it
		backlog  = map[string]bool{}
		left     int
		drainEnd time.Time
		drained  = make(chan struct{})
	)
	// Two consumers: the time-critical events (aggregate type "urgent")
	// are received by their own, as a service that consumes them would, so
	// that their latency is not the time one consumer takes to work
	// through the backlog's messages ahead of them in the stream.
	consume := func(filter string, fn func(m jetstream.Msg, id string, at time.Time)) {
		cons, err := stream.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{FilterSubjects: []string{filter}})
		if err != nil {
			b.Fatal(err)
		}
		cc, err := cons.Consume(func(m jetstream.Msg) { fn(m, m.Headers().Get(natspub.HeaderEventID), time.Now()) })
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(cc.Stop)
	}
	consume(prefix+".order.>", func(_ jetstream.Msg, id string, at time.Time) {
		mu.Lock()
		defer mu.Unlock()
		if backlog[id] {
			delete(backlog, id)
			if left--; left == 0 {
				drainEnd = at
				close(drained)
			}
		}
	})
	consume(prefix+".urgent.>", func(m jetstream.Msg, id string, at time.Time) {
		mu.Lock()
		defer mu.Unlock()
		if _, ok := arrived[id]; !ok {
			arrived[id] = at
			if md, err := m.Metadata(); err == nil {
				stored[id] = md.Timestamp
			}
		}
	})

	for i := range *critRelays {
		p := relayproc.Start(b, bin, append(args, "-nats", url, "-subject-prefix", prefix, "-owner", "crit-"+strconv.Itoa(i),
			"-log-level", "info")...)
		if err := p.Log.Wait(30*time.Second, 1, `"wake source ready"`); err != nil {
			b.Fatal(err)
		}
	}
	waitBalanced(b, ctx, db, d, *critRelays)

	// The backlog, 1000 events a transaction: the hot aggregate's first.
	parts, err := d.Partitions(ctx, db)
	if err != nil {
		b.Fatal(err)
	}
	var evs []dialects.Event
	add := func(agg string) {
		now := time.Now().UTC().Truncate(time.Microsecond)
		ev := dialects.Event{ID: uuid.Must(uuid.NewV7()).String(), AggregateType: "order", AggregateID: agg, EventType: "order.changed",
			Payload: payload, ContentType: "application/json", CreatedAt: now, Partition: dialects.PartitionOf("order", agg, parts)}
		evs = append(evs, ev)
		backlog[ev.ID] = true
	}
	for range *critHot {
		add("hot")
	}
	for i := range *critOthers {
		add("other-" + strconv.Itoa(i%200))
	}
	left = len(evs)
	for len(evs) > 0 {
		k := min(len(evs), 1000)
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			b.Fatal(err)
		}
		if err := d.Insert(ctx, tx, evs[:k]); err != nil {
			_ = tx.Rollback()
			b.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			b.Fatal(err)
		}
		evs = evs[k:]
	}
	drainStart := time.Now()
	n.Notify(nil) // the relays read the backlog at once

	// Time-critical commits of fresh aggregates at the rate, until the
	// drain is done and critAfter longer (at most 10 minutes).
	b.StartTimer()
	committed := map[string]time.Time{}
	tick := time.NewTicker(time.Second / time.Duration(*critRate))
	defer tick.Stop()
	deadline := time.After(10 * time.Minute)
	var stopAt <-chan time.Time
	waitDrain := drained
commits:
	for i := 0; ; i++ {
		select {
		case <-tick.C:
		case <-waitDrain:
			waitDrain = nil
			stopAt = time.After(*critAfter)
			continue
		case <-stopAt:
			break commits
		case <-deadline:
			mu.Lock()
			l := left
			mu.Unlock()
			b.Fatalf("the backlog did not drain in 10 minutes (%d events left)", l)
		}
		tx, err := ob.Begin(ctx, nil, txoutbox.TimeCritical())
		if err != nil {
			b.Fatal(err)
		}
		id, err := tx.Add(txoutbox.Event{AggregateType: "urgent", AggregateID: strconv.Itoa(i), EventType: "order.placed",
			Payload: payload, ContentType: "application/json"})
		if err != nil {
			b.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			b.Fatal(err)
		}
		committed[id] = time.Now()
	}
	b.StopTimer()
	waitFor := time.Now().Add(30 * time.Second)
	for {
		mu.Lock()
		all := len(arrived) >= len(committed)
		mu.Unlock()
		if all {
			break
		}
		if time.Now().After(waitFor) {
			b.Fatalf("time-critical events lost: %d of %d received", len(arrived), len(committed))
		}
		time.Sleep(10 * time.Millisecond)
	}
	mu.Lock()
	// toStream splits a latency: commit → stored in the stream (the
	// writer's wake, the relay's read and publish) and the rest, the
	// consumer's delivery.
	var during, after, toStream []time.Duration
	type slow struct {
		id                string
		at, lat, toStream time.Duration
	}
	var slowest []slow
	for id, at := range committed {
		lat := arrived[id].Sub(at)
		if at.Before(drainEnd) {
			during = append(during, lat)
			st := stored[id].Sub(at)
			toStream = append(toStream, st)
			slowest = append(slowest, slow{id, at.Sub(drainStart), lat, st})
		} else {
			after = append(after, lat)
		}
	}
	end := drainEnd
	mu.Unlock()
	// Where in the drain the slowest events were committed (-test.v): the
	// start, when every relay reads at once, or all along.
	slices.SortFunc(slowest, func(a, b slow) int { return int(b.lat - a.lat) })
	for _, s := range slowest[:min(len(slowest), 5)] {
		b.Logf("slow: %s committed %v into the drain (of %v), %v to receive, %v of it to the stream", s.id, s.at.Round(time.Millisecond),
			end.Sub(drainStart).Round(time.Millisecond), s.lat.Round(100*time.Microsecond), s.toStream.Round(100*time.Microsecond))
	}
	pct := func(lat []time.Duration, q float64) float64 {
		if len(lat) == 0 {
			return 0
		}
		slices.Sort(lat)
		return float64(lat[min(len(lat)-1, int(q*float64(len(lat))))].Microseconds()) / 1000
	}
	b.ReportMetric(pct(during, 0.50), "drain-crit-p50-ms")
	b.ReportMetric(pct(during, 0.99), "drain-crit-p99-ms")
	b.ReportMetric(float64(len(during)), "drain-crit-n")
	b.ReportMetric(pct(toStream, 0.50), "drain-crit-stored-p50-ms")
	b.ReportMetric(pct(toStream, 0.99), "drain-crit-stored-p99-ms")
	b.ReportMetric(end.Sub(drainStart).Seconds()*1000, "drain-ms")
	b.ReportMetric(pct(after, 0.50), "after-crit-p50-ms")
	b.ReportMetric(pct(after, 0.99), "after-crit-p99-ms")
}

// waitBalanced waits until relays relays own the table's partitions in
// equal shares (within one).
func waitBalanced(b *testing.B, ctx context.Context, db *sql.DB, d dialects.Dialect, relays int) {
	q := fmt.Sprintf("SELECT owner, COUNT(*) FROM %s_partitions WHERE owner IS NOT NULL GROUP BY owner", d.Table())
	deadline := time.Now().Add(60 * time.Second)
	for {
		rows, err := db.QueryContext(ctx, q)
		if err != nil {
			b.Fatal(err)
		}
		var counts []int
		for rows.Next() {
			var owner string
			var c int
			if err := rows.Scan(&owner, &c); err != nil {
				b.Fatal(err)
			}
			counts = append(counts, c)
		}
		rows.Close()
		if len(counts) == relays && slices.Max(counts)-slices.Min(counts) <= 1 {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("relays not balanced after 60s: %v", counts)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
