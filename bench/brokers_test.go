package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/jitoutbox/jitoutbox/internal/testnats"
	"github.com/jitoutbox/jitoutbox/relay"
	"github.com/jitoutbox/jitoutbox/relay/kafkapub"
	"github.com/jitoutbox/jitoutbox/relay/natspub"
	"github.com/jitoutbox/jitoutbox/relay/rabbitpub"
	"github.com/jitoutbox/jitoutbox/txoutbox"
)

// Sizes of BenchmarkBrokers: the backlog drained (and published by the bare
// client), the window of the bare client (the relay's batch), and the light
// load of the latency case.
const (
	brokerEvents     = 20_000
	brokerAggregates = 1_000
	brokerBatch      = 500
	brokerLatRate    = 200 // commits/s
	brokerLatEvents  = 400
	brokerKafkaParts = 8
	brokerAMQPEnv    = "JITOUTBOX_AMQP_URL"
	brokerNATSEnv    = "JITOUTBOX_NATS_URL"
	brokerKafkaTopic = "outbox.order" // kafkapub's default router for aggregate type "order"
)

// benchBroker is one broker of BenchmarkBrokers.
type benchBroker struct {
	name string
	// bare publishes n messages with the broker's own client, in windows of
	// brokerBatch, each window confirmed (acked) before the next, and
	// returns the confirmed messages per second.
	bare func(b *testing.B, n int) float64
	// target returns a relay publisher to a fresh destination; when recv is
	// not nil it also starts a consumer of that destination that calls recv
	// with each received event id. Everything is closed when b ends.
	target func(b *testing.B, recv func(id string)) relay.Publisher
}

// BenchmarkBrokers measures, on PostgreSQL, for each broker (JetStream,
// RabbitMQ, Kafka through franz-go's in-process kfake cluster): the bare
// client's confirmed-publish rate and the relay's drain rate of a
// 20,000-event backlog (1 relay, batch 500) in the same run, their ratio,
// and the time-critical Commit -> consumer latency at a light load with the
// relay in process (txoutbox.WithRelay). A broker whose variable is unset
// is skipped (kfake always runs). Run it with -benchtime=1x.
func BenchmarkBrokers(b *testing.B) {
	brokers := []func(b *testing.B) *benchBroker{jetStreamBroker, rabbitBroker,
		func(b *testing.B) *benchBroker { return kfakeBroker(b, nil) },
		func(b *testing.B) *benchBroker { return kfakeBroker(b, []kgo.Opt{kgo.ProducerLinger(0)}) }}
	names := []string{"jetstream", "rabbitmq", "kafka-kfake", "kafka-kfake-linger0"}
	for i, mk := range brokers {
		b.Run(names[i], func(b *testing.B) {
			b.Run("drain", func(b *testing.B) {
				bk := mk(b)
				bd := openBenchDB(b, "postgres")
				var bareRate float64
				for i := 0; i < b.N; i++ {
					bareRate += bk.bare(b, brokerEvents)
				}
				bareRate /= float64(b.N)
				st := &stageTimes{}
				pub := st.publisher(bk.target(b, nil))
				tbd := *bd
				tbd.dialect = st.dialect(bd.dialect)
				var cpu cpuMeter
				rate := drain(b, &tbd, pub, backlog{brokerEvents, brokerAggregates}, 1, brokerBatch, false, &cpu)
				st.report(b)
				b.ReportMetric(bareRate, "bare-events/s")
				b.ReportMetric(rate, "events/s")
				b.ReportMetric(rate/bareRate, "drain/bare")
				b.ReportMetric(0, "ns/op")
			})
			b.Run("latency-critical-light", func(b *testing.B) {
				bk := mk(b)
				bd := openBenchDB(b, "postgres")
				for i := 0; i < b.N; i++ {
					brokerLatency(b, bd, bk)
				}
			})
		})
	}
}

// brokerLatency commits brokerLatEvents time-critical events at
// brokerLatRate through an Outbox wired to an in-process relay and reports
// Commit -> consumer percentiles.
func brokerLatency(b *testing.B, bd *benchDB, bk *benchBroker) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tr := newLatTracker()
	pub := bk.target(b, func(id string) {
		now := tr.now()
		if e := tr.get(id); e != nil && e.recv.CompareAndSwap(0, now) {
			tr.n.Add(1)
		}
	})
	rl, err := relay.New(bd.db, bd.dialect, pub, relay.Config{Hooks: latHooks{tr}, Retention: -1})
	if err != nil {
		b.Fatal(err)
	}
	ob, err := txoutbox.New(bd.db, bd.dialect, txoutbox.WithRelay(rl))
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

	// Let the relay take its partitions and the consumer settle.
	time.Sleep(500 * time.Millisecond)
	b.ResetTimer()
	start := time.Now()
	tick := time.NewTicker(time.Second / brokerLatRate)
	for i := 0; i < brokerLatEvents; i++ {
		<-tick.C
		tx, err := ob.Begin(ctx, nil, txoutbox.TimeCritical())
		if err != nil {
			b.Fatal(err)
		}
		id, err := tx.Add(txoutbox.Event{AggregateType: "order", AggregateID: "agg-" + strconv.Itoa(i%1000),
			EventType: "order.placed", Payload: payload, ContentType: "application/json"})
		if err != nil {
			_ = tx.Rollback()
			b.Fatal(err)
		}
		e := tr.add(id)
		if err := tx.Commit(); err != nil {
			b.Fatal(err)
		}
		e.commit.Store(tr.now())
	}
	tick.Stop()
	window := time.Since(start)
	for until := time.Now().Add(30 * time.Second); tr.n.Load() < brokerLatEvents; {
		if time.Now().After(until) {
			b.Fatalf("only %d of %d events received after 30s", tr.n.Load(), brokerLatEvents)
		}
		time.Sleep(2 * time.Millisecond)
	}
	b.StopTimer()
	latReport(b, tr, brokerLatEvents, window)
	stopRelay()
	if _, err := bd.db.ExecContext(context.Background(), "DELETE FROM "+bd.dialect.Table()); err != nil {
		b.Fatal(err)
	}
}

// brokerIDs returns n unique message ids.
func brokerIDs(n int) []string {
	ids := make([]string, n)
	var r [8]byte
	_, _ = rand.Read(r[:])
	p := hex.EncodeToString(r[:])
	for i := range ids {
		ids[i] = p + "-" + strconv.Itoa(i)
	}
	return ids
}

func brokerName(prefix string) string {
	var r [6]byte
	_, _ = rand.Read(r[:])
	return prefix + hex.EncodeToString(r[:])
}

// jetStreamBroker is JetStream on $JITOUTBOX_NATS_URL (skipped when unset).
func jetStreamBroker(b *testing.B) *benchBroker {
	if os.Getenv(brokerNATSEnv) == "" {
		b.Skipf("%s is not set", brokerNATSEnv)
	}
	_, js := benchJetStream(b)
	subNC := testnats.Connect(b, testnats.URL(b))
	subJS, err := jetstream.New(subNC)
	if err != nil {
		b.Fatal(err)
	}
	return &benchBroker{
		name: "jetstream",
		bare: func(b *testing.B, n int) float64 {
			_, prefix := testnats.Stream(b, js)
			ids := brokerIDs(n)
			subj := prefix + ".order.order_placed"
			start := time.Now()
			for w := 0; w < n; w += brokerBatch {
				futs := make([]jetstream.PubAckFuture, 0, brokerBatch)
				for i := w; i < min(w+brokerBatch, n); i++ {
					f, err := js.PublishAsync(subj, payload, jetstream.WithMsgID(ids[i]))
					if err != nil {
						b.Fatal(err)
					}
					futs = append(futs, f)
				}
				for _, f := range futs {
					select {
					case <-f.Ok():
					case err := <-f.Err():
						b.Fatal(err)
					case <-time.After(10 * time.Second):
						b.Fatal("jetstream: no ack after 10s")
					}
				}
			}
			return float64(n) / time.Since(start).Seconds()
		},
		target: func(b *testing.B, recv func(string)) relay.Publisher {
			stream, prefix := testnats.Stream(b, js)
			pub, err := natspub.NewJetStream(js, natspub.WithSubjectPrefix(prefix))
			if err != nil {
				b.Fatal(err)
			}
			if recv != nil {
				ctx := context.Background()
				s, err := subJS.Stream(ctx, stream.CachedInfo().Config.Name)
				if err != nil {
					b.Fatal(err)
				}
				cons, err := s.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{})
				if err != nil {
					b.Fatal(err)
				}
				cc, err := cons.Consume(func(m jetstream.Msg) { recv(m.Headers().Get(natspub.HeaderEventID)) })
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(cc.Stop)
			}
			return pub
		},
	}
}

// rabbitBroker is RabbitMQ on $JITOUTBOX_AMQP_URL (skipped when unset):
// a fresh topic exchange with a durable queue bound to "order.#" per
// destination, persistent messages, publisher confirms.
func rabbitBroker(b *testing.B) *benchBroker {
	url := os.Getenv(brokerAMQPEnv)
	if url == "" {
		b.Skipf("%s is not set", brokerAMQPEnv)
	}
	admin, err := amqp.Dial(url)
	if err != nil {
		b.Fatalf("%s is set but the broker cannot be reached: %v", brokerAMQPEnv, err)
	}
	b.Cleanup(func() { _ = admin.Close() })
	ach, err := admin.Channel()
	if err != nil {
		b.Fatal(err)
	}
	// declare returns a fresh exchange and its bound durable queue, both
	// deleted when b ends.
	declare := func(b *testing.B) (exchange, queue string) {
		exchange, queue = brokerName("jitoutbox-bench-x-"), brokerName("jitoutbox-bench-q-")
		if err := ach.ExchangeDeclare(exchange, amqp.ExchangeTopic, false, false, false, false, nil); err != nil {
			b.Fatal(err)
		}
		if _, err := ach.QueueDeclare(queue, true, false, false, false, nil); err != nil {
			b.Fatal(err)
		}
		if err := ach.QueueBind(queue, "order.#", exchange, false, nil); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() {
			_, _ = ach.QueueDelete(queue, false, false, false)
			_ = ach.ExchangeDelete(exchange, false, false)
		})
		return exchange, queue
	}
	return &benchBroker{
		name: "rabbitmq",
		bare: func(b *testing.B, n int) float64 {
			exchange, _ := declare(b)
			conn, err := amqp.Dial(url)
			if err != nil {
				b.Fatal(err)
			}
			defer conn.Close()
			ch, err := conn.Channel()
			if err != nil {
				b.Fatal(err)
			}
			if err := ch.Confirm(false); err != nil {
				b.Fatal(err)
			}
			ids := brokerIDs(n)
			ctx := context.Background()
			start := time.Now()
			for w := 0; w < n; w += brokerBatch {
				dcs := make([]*amqp.DeferredConfirmation, 0, brokerBatch)
				for i := w; i < min(w+brokerBatch, n); i++ {
					dc, err := ch.PublishWithDeferredConfirmWithContext(ctx, exchange, "order.order.placed", true, false, amqp.Publishing{
						DeliveryMode: amqp.Persistent, MessageId: ids[i], Type: "order.placed",
						ContentType: "application/json", Body: payload,
					})
					if err != nil {
						b.Fatal(err)
					}
					dcs = append(dcs, dc)
				}
				for _, dc := range dcs {
					ok, err := dc.WaitContext(ctx)
					if err != nil || !ok {
						b.Fatalf("rabbitmq: confirm: ok=%v err=%v", ok, err)
					}
				}
			}
			return float64(n) / time.Since(start).Seconds()
		},
		target: func(b *testing.B, recv func(string)) relay.Publisher {
			exchange, queue := declare(b)
			pub, err := rabbitpub.New(url, rabbitpub.WithExchange(exchange))
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = pub.Close() })
			if recv != nil {
				conn, err := amqp.Dial(url)
				if err != nil {
					b.Fatal(err)
				}
				ch, err := conn.Channel()
				if err != nil {
					b.Fatal(err)
				}
				ds, err := ch.Consume(queue, "", true, true, false, false, nil)
				if err != nil {
					b.Fatal(err)
				}
				done := make(chan struct{})
				go func() {
					defer close(done)
					for d := range ds {
						recv(rabbitpub.EventID(&d))
					}
				}()
				b.Cleanup(func() { _ = conn.Close(); <-done })
			}
			return pub
		},
	}
}

// kfakeBroker is Kafka through franz-go's in-process kfake cluster (one
// broker, in memory), labelled as such: a fresh cluster per destination with
// an 8-partition topic, acks=all and the idempotent producer. opts go to
// both the bare client and the publisher's (kafkapub.WithClientOptions);
// nil keeps kgo's defaults, among them a 10 ms producer linger.
func kfakeBroker(b *testing.B, opts []kgo.Opt) *benchBroker {
	cluster := func(b *testing.B) *kfake.Cluster {
		c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(brokerKafkaParts, brokerKafkaTopic))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(c.Close)
		return c
	}
	return &benchBroker{
		name: "kafka-kfake",
		bare: func(b *testing.B, n int) float64 {
			c := cluster(b)
			cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(c.ListenAddrs()...), kgo.RequiredAcks(kgo.AllISRAcks())}, opts...)...)
			if err != nil {
				b.Fatal(err)
			}
			defer cl.Close()
			ctx := context.Background()
			if err := cl.ProduceSync(ctx, &kgo.Record{Topic: brokerKafkaTopic, Value: payload}).FirstErr(); err != nil {
				b.Fatal(err) // warm-up: metadata and producer id
			}
			ids := brokerIDs(n)
			start := time.Now()
			recs := make([]*kgo.Record, 0, brokerBatch)
			for w := 0; w < n; w += brokerBatch {
				recs = recs[:0]
				for i := w; i < min(w+brokerBatch, n); i++ {
					recs = append(recs, &kgo.Record{Topic: brokerKafkaTopic, Key: []byte("agg-" + strconv.Itoa(i%brokerAggregates)),
						Value: payload, Headers: []kgo.RecordHeader{{Key: "id", Value: []byte(ids[i])}}})
				}
				if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
					b.Fatal(err)
				}
			}
			return float64(n) / time.Since(start).Seconds()
		},
		target: func(b *testing.B, recv func(string)) relay.Publisher {
			c := cluster(b)
			pub, err := kafkapub.Open(c.ListenAddrs(), kafkapub.WithClientOptions(opts...))
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(pub.Close)
			if recv != nil {
				cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.ConsumeTopics(brokerKafkaTopic),
					kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(time.Second))
				if err != nil {
					b.Fatal(err)
				}
				ctx, cancel := context.WithCancel(context.Background())
				var stopped atomic.Bool
				done := make(chan struct{})
				go func() {
					defer close(done)
					for !stopped.Load() {
						fs := cl.PollFetches(ctx)
						if ctx.Err() != nil {
							return
						}
						fs.EachRecord(func(r *kgo.Record) { recv(kafkapub.EventID(r)) })
					}
				}()
				b.Cleanup(func() { stopped.Store(true); cancel(); <-done; cl.Close() })
			}
			return pub
		},
	}
}
