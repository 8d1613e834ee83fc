package bench

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/internal/pubtest"
	"github.com/jitoutbox/jitoutbox/internal/tcpproxy"
	"github.com/jitoutbox/jitoutbox/internal/testnats"
	"github.com/jitoutbox/jitoutbox/relay"
	"github.com/jitoutbox/jitoutbox/relay/kafkapub"
	"github.com/jitoutbox/jitoutbox/relay/natspub"
	"github.com/jitoutbox/jitoutbox/relay/rabbitpub"
	"github.com/jitoutbox/jitoutbox/txoutbox"
)

var (
	outageDuration = flag.Duration("outage.duration", 3*time.Second, "how long BenchmarkOutage keeps the broker down (60s for the full run)")
	outageEvents   = flag.Int("outage.events", 30, "one-event aggregates BenchmarkOutage commits, evenly, while the broker is down")
	outageDBs      = flag.String("outage.dbs", "sqlite", "comma-separated databases BenchmarkOutage runs on (postgres, postgres-pgx, mysql, sqlite)")
)

// BenchmarkOutage measures a broker outage as trickling traffic sees it: a
// relay with the default configuration (PollInterval 30s, PublishTimeout
// 10s, MaxAttempts 10, the default backoff) publishes through each
// publisher; the broker goes down (JetStream: the embedded server stops;
// RabbitMQ on $JITOUTBOX_AMQP_URL, skipped when unset: a proxy refuses and
// cuts every connection; Kafka on kfake: every request's connection is
// dropped) for -outage.duration while -outage.events one-event aggregates
// commit one at a time (every other one time-critical), then comes back.
// It reports the time from the broker's return until the last pending
// event is published (restore-to-last-ms), the attempts the outage spent
// (attempts-total and attempts-max, which must be 0) and how often the
// relay logged an outage's start (outage-logs: 1, or 0 when the outage is
// shorter than the publisher's ack timeout, 10s by default: kafkapub's
// client retries the records of the Publish in flight until then, and they
// go through when the cluster is back, so the relay sees no error). Run it
// with -benchtime=1x; -outage.duration=60s for the full run.
func BenchmarkOutage(b *testing.B) {
	brokers := []struct {
		name string
		cut  func(b *testing.B) pubtest.Cut
	}{
		{"jetstream", outageJetStream},
		{"rabbitmq", outageRabbitMQ},
		{"kafka-kfake", outageKafka},
	}
	for _, dbName := range strings.Split(*outageDBs, ",") {
		for _, br := range brokers {
			b.Run(dbName+"/"+br.name, func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					db, d := openDB(b, dbName, 8)
					outageRun(b, db, d, br.cut(b))
				}
			})
		}
	}
}

// outageRun runs one outage (see BenchmarkOutage) and reports its figures.
func outageRun(b *testing.B, db *sql.DB, d dialects.Dialect, c pubtest.Cut) {
	ctx, cancel := context.WithTimeout(context.Background(), *outageDuration+5*time.Minute)
	defer cancel()
	logs := &pubtest.LogBuffer{}
	r, err := relay.New(db, d, c.Publisher, relay.Config{Owner: "outage", Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		b.Fatal(err)
	}
	ob, err := txoutbox.New(db, d, txoutbox.WithRelay(r))
	if err != nil {
		b.Fatal(err)
	}
	rctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := r.Run(rctx); err != nil {
			b.Errorf("Run: %v", err)
		}
	})
	defer wg.Wait()
	defer stop()
	commit := func(k int) {
		var opts []txoutbox.TxOption
		if k%2 == 1 {
			opts = append(opts, txoutbox.TimeCritical())
		}
		tx, err := ob.Begin(ctx, nil, opts...)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := tx.Add(txoutbox.Event{AggregateType: "order", AggregateID: fmt.Sprint("one-", k),
			EventType: "order.placed", Payload: []byte(`{}`)}); err != nil {
			b.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			b.Fatal(err)
		}
	}
	commit(0)
	pubtest.WaitPending(b, ctx, db, d, 0, time.Minute)

	b.ResetTimer()
	c.Down(b)
	n := *outageEvents
	gap := *outageDuration / time.Duration(n)
	down := time.Now()
	for k := 1; k <= n; k++ {
		commit(k)
		time.Sleep(time.Until(down.Add(time.Duration(k) * gap)))
	}
	c.Up(b)
	restored := time.Now()
	pubtest.WaitPending(b, ctx, db, d, 0, 5*time.Minute)
	b.ReportMetric(float64(time.Since(restored).Milliseconds()), "restore-to-last-ms")
	b.StopTimer()

	var total sql.NullInt64
	if err := db.QueryRowContext(ctx, "SELECT SUM(attempts) FROM "+d.Table()).Scan(&total); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(total.Int64), "attempts-total")
	b.ReportMetric(float64(pubtest.MaxAttempts(b, db, d)), "attempts-max")
	b.ReportMetric(float64(strings.Count(logs.String(), "broker outage;")), "outage-logs")
	b.ReportMetric(outageDuration.Seconds(), "outage-s")
	if total.Int64 != 0 {
		b.Errorf("the outage spent %d attempts, want 0", total.Int64)
	}
}

// outageJetStream is JetStream on an embedded server of its own, stopped
// and restarted on the same port and store.
func outageJetStream(b *testing.B) pubtest.Cut {
	srv := testnats.Server(b)
	js, err := jetstream.New(testnats.Connect(b, srv.URL))
	if err != nil {
		b.Fatal(err)
	}
	_, prefix := testnats.Stream(b, js)
	pub, err := natspub.NewJetStream(js, natspub.WithSubjectPrefix(prefix))
	if err != nil {
		b.Fatal(err)
	}
	return pubtest.Cut{Publisher: pub, Down: func(testing.TB) { srv.Shutdown() }, Up: srv.Restart}
}

// outageRabbitMQ is RabbitMQ on $JITOUTBOX_AMQP_URL behind a proxy that
// refuses and cuts every connection while it is down.
func outageRabbitMQ(b *testing.B) pubtest.Cut {
	url := os.Getenv(brokerAMQPEnv)
	if url == "" {
		b.Skipf("%s is not set", brokerAMQPEnv)
	}
	admin, err := amqp.Dial(url)
	if err != nil {
		b.Fatalf("%s is set but the broker cannot be reached: %v", brokerAMQPEnv, err)
	}
	b.Cleanup(func() { _ = admin.Close() })
	ch, err := admin.Channel()
	if err != nil {
		b.Fatal(err)
	}
	exchange, queue := brokerName("jitoutbox-bench-x-"), brokerName("jitoutbox-bench-q-")
	if err := ch.ExchangeDeclare(exchange, amqp.ExchangeTopic, false, false, false, false, nil); err != nil {
		b.Fatal(err)
	}
	if _, err := ch.QueueDeclare(queue, false, false, false, false, nil); err != nil {
		b.Fatal(err)
	}
	if err := ch.QueueBind(queue, "order.#", exchange, false, nil); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_, _ = ch.QueueDelete(queue, false, false, false)
		_ = ch.ExchangeDelete(exchange, false, false)
	})
	proxy, purl := tcpproxy.NewURL(b, url)
	pub, err := rabbitpub.New(purl, rabbitpub.WithExchange(exchange), rabbitpub.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = pub.Close() })
	return pubtest.Cut{Publisher: pub,
		Down: func(testing.TB) { proxy.Refuse(); proxy.Cut() },
		Up:   func(testing.TB) { proxy.Resume() }}
}

// outageKafka is Kafka on kfake, whose every request's connection is
// dropped while it is down (a restarted kfake would lose the producer
// state and topic ids a real cluster keeps). The client reloads metadata
// as kafkapub.Open's does.
func outageKafka(b *testing.B) pubtest.Cut {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, brokerKafkaTopic))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(c.Close)
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.MetadataMinAge(kafkapub.OutageMetadataMinAge))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(cl.Close)
	pub, err := kafkapub.New(cl)
	if err != nil {
		b.Fatal(err)
	}
	var down atomic.Bool
	return pubtest.Cut{Publisher: pub,
		Down: func(testing.TB) {
			down.Store(true)
			c.Control(func(kmsg.Request) (kmsg.Response, error, bool) {
				if !down.Load() {
					c.DropControl()
					return nil, nil, false
				}
				c.KeepControl()
				return nil, errors.New("broker down"), true
			})
		},
		Up: func(testing.TB) { down.Store(false) }}
}
