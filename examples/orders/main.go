// Command orders is the example order service: an HTTP API that creates and
// pays orders on PostgreSQL or MariaDB/MySQL and publishes order.created and
// order.paid through the jitoutbox outbox to NATS JetStream, RabbitMQ or
// Kafka (-broker), with the relay in the same process (txoutbox.WithRelay),
// dead letters optionally sent to -dead-letter, Prometheus metrics on
// /metrics and a health check on /healthz. See README.md;
// examples/orders/consumer reads the events from JetStream.
//
//	go run ./examples/orders -dialect postgres -dsn "$JITOUTBOX_POSTGRES_DSN"
//	go run ./examples/orders -broker rabbitmq -dead-letter shop.dead
//	go run ./examples/orders -broker kafka -kafka 127.0.0.1:9092 -dead-letter shop.dead
package main

import (
	"context"
	"errors"
	"flag"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/jitoutbox/jitoutbox/examples/orders/internal/api"
	"github.com/jitoutbox/jitoutbox/examples/orders/internal/broker"
	"github.com/jitoutbox/jitoutbox/examples/orders/internal/shop"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "HTTP listen address")
	dialect := flag.String("dialect", shop.Postgres, "database: postgres or mysql (MariaDB too)")
	dsn := flag.String("dsn", "", "database DSN (default $JITOUTBOX_POSTGRES_DSN or $JITOUTBOX_MYSQL_DSN by -dialect)")
	var bc broker.Config
	flag.StringVar(&bc.Broker, "broker", broker.NATS, "where events go: nats, rabbitmq or kafka")
	flag.StringVar(&bc.NATSURL, "nats", envOr("JITOUTBOX_NATS_URL", nats.DefaultURL), "NATS URL (default $JITOUTBOX_NATS_URL)")
	flag.StringVar(&bc.AMQPURL, "amqp", os.Getenv("JITOUTBOX_AMQP_URL"), "RabbitMQ URL for -broker rabbitmq (default $JITOUTBOX_AMQP_URL)")
	kafka := flag.String("kafka", os.Getenv("JITOUTBOX_KAFKA_BROKERS"), "Kafka seed brokers, comma-separated, for -broker kafka (default $JITOUTBOX_KAFKA_BROKERS)")
	flag.StringVar(&bc.Stream, "stream", shop.DefaultStream, "JetStream stream (created or updated at start)")
	flag.StringVar(&bc.Prefix, "subject-prefix", shop.DefaultSubjectPrefix, "NATS subject prefix (<prefix>.<event type>), RabbitMQ exchange, Kafka topic prefix (<prefix>.<aggregate type>)")
	flag.StringVar(&bc.DeadLetter, "dead-letter", "", "also publish dead-lettered events to this subject (nats), exchange (rabbitmq) or topic (kafka)")
	flag.Parse()
	for _, s := range strings.Split(*kafka, ",") {
		if s = strings.TrimSpace(s); s != "" {
			bc.Kafka = append(bc.Kafka, s)
		}
	}

	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, logger, *addr, *dialect, dsnFor(*dialect, *dsn), bc); err != nil {
		logger.Error("orders: exiting", "err", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, logger *slog.Logger, addr, dialect, dsn string, bc broker.Config) error {
	if dsn == "" {
		return errors.New("no DSN: pass -dsn or set JITOUTBOX_POSTGRES_DSN / JITOUTBOX_MYSQL_DSN")
	}
	db, d, err := shop.Open(ctx, dialect, dsn)
	if err != nil {
		return err
	}
	defer db.Close()

	bconn, err := broker.Open(ctx, bc)
	if err != nil {
		return err
	}
	defer bconn.Close()

	mp, metrics, err := api.NewPrometheus()
	if err != nil {
		return err
	}
	defer func() { _ = mp.Shutdown(context.Background()) }()
	// Spans are created (and their ids propagated to the events) but not
	// exported: add sdktrace.WithBatcher(yourExporter) to send them.
	tp := sdktrace.NewTracerProvider()
	defer func() { _ = tp.Shutdown(context.Background()) }()

	svc, err := api.New(api.Config{DB: db, Dialect: d,
		Publisher: bconn.Publisher, DeadLetter: bconn.DeadLetter, BrokerHealthy: bconn.Healthy,
		MeterProvider: mp, TracerProvider: tp, Metrics: metrics, Logger: logger})
	if err != nil {
		return err
	}
	if err := svc.Migrate(ctx); err != nil {
		return err
	}

	relayCtx, stopRelay := context.WithCancel(ctx)
	defer stopRelay()
	relayDone := make(chan error, 1)
	go func() { relayDone <- svc.Run(relayCtx) }()

	srv := &http.Server{Addr: addr, Handler: svc.Handler(), ReadHeaderTimeout: 5 * time.Second}
	srvDone := make(chan error, 1)
	go func() { srvDone <- srv.ListenAndServe() }()
	// Addresses are not logged: broker URLs carry passwords.
	logger.Info("orders: listening", "addr", addr, "dialect", dialect, "broker", bc.Broker, "prefix", bc.Prefix,
		"dead_letter", bc.DeadLetter)

	var srvErr error
	select {
	case srvErr = <-srvDone: // the listener failed
	case <-ctx.Done(): // SIGINT or SIGTERM
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := srv.Shutdown(sctx); err != nil {
			srvErr = err
		}
	}
	// Stop the relay after the last request: it finishes its batch.
	stopRelay()
	relayErr := <-relayDone
	if errors.Is(srvErr, http.ErrServerClosed) {
		srvErr = nil
	}
	return errors.Join(srvErr, relayErr)
}

// dsnFor returns dsn, or the JITOUTBOX_* variable of the dialect.
func dsnFor(dialect, dsn string) string {
	if dsn != "" {
		return dsn
	}
	if dialect == shop.MySQL {
		return os.Getenv("JITOUTBOX_MYSQL_DSN")
	}
	return os.Getenv("JITOUTBOX_POSTGRES_DSN")
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
