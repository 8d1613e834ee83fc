// Command orders is the example order service: an HTTP API that creates and
// pays orders on PostgreSQL or MariaDB/MySQL and publishes order.created and
// order.paid through the jitoutbox outbox to JetStream, with the relay in the
// same process, Prometheus metrics on /metrics and a health check on
// /healthz. See README.md; examples/orders/consumer reads the events.
//
//	go run ./examples/orders -dialect postgres -dsn "$JITOUTBOX_POSTGRES_DSN"
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/jitoutbox/jitoutbox/examples/orders/internal/api"
	"github.com/jitoutbox/jitoutbox/examples/orders/internal/shop"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "HTTP listen address")
	dialect := flag.String("dialect", shop.Postgres, "database: postgres or mysql (MariaDB too)")
	dsn := flag.String("dsn", "", "database DSN (default $JITOUTBOX_POSTGRES_DSN or $JITOUTBOX_MYSQL_DSN by -dialect)")
	natsURL := flag.String("nats", envOr("JITOUTBOX_NATS_URL", nats.DefaultURL), "NATS URL (default $JITOUTBOX_NATS_URL)")
	stream := flag.String("stream", shop.DefaultStream, "JetStream stream (created or updated at start)")
	prefix := flag.String("subject-prefix", shop.DefaultSubjectPrefix, "subject prefix: events go to <prefix>.<event type>")
	flag.Parse()

	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, logger, *addr, *dialect, dsnFor(*dialect, *dsn), *natsURL, *stream, *prefix); err != nil {
		logger.Error("orders: exiting", "err", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, logger *slog.Logger, addr, dialect, dsn, natsURL, stream, prefix string) error {
	if dsn == "" {
		return errors.New("no DSN: pass -dsn or set JITOUTBOX_POSTGRES_DSN / JITOUTBOX_MYSQL_DSN")
	}
	db, d, err := shop.Open(ctx, dialect, dsn)
	if err != nil {
		return err
	}
	defer db.Close()

	nc, err := nats.Connect(natsURL, nats.Name("jitoutbox-orders"), nats.MaxReconnects(-1))
	if err != nil {
		return fmt.Errorf("connect to NATS: %w", err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncTimeout(10*time.Second))
	if err != nil {
		return err
	}
	if _, err := shop.EnsureStream(ctx, js, stream, prefix); err != nil {
		return err
	}

	mp, metrics, err := api.NewPrometheus()
	if err != nil {
		return err
	}
	defer func() { _ = mp.Shutdown(context.Background()) }()
	// Spans are created (and their ids propagated to the events) but not
	// exported: add sdktrace.WithBatcher(yourExporter) to send them.
	tp := sdktrace.NewTracerProvider()
	defer func() { _ = tp.Shutdown(context.Background()) }()

	svc, err := api.New(api.Config{DB: db, Dialect: d, JetStream: js, SubjectPrefix: prefix,
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
	logger.Info("orders: listening", "addr", addr, "dialect", dialect, "stream", stream, "subjects", prefix+".>")

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
