// Command consumer is the second process of the orders example: it reads the
// order events from JetStream (the service's -broker nats; for RabbitMQ and
// Kafka see ../README.md) through a durable consumer and keeps a
// projection of the orders in its own tables, processing each event once
// (the event id is recorded in the same transaction as the projection
// update, so a redelivered or republished event is skipped). It prints a
// line per message. See ../README.md.
//
//	go run ./examples/orders/consumer -dialect postgres -dsn "$JITOUTBOX_POSTGRES_DSN"
package main

import (
	"context"
	"errors"
	"flag"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jitoutbox/jitoutbox/examples/orders/internal/projector"
	"github.com/jitoutbox/jitoutbox/examples/orders/internal/shop"
)

func main() {
	dialect := flag.String("dialect", shop.Postgres, "database: postgres or mysql (MariaDB too)")
	dsn := flag.String("dsn", "", "database DSN (default $JITOUTBOX_POSTGRES_DSN or $JITOUTBOX_MYSQL_DSN by -dialect)")
	natsURL := flag.String("nats", envOr("JITOUTBOX_NATS_URL", nats.DefaultURL), "NATS URL (default $JITOUTBOX_NATS_URL)")
	stream := flag.String("stream", shop.DefaultStream, "JetStream stream")
	prefix := flag.String("subject-prefix", shop.DefaultSubjectPrefix, "subject prefix of the order events")
	durable := flag.String("durable", "orders-projector", "durable consumer name")
	flag.Parse()

	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, logger, *dialect, dsnFor(*dialect, *dsn), *natsURL, *stream, *prefix, *durable); err != nil {
		logger.Error("consumer: exiting", "err", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, logger *slog.Logger, dialect, dsn, natsURL, stream, prefix, durable string) error {
	if dsn == "" {
		return errors.New("no DSN: pass -dsn or set JITOUTBOX_POSTGRES_DSN / JITOUTBOX_MYSQL_DSN")
	}
	db, _, err := shop.Open(ctx, dialect, dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	nc, err := nats.Connect(natsURL, nats.Name("jitoutbox-orders-consumer"), nats.MaxReconnects(-1))
	if err != nil {
		return err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	// The stream may not exist yet if the service has never run; an
	// existing one is left as the service configured it.
	if _, err := js.Stream(ctx, stream); errors.Is(err, jetstream.ErrStreamNotFound) {
		if _, err := shop.EnsureStream(ctx, js, stream, prefix, ""); err != nil {
			return err
		}
	} else if err != nil {
		return err
	}
	p, err := projector.New(db, dialect, os.Stdout, nil, logger)
	if err != nil {
		return err
	}
	if err := p.Migrate(ctx); err != nil {
		return err
	}
	logger.Info("consumer: consuming", "stream", stream, "durable", durable, "subjects", prefix+".>")
	return p.Run(ctx, js, stream, durable, prefix)
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
