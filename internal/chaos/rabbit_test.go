package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/jitoutbox/jitoutbox/internal/tcpproxy"
	"github.com/jitoutbox/jitoutbox/internal/testnats"
	"github.com/jitoutbox/jitoutbox/relay/rabbitpub"
)

// envAMQP names the shared RabbitMQ server.
const envAMQP = "JITOUTBOX_AMQP_URL"

// rabbitMQ is the shared RabbitMQ server behind a TCP proxy the run owns:
// the relays publish through the proxy, which the run's outages cut,
// refuse or stall; the consumer reads a queue of its own straight from the
// server. The exchange and the queue have random names and are deleted at
// cleanup.
type rabbitMQ struct {
	proxy     *tcpproxy.Proxy
	proxyURL  string
	serverURL string
	exchange  string
	queue     string
	quorum    bool
}

func newRabbitMQ(t *testing.T) broker {
	t.Helper()
	u := os.Getenv(envAMQP)
	if u == "" {
		t.Skipf("%s not set: skipping the RabbitMQ chaos run", envAMQP)
	}
	b := &rabbitMQ{serverURL: u, exchange: testnats.RandomName("jitchaos-x-"), queue: testnats.RandomName("jitchaos-q-")}
	conn, err := amqp.Dial(u)
	if err != nil {
		t.Fatalf("%s is set but RabbitMQ cannot be reached: %v", envAMQP, err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatalf("rabbitmq channel: %v", err)
	}
	if err := ch.ExchangeDeclare(b.exchange, amqp.ExchangeTopic, true, false, false, false, nil); err != nil {
		t.Fatalf("declare exchange: %v", err)
	}
	t.Cleanup(func() { b.cleanup(t) })
	// A quorum queue (replicated, the durable kind RabbitMQ recommends)
	// when the server has them; else a classic durable queue. A refused
	// declaration closes the channel, so the fallback opens another.
	_, err = ch.QueueDeclare(b.queue, true, false, false, false, amqp.Table{"x-queue-type": "quorum"})
	b.quorum = err == nil
	if err != nil {
		t.Logf("rabbitmq: no quorum queue (%v); using a classic durable queue", err)
		if ch, err = conn.Channel(); err != nil {
			t.Fatalf("rabbitmq channel: %v", err)
		}
		if _, err := ch.QueueDeclare(b.queue, true, false, false, false, nil); err != nil {
			t.Fatalf("declare queue: %v", err)
		}
	}
	if err := ch.QueueBind(b.queue, "#", b.exchange, false, nil); err != nil {
		t.Fatalf("bind queue: %v", err)
	}
	b.proxy, b.proxyURL = tcpproxy.NewURL(t, u)
	return b
}

// cleanup deletes the queue and the exchange.
func (b *rabbitMQ) cleanup(t *testing.T) {
	conn, err := amqp.Dial(b.serverURL)
	if err != nil {
		t.Logf("rabbitmq cleanup: %v", err)
		return
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		t.Logf("rabbitmq cleanup: %v", err)
		return
	}
	if _, err := ch.QueueDelete(b.queue, false, false, false); err != nil {
		t.Logf("rabbitmq cleanup: delete queue: %v", err)
	}
	if err := ch.ExchangeDelete(b.exchange, false, false); err != nil {
		t.Logf("rabbitmq cleanup: delete exchange: %v", err)
	}
}

func (b *rabbitMQ) name() string {
	kind := "quorum queue"
	if !b.quorum {
		kind = "classic durable queue"
	}
	return "RabbitMQ (shared server behind a TCP proxy; " + kind + ")"
}

func (b *rabbitMQ) natsURL() string { return "" }

func (b *rabbitMQ) relayArgs() []string {
	return []string{"-broker", "rabbitmq", "-amqp", b.proxyURL, "-exchange", b.exchange}
}

// consume reads the queue with manual acks on a connection of its own
// (straight to the server, never cut).
func (b *rabbitMQ) consume(ctx context.Context, rec *recorder) (func(), error) {
	conn, err := amqp.Dial(b.serverURL)
	if err != nil {
		return nil, fmt.Errorf("consumer connection: %w", err)
	}
	ch, err := conn.Channel()
	if err == nil {
		err = ch.Qos(500, 0, false)
	}
	var dels <-chan amqp.Delivery
	if err == nil {
		dels, err = ch.ConsumeWithContext(ctx, b.queue, "jitchaos", false, true, false, false, nil)
	}
	if err != nil {
		_ = conn.Close()
		return nil, fmt.Errorf("consume %s: %w", b.queue, err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for d := range dels { // closed by Cancel or the connection's close
			id, _ := d.Headers[rabbitpub.HeaderEventID].(string)
			agg, _ := d.Headers[rabbitpub.HeaderAggregateID].(string)
			rec.record(delivery{id: id, agg: agg, body: d.Body})
			_ = d.Ack(false)
		}
	}()
	return func() {
		_ = ch.Cancel("jitchaos", false)
		_ = conn.Close()
		wg.Wait()
	}, nil
}

// outage fails the network between the relays and the server for down, in
// one of three ways: every connection cut and new ones refused; every
// connection stalled (nothing forwarded, as a network dropping packets),
// then cut; or the server's answers held back (publishes reach the queue,
// their confirms do not, so the relays publish them again).
func (b *rabbitMQ) outage(ctx context.Context, _ *testing.T, down time.Duration, rng *rand.Rand) string {
	return proxyOutage(ctx, b.proxy, down, rng)
}

// proxyOutage is a broker outage made with a TCP proxy in front of it
// (see rabbitMQ.outage).
func proxyOutage(ctx context.Context, p *tcpproxy.Proxy, down time.Duration, rng *rand.Rand) string {
	d := down.Round(time.Millisecond)
	switch rng.IntN(3) {
	case 0:
		p.Refuse()
		p.Cut()
		pause(ctx, down)
		p.Resume()
		return fmt.Sprintf("connections cut, new ones refused for %v", d)
	case 1:
		p.Stall()
		pause(ctx, down)
		p.Cut()
		p.Resume()
		return fmt.Sprintf("connections stalled for %v, then cut", d)
	default:
		p.StallDown()
		pause(ctx, down)
		p.Resume()
		return fmt.Sprintf("broker-to-relay bytes (confirms, acks) held back for %v", d)
	}
}

// stored: a queue empties as it is consumed; the run cannot count what
// went through it.
func (b *rabbitMQ) stored(context.Context) (uint64, bool, error) { return 0, false, nil }

// maxDuplicates: RabbitMQ does not drop a message published twice, and the
// relay publishes an event again whenever it cannot know it was confirmed
// and marked. See dupBound.
func (b *rabbitMQ) maxDuplicates(f faults) int { return dupBound(f) }

// durable: the relay cannot tell a quorum queue from a classic one (AMQP
// 0-9-1 does not say), so its check stays silent; nothing to assert.
func (b *rabbitMQ) durable() bool { return false }
