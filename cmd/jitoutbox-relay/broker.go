package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/jitoutbox/jitoutbox/relay"
	"github.com/jitoutbox/jitoutbox/relay/decodepub"
	"github.com/jitoutbox/jitoutbox/relay/kafkapub"
	"github.com/jitoutbox/jitoutbox/relay/rabbitpub"
)

// brokerConn holds the publishers of -broker and what they need closed.
type brokerConn struct {
	// pubs are the event publishers by destination (cfg.dests: a NATS
	// subject prefix, a Kafka topic prefix or a RabbitMQ exchange), all on
	// the process's broker connection (RabbitMQ: one connection each).
	pubs map[string]relay.Publisher
	dead relay.Publisher // nil without -dead-letter
	// ready is the broker's readiness check (see readyChecks).
	ready check
	// closers run in reverse order by close.
	closers []func()
}

func (b *brokerConn) close() {
	for i := len(b.closers) - 1; i >= 0; i-- {
		b.closers[i]()
	}
}

// connect connects to NATS when cfg.needsNATS() (to publish there or for
// wakes), returned as nc, and opens the publishers of cfg.broker; closing
// b closes nc too.
func connect(ctx context.Context, cfg config, log *slog.Logger) (b *brokerConn, nc natsConn, err error) {
	if cfg.needsNATS() {
		if nc, err = connectNATS(cfg, log); err != nil {
			return nil, nil, err
		}
	}
	if b, err = openBroker(ctx, cfg, nc, log); err != nil {
		if nc != nil {
			nc.Close()
		}
		return nil, nil, err
	}
	if nc != nil {
		b.closers = append([]func(){nc.Close}, b.closers...) // closed last
	}
	return b, nc, nil
}

// openBroker returns the publishers of cfg.broker, one per destination of
// cfg.dests; nc is the NATS connection, set when cfg.needsNATS(). On
// error, what was opened is closed.
func openBroker(ctx context.Context, cfg config, nc natsConn, log *slog.Logger) (*brokerConn, error) {
	b := &brokerConn{pubs: map[string]relay.Publisher{}}
	var err error
	switch cfg.broker {
	case brokerNATS:
		b.pubs, b.dead, err = newNATSPublishers(ctx, cfg, nc, log)
		b.ready = natsReady(nc)
	case brokerRabbitMQ:
		err = b.openRabbitMQ(cfg, log)
		b.ready = rabbitReady(cfg.amqpURL)
	case brokerKafka:
		err = b.openKafka(cfg)
	}
	if cfg.decoder != nil {
		for d, p := range b.pubs {
			if err == nil {
				b.pubs[d], err = decodepub.New(p, cfg.decoder)
			}
		}
	}
	if err != nil {
		b.close()
		return nil, err
	}
	return b, nil
}

// openRabbitMQ makes the RabbitMQ publishers: events on -exchange (or each
// source's exchange) with routing key <aggregate_type>.<event_type>, dead
// letters on the -dead-letter exchange with the same keys. Each has its own
// connection (rabbitpub keeps one per publisher), opened at the first
// publish (and again after a loss).
func (b *brokerConn) openRabbitMQ(cfg config, log *slog.Logger) error {
	for _, exchange := range cfg.dests() {
		ropts := []rabbitpub.Option{rabbitpub.WithExchange(exchange), rabbitpub.WithLogger(log)}
		if cfg.ceSource != "" {
			ropts = append(ropts, rabbitpub.CloudEvents(cfg.ceSource, cfg.ceMode))
		}
		pub, err := rabbitpub.New(cfg.amqpURL, ropts...)
		if err != nil {
			return fmt.Errorf("publisher: %w", err) // rabbitpub never puts the URL in an error
		}
		b.pubs[exchange] = pub
		b.closers = append(b.closers, func() { _ = pub.Close() })
	}
	if cfg.deadLetter == "" {
		return nil
	}
	dead, err := rabbitpub.New(cfg.amqpURL, rabbitpub.WithExchange(cfg.deadLetter), rabbitpub.WithLogger(log))
	if err != nil {
		return fmt.Errorf("dead-letter publisher: %w", err)
	}
	b.dead = dead
	b.closers = append(b.closers, func() { _ = dead.Close() })
	return nil
}

// openKafka makes the Kafka publishers on one client: events to
// <topic-prefix>.<aggregate_type> (each source's prefix with -config),
// dead letters to the -dead-letter topic, both keyed by aggregate id.
func (b *brokerConn) openKafka(cfg config) error {
	opts := []kgo.Opt{kgo.SeedBrokers(cfg.kafka...), kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.ClientID("jitoutbox-relay")}
	if cfg.kafkaAutoCreate {
		opts = append(opts, kgo.AllowAutoTopicCreation())
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return fmt.Errorf("kafka client (-kafka): %w", err)
	}
	b.closers = append(b.closers, cl.Close)
	b.ready = kafkaReady(cl)
	for _, prefix := range cfg.dests() {
		popts := []kafkapub.Option{kafkapub.WithTopicPrefix(prefix)}
		if cfg.debezium {
			popts = append(popts, kafkapub.Debezium())
		}
		if cfg.ceSource != "" {
			popts = append(popts, kafkapub.CloudEvents(cfg.ceSource, cfg.ceMode))
		}
		if b.pubs[prefix], err = kafkapub.New(cl, popts...); err != nil {
			return fmt.Errorf("publisher: %w", err)
		}
	}
	if cfg.deadLetter == "" {
		return nil
	}
	topic := cfg.deadLetter
	if b.dead, err = kafkapub.New(cl, kafkapub.WithRouter(func(relay.Message) (string, error) { return topic, nil })); err != nil {
		return fmt.Errorf("dead-letter publisher: %w", err)
	}
	return nil
}
