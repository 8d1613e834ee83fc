// Package watermill benchmarks Watermill's SQL forwarder
// (watermill-sql + components/forwarder, publishing to NATS JetStream through
// watermill-nats) on the same PostgreSQL and NATS server as jitoutbox's
// benchmarks, with the same event shape, so that bench/README.md can put the
// two side by side. It is its own Go module so that jitoutbox never depends
// on Watermill.
package watermill

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"flag"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	wmnats "github.com/ThreeDotsLabs/watermill-nats/v2/pkg/nats"
	wmsql "github.com/ThreeDotsLabs/watermill-sql/v3/pkg/sql"
	"github.com/ThreeDotsLabs/watermill/components/forwarder"
	"github.com/ThreeDotsLabs/watermill/message"
	_ "github.com/lib/pq"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

var (
	drainEvents = flag.Int("drain.events", 20_000, "backlog size for BenchmarkWatermillDrain")
	latDuration = flag.Duration("latency.duration", 3*time.Second, "how long each BenchmarkWatermillLatency case commits events")
	latOut      = flag.String("latency.out", "", "append raw latency samples (TSV: benchmark, kind, microseconds) to this file")
	latRate     = flag.Int("latency.rate", 200, "commits per second of the light load")
)

// payload is the event body jitoutbox's benchmarks use (~120 bytes of JSON).
var payload = []byte(`{"order_id":"order-000000000042","customer_id":"cust-17","total_cents":12345,"currency":"EUR","items":3}`)

// forwarderTopic is the SQL topic (table watermill_outbox) the forwarder reads.
const forwarderTopic = "outbox"

func randName(prefix string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// env holds one isolated PostgreSQL schema and one JetStream stream.
type env struct {
	db      *sql.DB
	nc      *nats.Conn
	js      jetstream.JetStream
	stream  jetstream.Stream
	subject string // destination topic = NATS subject
}

func setup(b *testing.B) *env {
	b.Helper()
	dsn := os.Getenv("JITOUTBOX_POSTGRES_DSN")
	natsURL := os.Getenv("JITOUTBOX_NATS_URL")
	if dsn == "" || natsURL == "" {
		b.Skip("JITOUTBOX_POSTGRES_DSN and JITOUTBOX_NATS_URL must be set")
	}
	ctx := context.Background()
	admin, err := sql.Open("postgres", dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer admin.Close()
	schema := randName("jit_wm_")
	if _, err := admin.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
		b.Fatalf("create schema: %v", err)
	}
	b.Cleanup(func() {
		a, err := sql.Open("postgres", dsn)
		if err != nil {
			return
		}
		defer a.Close()
		_, _ = a.ExecContext(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
	})
	u, err := url.Parse(dsn)
	if err != nil {
		b.Fatal("JITOUTBOX_POSTGRES_DSN must be a postgres:// URL")
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	db, err := sql.Open("postgres", u.String())
	if err != nil {
		b.Fatal(err)
	}
	db.SetMaxOpenConns(16)
	db.SetMaxIdleConns(16)
	b.Cleanup(func() { db.Close() })

	nc, err := nats.Connect(natsURL)
	if err != nil {
		b.Fatalf("nats: %v", err)
	}
	b.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		b.Fatal(err)
	}
	prefix := randName("test_")
	name := strings.ToUpper(randName("WM_"))
	stream, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: name, Subjects: []string{prefix + ".>"}, Storage: jetstream.FileStorage})
	if err != nil {
		b.Fatalf("create stream: %v", err)
	}
	b.Cleanup(func() { _ = js.DeleteStream(context.Background(), name) })

	// Create the forwarder's tables once (a publisher inside a transaction
	// may not).
	sub, err := wmsql.NewSubscriber(db, wmsql.SubscriberConfig{SchemaAdapter: wmsql.DefaultPostgreSQLSchema{},
		OffsetsAdapter: wmsql.DefaultPostgreSQLOffsetsAdapter{}, InitializeSchema: true}, watermill.NopLogger{})
	if err != nil {
		b.Fatal(err)
	}
	if err := sub.SubscribeInitialize(forwarderTopic); err != nil {
		b.Fatal(err)
	}
	_ = sub.Close()
	return &env{db: db, nc: nc, js: js, stream: stream, subject: prefix + ".order.order_placed"}
}

// newMessage builds one event with the metadata jitoutbox puts in headers.
func newMessage(aggID string) *message.Message {
	m := message.NewMessage(watermill.NewUUID(), payload)
	m.Metadata.Set("event_type", "order.placed")
	m.Metadata.Set("aggregate_type", "order")
	m.Metadata.Set("aggregate_id", aggID)
	m.Metadata.Set("content_type", "application/json")
	return m
}

// commit writes msgs to the outbox table in one transaction through the
// forwarder's publisher (watermill-sql inside the transaction).
func (e *env) commit(ctx context.Context, msgs ...*message.Message) error {
	tx, err := e.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck
	sp, err := wmsql.NewPublisher(tx, wmsql.PublisherConfig{SchemaAdapter: wmsql.DefaultPostgreSQLSchema{}}, watermill.NopLogger{})
	if err != nil {
		return err
	}
	fp := forwarder.NewPublisher(sp, forwarder.PublisherConfig{ForwarderTopic: forwarderTopic})
	if err := fp.Publish(e.subject, msgs...); err != nil {
		return err
	}
	return tx.Commit()
}

// startForwarder runs Watermill's forwarder (SQL subscriber polling every
// poll, 0 = Watermill's default of 1s) until the returned stop is called.
func (e *env) startForwarder(b *testing.B, poll time.Duration) (stop func()) {
	b.Helper()
	logger := watermill.NopLogger{}
	sub, err := wmsql.NewSubscriber(e.db, wmsql.SubscriberConfig{SchemaAdapter: wmsql.DefaultPostgreSQLSchema{},
		OffsetsAdapter: wmsql.DefaultPostgreSQLOffsetsAdapter{}, PollInterval: poll}, logger)
	if err != nil {
		b.Fatal(err)
	}
	pub, err := wmnats.NewPublisherWithNatsConn(e.nc, wmnats.PublisherPublishConfig{
		Marshaler:         &wmnats.NATSMarshaler{},
		SubjectCalculator: wmnats.DefaultSubjectCalculator,
		JetStream:         wmnats.JetStreamConfig{TrackMsgId: true},
	}, logger)
	if err != nil {
		b.Fatal(err)
	}
	fwd, err := forwarder.NewForwarder(sub, pub, logger, forwarder.Config{ForwarderTopic: forwarderTopic, CloseTimeout: 10 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- fwd.Run(context.Background()) }()
	<-fwd.Running()
	return func() {
		_ = fwd.Close()
		if err := <-done; err != nil {
			b.Errorf("forwarder: %v", err)
		}
		_ = sub.Close()
	}
}

// consume starts an ordered JetStream consumer that calls got with each
// message's Watermill UUID.
func (e *env) consume(b *testing.B, got func(uuid string)) (stop func()) {
	b.Helper()
	cons, err := e.stream.OrderedConsumer(context.Background(), jetstream.OrderedConsumerConfig{})
	if err != nil {
		b.Fatal(err)
	}
	cc, err := cons.Consume(func(m jetstream.Msg) { got(m.Headers().Get(wmnats.WatermillUUIDHdr)) })
	if err != nil {
		b.Fatal(err)
	}
	return cc.Stop
}

// BenchmarkWatermillDrain measures events per second for Watermill's
// forwarder to deliver a backlog of -drain.events events to JetStream.
func BenchmarkWatermillDrain(b *testing.B) {
	b.Run("postgres/jetstream", func(b *testing.B) {
		e := setup(b)
		ctx := context.Background()
		var total time.Duration
		events := 0
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			for done := 0; done < *drainEvents; {
				n := min(1000, *drainEvents-done)
				msgs := make([]*message.Message, n)
				for j := range msgs {
					msgs[j] = newMessage(fmt.Sprintf("agg-%d", (done+j)%1000))
				}
				if err := e.commit(ctx, msgs...); err != nil {
					b.Fatal(err)
				}
				done += n
			}
			var recv atomic.Int64
			stopCons := e.consume(b, func(string) { recv.Add(1) })
			b.StartTimer()
			start := time.Now()
			stop := e.startForwarder(b, 0)
			for until := time.Now().Add(10 * time.Minute); recv.Load() < int64(*drainEvents); {
				if time.Now().After(until) {
					b.Fatalf("only %d of %d received", recv.Load(), *drainEvents)
				}
				time.Sleep(5 * time.Millisecond)
			}
			total += time.Since(start)
			events += *drainEvents
			b.StopTimer()
			stop()
			stopCons()
			if err := e.stream.Purge(ctx); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
		b.ReportMetric(float64(events)/total.Seconds(), "events/s")
	})
}

// BenchmarkWatermillLatency measures commit-to-delivery latency (Commit
// returning to a JetStream consumer receiving the event) through Watermill's
// forwarder at 200 commits/s, with its SQL subscriber's default 1 s poll and
// with a 100 ms poll. Run with -benchtime=1x.
func BenchmarkWatermillLatency(b *testing.B) {
	for _, c := range []struct {
		name string
		poll time.Duration
	}{{"poll-1s", 0}, {"poll-100ms", 100 * time.Millisecond}} {
		b.Run("postgres/"+c.name+"/light", func(b *testing.B) {
			e := setup(b)
			for i := 0; i < b.N; i++ {
				latencyCase(b, e, c.poll)
			}
		})
	}
}

func latencyCase(b *testing.B, e *env, poll time.Duration) {
	ctx := context.Background()
	base := time.Now()
	now := func() int64 { return int64(time.Since(base)) + 1 }
	type times struct{ commit, recv atomic.Int64 }
	var mu sync.Mutex
	ev := map[string]*times{}
	var received atomic.Int64
	stopCons := e.consume(b, func(id string) {
		t := now()
		mu.Lock()
		x := ev[id]
		mu.Unlock()
		if x != nil && x.recv.CompareAndSwap(0, t) {
			received.Add(1)
		}
	})
	defer stopCons()
	stop := e.startForwarder(b, poll)
	defer stop()

	tick := time.NewTicker(time.Second / time.Duration(*latRate))
	defer tick.Stop()
	start := time.Now()
	deadline := start.Add(*latDuration)
	committed := int64(0)
	for i := 0; time.Now().Before(deadline); i++ {
		<-tick.C
		m := newMessage(fmt.Sprintf("agg-%d", i%1000))
		x := &times{}
		mu.Lock()
		ev[m.UUID] = x
		mu.Unlock()
		if err := e.commit(ctx, m); err != nil {
			b.Fatal(err)
		}
		x.commit.Store(now())
		committed++
	}
	window := time.Since(start)
	for until := time.Now().Add(60 * time.Second); received.Load() < committed; {
		if time.Now().After(until) {
			b.Fatalf("only %d of %d received", received.Load(), committed)
		}
		time.Sleep(2 * time.Millisecond)
	}
	var s []int64
	mu.Lock()
	for _, x := range ev {
		if c, r := x.commit.Load(), x.recv.Load(); c != 0 && r != 0 {
			s = append(s, r-c)
		}
	}
	mu.Unlock()
	slices.Sort(s)
	pct := func(p float64) float64 {
		i := min(max(int(p*float64(len(s))+0.5)-1, 0), len(s)-1)
		return float64(s[i]) / 1e6
	}
	b.ReportMetric(pct(0.5), "p50-ms")
	b.ReportMetric(pct(0.9), "p90-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(float64(s[len(s)-1])/1e6, "max-ms")
	b.ReportMetric(float64(committed)/window.Seconds(), "commits/s")
	b.ReportMetric(float64(len(s)), "samples")
	b.ReportMetric(0, "ns/op")
	if *latOut != "" {
		f, err := os.OpenFile(*latOut, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			b.Fatal(err)
		}
		var sb strings.Builder
		for _, v := range s {
			fmt.Fprintf(&sb, "%s\tcommit-recv\t%.1f\n", b.Name(), float64(v)/1e3)
		}
		_, err = f.WriteString(sb.String())
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			b.Fatal(err)
		}
	}
}
