package bench

import (
	"bytes"
	"context"
	"database/sql"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/internal/testdb"
	"github.com/jitoutbox/jitoutbox/internal/testnats"
	"github.com/jitoutbox/jitoutbox/relay"
	"github.com/jitoutbox/jitoutbox/relay/natspub"
	"github.com/jitoutbox/jitoutbox/txoutbox"
)

var failoverTrials = flag.Int("failover.trials", 7, "SIGKILLs BenchmarkFailover times per database")

// Environment of the child relay of BenchmarkFailover (TestFailoverChild).
const (
	envFailoverChild   = "JITOUTBOX_BENCH_FAILOVER_CHILD" // owner name; unset: not a child
	envFailoverDialect = "JITOUTBOX_BENCH_FAILOVER_DIALECT"
	envFailoverDSN     = "JITOUTBOX_BENCH_FAILOVER_DSN"
	envFailoverNATS    = "JITOUTBOX_BENCH_FAILOVER_NATS"
	envFailoverPrefix  = "JITOUTBOX_BENCH_FAILOVER_PREFIX"
)

// TestFailoverChild is the relay process of BenchmarkFailover: the
// benchmark re-executes this test binary with the variables above set; the
// child runs one relay (rebalancing and polling hourly, so that it keeps
// every partition it took) until it is killed. Without them it skips.
func TestFailoverChild(t *testing.T) {
	owner := os.Getenv(envFailoverChild)
	if owner == "" {
		t.Skip("the child relay of BenchmarkFailover; runs only when the benchmark starts it")
	}
	driver := os.Getenv(envFailoverDialect)
	db, err := sql.Open(driver, os.Getenv(envFailoverDSN))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	d := testdb.NewDialect(t, driver)
	nc := testnats.Connect(t, os.Getenv(envFailoverNATS))
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := natspub.NewJetStream(js, natspub.WithSubjectPrefix(os.Getenv(envFailoverPrefix)))
	if err != nil {
		t.Fatal(err)
	}
	rl, err := relay.New(db, d, pub, relay.Config{Owner: owner, RebalanceInterval: time.Hour, PollInterval: time.Hour, Retention: -1})
	if err != nil {
		t.Fatal(err)
	}
	if err := rl.Run(context.Background()); err != nil { // until SIGKILL
		t.Fatal(err)
	}
}

// BenchmarkFailover measures failover after a SIGKILL of a relay, on
// PostgreSQL and MariaDB. Each trial starts a relay in a child process
// (this test binary re-executed: TestFailoverChild), waits until it owns
// every partition, starts a second relay in this process (default config;
// the child releases half the partitions to it), stops the child (SIGSTOP),
// commits one time-critical event in a partition of the child's, kills the
// child with SIGKILL and measures from the kill until a JetStream consumer
// receives the event (failover-*-ms) and until the relay here owns the
// event's partition (take-*-ms). -failover.trials trials per database.
func BenchmarkFailover(b *testing.B) {
	for _, dbName := range []string{"postgres", "mysql"} {
		b.Run(dbName, func(b *testing.B) {
			ctx := context.Background()
			var (
				db     *sql.DB
				dsn    string
				driver = dbName
			)
			if dbName == "postgres" {
				db, dsn = testdb.Postgres(b, "postgres")
			} else {
				db, dsn = testdb.MySQL(b)
			}
			d := testdb.NewDialect(b, driver)
			if err := d.Migrate(ctx, db); err != nil {
				b.Fatal(err)
			}
			parts, err := d.Partitions(ctx, db)
			if err != nil {
				b.Fatal(err)
			}
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
			subStream, err := subJS.Stream(ctx, stream.CachedInfo().Config.Name)
			if err != nil {
				b.Fatal(err)
			}
			var mu sync.Mutex
			recv := map[string]time.Time{}
			cons, err := subStream.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{})
			if err != nil {
				b.Fatal(err)
			}
			cc, err := cons.Consume(func(m jetstream.Msg) {
				now := time.Now()
				mu.Lock()
				recv[m.Headers().Get(natspub.HeaderEventID)] = now
				mu.Unlock()
			})
			if err != nil {
				b.Fatal(err)
			}
			defer cc.Stop()
			pub, err := natspub.NewJetStream(js, natspub.WithSubjectPrefix(prefix))
			if err != nil {
				b.Fatal(err)
			}
			var failover, take []time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				for trial := 0; trial < *failoverTrials; trial++ {
					f, tk := failoverTrial(b, db, d, parts, pub, driver, dsn, url, prefix, fmt.Sprintf("fo-%d-%d", i, trial), func(id string) (time.Time, bool) {
						mu.Lock()
						defer mu.Unlock()
						t, ok := recv[id]
						return t, ok
					})
					failover = append(failover, f)
					take = append(take, tk)
				}
			}
			b.StopTimer()
			ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
			slices.Sort(failover)
			slices.Sort(take)
			b.ReportMetric(ms(failover[len(failover)/2]), "failover-p50-ms")
			b.ReportMetric(ms(failover[len(failover)-1]), "failover-max-ms")
			b.ReportMetric(ms(failover[0]), "failover-min-ms")
			b.ReportMetric(ms(take[len(take)/2]), "take-p50-ms")
			b.ReportMetric(ms(take[len(take)-1]), "take-max-ms")
			b.ReportMetric(float64(len(failover)), "trials")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// failoverTrial runs one kill and returns the time from the SIGKILL to the
// consumer's receipt of the event, and to the take of its partition here.
func failoverTrial(b *testing.B, db *sql.DB, d dialects.Dialect, parts int, pub relay.Publisher, driver, dsn, natsURL, prefix, name string,
	received func(id string) (time.Time, bool)) (failover, take time.Duration) {
	ctx := context.Background()
	child := exec.Command(os.Args[0], "-test.run=^TestFailoverChild$", "-test.count=1")
	child.Env = append(os.Environ(), envFailoverChild+"="+name+"-child", envFailoverDialect+"="+driver,
		envFailoverDSN+"="+dsn, envFailoverNATS+"="+natsURL, envFailoverPrefix+"="+prefix)
	var childOut bytes.Buffer
	child.Stdout, child.Stderr = &childOut, &childOut
	if err := child.Start(); err != nil {
		b.Fatal(err)
	}
	childDone := make(chan struct{})
	go func() { _ = child.Wait(); close(childDone) }()
	killChild := func() {
		_ = child.Process.Signal(syscall.SIGKILL)
		<-childDone
	}
	defer killChild()

	// The child owns every partition.
	countOwned := func(owner string) int {
		var n int
		q := "SELECT COUNT(*) FROM " + d.Table() + "_partitions WHERE owner LIKE '" + owner + "%'"
		if err := db.QueryRowContext(ctx, q).Scan(&n); err != nil {
			b.Fatal(err)
		}
		return n
	}
	waitFor := func(what string, cond func() bool) {
		for until := time.Now().Add(30 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
			select {
			case <-childDone:
				b.Fatalf("failover: child relay exited while waiting for %s:\n%s", what, childOut.String())
			default:
			}
			if time.Now().After(until) {
				b.Fatalf("failover: no %s after 30s", what)
			}
		}
	}
	waitFor("child owning every partition", func() bool { return countOwned(name+"-child") == parts })

	// The relay here: it sees the child, owns nothing, and watches it.
	rl, err := relay.New(db, d, pub, relay.Config{Owner: name + "-here", Retention: -1})
	if err != nil {
		b.Fatal(err)
	}
	rctx, cancel := context.WithCancel(ctx)
	relayDone := make(chan error, 1)
	go func() { relayDone <- rl.Run(rctx) }()
	defer func() {
		cancel()
		if err := <-relayDone; err != nil {
			b.Error(err)
		}
		if _, err := db.ExecContext(ctx, "DELETE FROM "+d.Table()); err != nil {
			b.Error(err)
		}
	}()
	waitFor("second relay session", func() bool {
		var n int
		q := "SELECT COUNT(*) FROM " + d.Table() + "_relays WHERE name = '" + name + "-here'"
		if err := db.QueryRowContext(ctx, q).Scan(&n); err != nil {
			b.Fatal(err)
		}
		return n == 1
	})
	// The child sees it join and releases its share to it; once they have
	// split the partitions, the relay here watches the child.
	waitFor("the partitions split between the child and the relay here", func() bool {
		return countOwned(name+"-here") >= parts/2 && countOwned(name+"-child")+countOwned(name+"-here") == parts
	})
	time.Sleep(100 * time.Millisecond) // its watch of the child starts after its view

	// Freeze the child, commit an event to its partition, kill it.
	if err := child.Process.Signal(syscall.SIGSTOP); err != nil {
		b.Fatal(err)
	}
	ob, err := txoutbox.New(db, d, txoutbox.WithRelay(rl))
	if err != nil {
		b.Fatal(err)
	}
	tx, err := ob.Begin(ctx, nil, txoutbox.TimeCritical())
	if err != nil {
		b.Fatal(err)
	}
	// An aggregate in one of the child's partitions.
	agg := name + "-agg"
	for k := 0; rl.Owns(dialects.PartitionOf("order", agg, parts)); k++ {
		agg = fmt.Sprintf("%s-agg%d", name, k)
	}
	id, err := tx.Add(txoutbox.Event{AggregateType: "order", AggregateID: agg, EventType: "order.placed",
		Payload: payload, ContentType: "application/json"})
	if err != nil {
		b.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	part := dialects.PartitionOf("order", agg, parts)
	time.Sleep(20 * time.Millisecond)
	if rl.Owns(part) {
		b.Fatalf("failover: the relay here owns partition %d before the kill", part)
	}
	killed := time.Now()
	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		b.Fatal(err)
	}
	var took time.Time
	for until := killed.Add(60 * time.Second); ; time.Sleep(100 * time.Microsecond) {
		now := time.Now()
		if took.IsZero() && rl.Owns(part) {
			took = now
		}
		if at, ok := received(id); ok {
			if took.IsZero() {
				took = at
			}
			return at.Sub(killed), took.Sub(killed)
		}
		if now.After(until) {
			b.Fatalf("failover: event not received 60s after the kill (partition %d owned here: %v)", part, rl.Owns(part))
		}
	}
}
