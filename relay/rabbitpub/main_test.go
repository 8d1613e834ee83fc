package rabbitpub_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
	"go.uber.org/goleak"

	"github.com/jitoutbox/jitoutbox/relay"
	"github.com/jitoutbox/jitoutbox/relay/rabbitpub"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// envURL names the environment variable with the broker's URL.
const envURL = "JITOUTBOX_AMQP_URL"

// brokerURL returns $JITOUTBOX_AMQP_URL, skipping the test when it is unset
// and failing it when the broker cannot be reached.
func brokerURL(t testing.TB) string {
	t.Helper()
	u := os.Getenv(envURL)
	if u == "" {
		t.Skipf("%s is not set: skipping the RabbitMQ suite (e.g. %s=amqp://guest:guest@127.0.0.1:5672/)", envURL, envURL)
	}
	conn, err := amqp.DialConfig(u, amqp.Config{Dial: amqp.DefaultDial(5 * time.Second)})
	if err != nil {
		t.Fatalf("%s is set but the broker cannot be reached: %v", envURL, err)
	}
	_ = conn.Close()
	return u
}

// randomName returns prefix followed by 12 random hex digits.
func randomName(prefix string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// broker is a test's admin connection and the topology it declared.
type broker struct {
	t    testing.TB
	url  string
	conn *amqp.Connection
	ch   *amqp.Channel
}

// newBroker opens an admin connection, closed when the test ends.
func newBroker(t testing.TB) *broker {
	t.Helper()
	u := brokerURL(t)
	conn, err := amqp.Dial(u)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	ch, err := conn.Channel()
	if err != nil {
		t.Fatalf("channel: %v", err)
	}
	return &broker{t: t, url: u, conn: conn, ch: ch}
}

// exchange declares a topic exchange with a unique name, deleted when the
// test ends.
func (b *broker) exchange() string {
	b.t.Helper()
	name := randomName("jitoutbox-test-x-")
	if err := b.ch.ExchangeDeclare(name, amqp.ExchangeTopic, false, false, false, false, nil); err != nil {
		b.t.Fatalf("declare exchange: %v", err)
	}
	b.t.Cleanup(func() { _ = b.ch.ExchangeDelete(name, false, false) })
	return name
}

// queue declares a queue with a unique name bound to exchange with each of
// keys, deleted when the test ends.
func (b *broker) queue(exchange string, keys ...string) string {
	b.t.Helper()
	q, err := b.ch.QueueDeclare(randomName("jitoutbox-test-q-"), false, false, false, false, nil)
	if err != nil {
		b.t.Fatalf("declare queue: %v", err)
	}
	b.t.Cleanup(func() { _, _ = b.ch.QueueDelete(q.Name, false, false, false) })
	for _, k := range keys {
		if err := b.ch.QueueBind(q.Name, k, exchange, false, nil); err != nil {
			b.t.Fatalf("bind queue: %v", err)
		}
	}
	return q.Name
}

// consume reads n messages from queue, failing the test when they do not
// arrive within 10 seconds.
func (b *broker) consume(queue string, n int) []amqp.Delivery {
	b.t.Helper()
	out := make([]amqp.Delivery, 0, n)
	deadline := time.Now().Add(10 * time.Second)
	for len(out) < n {
		d, ok, err := b.ch.Get(queue, true)
		if err != nil {
			b.t.Fatalf("get from %s: %v", queue, err)
		}
		if ok {
			out = append(out, d)
			continue
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("queue %s: got %d of %d messages", queue, len(out), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return out
}

// depth returns the number of ready messages in queue.
func (b *broker) depth(queue string) int {
	b.t.Helper()
	q, err := b.ch.QueueDeclarePassive(queue, false, false, false, false, nil)
	if err != nil {
		b.t.Fatalf("inspect queue %s: %v", queue, err)
	}
	return q.Messages
}

// newPub returns a publisher for url closed when the test ends.
func newPub(t testing.TB, url string, opts ...rabbitpub.Option) *rabbitpub.Publisher {
	t.Helper()
	p, err := rabbitpub.New(url, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// testMessages returns n messages with distinct aggregates and fresh ids.
func testMessages(n int) []relay.Message {
	run := randomName("")
	created := time.Date(2026, 11, 22, 6, 30, 0, 123456789, time.UTC)
	out := make([]relay.Message, n)
	for i := range out {
		out[i] = relay.Message{
			ID:            fmt.Sprintf("evt-%s-%04d", run, i),
			AggregateType: "order",
			AggregateID:   fmt.Sprintf("o-%d", i),
			EventType:     "order.paid",
			Payload:       fmt.Appendf(nil, `{"n":%d}`, i),
			ContentType:   "application/json",
			Headers:       map[string]string{"X-Trace": fmt.Sprintf("trace-%d", i)},
			CreatedAt:     created.Add(time.Duration(i) * time.Second),
			Attempt:       1,
		}
		if i%2 == 0 {
			out[i].IdempotencyKey = fmt.Sprintf("idem-%d", i)
		}
	}
	return out
}

func ctxTimeout(t *testing.T, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// publish publishes batch and returns the errors.
func publish(ctx context.Context, p relay.Publisher, batch []relay.Message) []error {
	errs := make([]error, len(batch))
	p.Publish(ctx, batch, errs)
	return errs
}

// noErrors fails the test unless every error is nil.
func noErrors(t *testing.T, errs []error) {
	t.Helper()
	for i, err := range errs {
		if err != nil {
			t.Errorf("errs[%d] = %v", i, err)
		}
	}
}
