// Package broker opens the publishers of the orders example for the broker
// chosen with -broker: NATS JetStream, RabbitMQ or Kafka, each with an
// optional dead-letter destination. It is the example's own wiring, kept
// small; cmd/jitoutbox-relay does the same for the relay process.
package broker

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/jitoutbox/jitoutbox/examples/orders/internal/shop"
	"github.com/jitoutbox/jitoutbox/relay"
	"github.com/jitoutbox/jitoutbox/relay/kafkapub"
	"github.com/jitoutbox/jitoutbox/relay/natspub"
	"github.com/jitoutbox/jitoutbox/relay/rabbitpub"
)

// Brokers accepted by Open.
const (
	NATS     = "nats"
	RabbitMQ = "rabbitmq"
	Kafka    = "kafka"
)

// ErrConfig reports a bad Config; the message names the field to fix. It
// never quotes a URL.
var ErrConfig = errors.New("broker: invalid config")

// Config says where the example publishes.
type Config struct {
	// Broker is NATS, RabbitMQ or Kafka. Required.
	Broker string
	// NATSURL is the NATS server (NATS).
	NATSURL string
	// AMQPURL is the RabbitMQ server (RabbitMQ).
	AMQPURL string
	// Kafka holds the seed brokers (Kafka).
	Kafka []string
	// Stream is the JetStream stream, created or updated to store
	// "<Prefix>.>" and DeadLetter (NATS).
	Stream string
	// Prefix names the destination of the events: subjects
	// "<Prefix>.<event type>" (NATS), the topic exchange Prefix with routing
	// keys "<aggregate type>.<event type>" (RabbitMQ), topics
	// "<Prefix>.<aggregate type>" (Kafka). Default shop.DefaultSubjectPrefix.
	Prefix string
	// DeadLetter, when set, is where dead-lettered events are also
	// published: a subject (NATS), a topic exchange (RabbitMQ, declared
	// here with a queue of its name) or a topic (Kafka). Default: none.
	DeadLetter string
}

// Conn holds the publishers of one broker.
type Conn struct {
	// Publisher publishes the events.
	Publisher relay.Publisher
	// DeadLetter publishes dead letters; nil without Config.DeadLetter.
	DeadLetter relay.Publisher
	// Healthy reports whether the broker connection is up.
	Healthy func() bool
	// JetStream is the JetStream context (NATS only), for the consumer.
	JetStream jetstream.JetStream

	closers []func()
}

// Close closes the connections Open made.
func (c *Conn) Close() {
	for i := len(c.closers) - 1; i >= 0; i-- {
		c.closers[i]()
	}
}

// Open connects to cfg.Broker and builds its publishers; for NATS and
// RabbitMQ it also creates the stream, or the exchanges and their queues
// (each named as its exchange, bound to "#"), that the example needs.
func Open(ctx context.Context, cfg Config) (*Conn, error) {
	if cfg.Prefix == "" {
		cfg.Prefix = shop.DefaultSubjectPrefix
	}
	c := &Conn{}
	var err error
	switch cfg.Broker {
	case NATS:
		err = c.openNATS(ctx, cfg)
	case RabbitMQ:
		err = c.openRabbitMQ(cfg)
	case Kafka:
		err = c.openKafka(cfg)
	default:
		return nil, fmt.Errorf("%w: -broker %q: use nats, rabbitmq or kafka", ErrConfig, cfg.Broker)
	}
	if err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

func (c *Conn) openNATS(ctx context.Context, cfg Config) error {
	nc, err := nats.Connect(cfg.NATSURL, nats.Name("jitoutbox-orders"), nats.MaxReconnects(-1))
	if err != nil {
		return fmt.Errorf("broker: connect to NATS: %w", err)
	}
	c.closers = append(c.closers, nc.Close)
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncTimeout(10*time.Second))
	if err != nil {
		return fmt.Errorf("broker: %w", err)
	}
	if _, err := shop.EnsureStream(ctx, js, cfg.Stream, cfg.Prefix, cfg.DeadLetter); err != nil {
		return err
	}
	c.JetStream, c.Healthy = js, nc.IsConnected
	if c.Publisher, err = natspub.NewJetStream(js, natspub.WithRouter(shop.Router(cfg.Prefix))); err != nil {
		return fmt.Errorf("broker: %w", err)
	}
	if cfg.DeadLetter != "" {
		dl := cfg.DeadLetter
		if c.DeadLetter, err = natspub.NewJetStream(js, natspub.WithRouter(func(relay.Message) (string, error) { return dl, nil })); err != nil {
			return fmt.Errorf("broker: dead letter: %w", err)
		}
	}
	return nil
}

func (c *Conn) openRabbitMQ(cfg Config) error {
	if cfg.AMQPURL == "" {
		return fmt.Errorf("%w: no RabbitMQ URL: pass -amqp or set JITOUTBOX_AMQP_URL", ErrConfig)
	}
	// Declare the topic exchanges and, for each, a durable queue of the
	// same name bound to every key, so that events are kept (the publisher
	// is mandatory: an event no queue receives would be dead-lettered).
	// Existing ones of the same kind are kept.
	conn, err := amqp.DialConfig(cfg.AMQPURL, amqp.Config{Dial: amqp.DefaultDial(10 * time.Second)})
	if err != nil {
		return fmt.Errorf("broker: connect to RabbitMQ: %w", err) // amqp091 errors do not quote the URL
	}
	c.closers = append(c.closers, func() { _ = conn.Close() })
	ch, err := conn.Channel()
	if err != nil {
		return fmt.Errorf("broker: RabbitMQ channel: %w", err)
	}
	for _, ex := range []string{cfg.Prefix, cfg.DeadLetter} {
		if ex == "" {
			continue
		}
		if err := ch.ExchangeDeclare(ex, amqp.ExchangeTopic, true, false, false, false, nil); err != nil {
			return fmt.Errorf("broker: declare exchange %s: %w", ex, err)
		}
		if _, err := ch.QueueDeclare(ex, true, false, false, false, nil); err != nil {
			return fmt.Errorf("broker: declare queue %s: %w", ex, err)
		}
		if err := ch.QueueBind(ex, "#", ex, false, nil); err != nil {
			return fmt.Errorf("broker: bind queue %s: %w", ex, err)
		}
	}
	c.Healthy = func() bool { return !conn.IsClosed() }
	pub, err := rabbitpub.New(cfg.AMQPURL, rabbitpub.WithExchange(cfg.Prefix))
	if err != nil {
		return fmt.Errorf("broker: %w", err)
	}
	c.Publisher = pub
	c.closers = append(c.closers, func() { _ = pub.Close() })
	if cfg.DeadLetter != "" {
		dead, err := rabbitpub.New(cfg.AMQPURL, rabbitpub.WithExchange(cfg.DeadLetter))
		if err != nil {
			return fmt.Errorf("broker: dead letter: %w", err)
		}
		c.DeadLetter = dead
		c.closers = append(c.closers, func() { _ = dead.Close() })
	}
	return nil
}

func (c *Conn) openKafka(cfg Config) error {
	if len(cfg.Kafka) == 0 {
		return fmt.Errorf("%w: no Kafka brokers: pass -kafka or set JITOUTBOX_KAFKA_BROKERS", ErrConfig)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(cfg.Kafka...), kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.AllowAutoTopicCreation(), kgo.ClientID("jitoutbox-orders"))
	if err != nil {
		return fmt.Errorf("broker: kafka client: %w", err)
	}
	c.closers = append(c.closers, cl.Close)
	c.Healthy = func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		return cl.Ping(ctx) == nil
	}
	if c.Publisher, err = kafkapub.New(cl, kafkapub.WithTopicPrefix(cfg.Prefix)); err != nil {
		return fmt.Errorf("broker: %w", err)
	}
	if cfg.DeadLetter != "" {
		dl := cfg.DeadLetter
		if c.DeadLetter, err = kafkapub.New(cl, kafkapub.WithRouter(func(relay.Message) (string, error) { return dl, nil })); err != nil {
			return fmt.Errorf("broker: dead letter: %w", err)
		}
	}
	return nil
}
