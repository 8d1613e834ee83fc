package rabbitsub_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"
	"time"

	"github.com/google/uuid"
	amqp "github.com/rabbitmq/amqp091-go"
	"go.uber.org/goleak"

	"github.com/jitoutbox/jitoutbox/inbox"
	"github.com/jitoutbox/jitoutbox/inbox/internal/inboxtest"
	"github.com/jitoutbox/jitoutbox/inbox/rabbitsub"
	"github.com/jitoutbox/jitoutbox/relay"
	"github.com/jitoutbox/jitoutbox/relay/cloudevents"
	"github.com/jitoutbox/jitoutbox/relay/rabbitpub"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const envURL = "JITOUTBOX_AMQP_URL"

func randomName(prefix string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// TestDeliveries: a message published by rabbitpub (plain and as
// CloudEvents in both modes) and delivered twice (a nack with requeue, as
// after a consumer crash) applies once.
func TestDeliveries(t *testing.T) {
	u := os.Getenv(envURL)
	if u == "" {
		t.Skipf("%s is not set: skipping the RabbitMQ suite (e.g. %s=amqp://guest:guest@127.0.0.1:5672/)", envURL, envURL)
	}
	conn, err := amqp.DialConfig(u, amqp.Config{Dial: amqp.DefaultDial(5 * time.Second)})
	if err != nil {
		t.Fatalf("%s is set but the broker cannot be reached: %v", envURL, err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	x := randomName("jitoutbox-inbox-x-")
	if err := ch.ExchangeDeclare(x, amqp.ExchangeTopic, false, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ch.ExchangeDelete(x, false, false) }()
	q, err := ch.QueueDeclare(randomName("jitoutbox-inbox-q-"), false, false, false, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _, _ = ch.QueueDelete(q.Name, false, false, false) }()
	if err := ch.QueueBind(q.Name, "#", x, false, nil); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name string
		opts []rabbitpub.Option
	}{
		{"jitoutbox", nil},
		{"cloudevents binary", []rabbitpub.Option{rabbitpub.CloudEvents("/orders", cloudevents.Binary)}},
		{"cloudevents structured", []rabbitpub.Option{rabbitpub.CloudEvents("/orders", cloudevents.Structured)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pub, err := rabbitpub.New(u, append(tc.opts, rabbitpub.WithExchange(x))...)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = pub.Close() }()
			ev := relay.Message{ID: uuid.Must(uuid.NewV7()).String(), Seq: 5, AggregateType: "order", AggregateID: "o-3",
				EventType: "order.paid", Payload: []byte(`{"total":42}`), CreatedAt: time.Now()}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			errs := make([]error, 1)
			pub.Publish(ctx, []relay.Message{ev}, errs)
			if errs[0] != nil {
				t.Fatal(errs[0])
			}

			var got []inbox.Message
			deadline := time.Now().Add(10 * time.Second)
			for len(got) < 2 {
				d, ok, err := ch.Get(q.Name, false)
				if err != nil {
					t.Fatal(err)
				}
				if !ok {
					if time.Now().After(deadline) {
						t.Fatalf("got %d of 2 deliveries", len(got))
					}
					time.Sleep(10 * time.Millisecond)
					continue
				}
				got = append(got, rabbitsub.Delivery(&d))
				if len(got) == 1 {
					_ = d.Nack(false, true) // redelivered
				} else {
					_ = d.Ack(false)
				}
			}
			want := inbox.Message{EventID: ev.ID, Seq: 5, AggregateType: "order", AggregateID: "o-3", EventType: "order.paid", Payload: ev.Payload}
			if d := inboxtest.Equal(got[0], want); d != "" {
				t.Fatal(d)
			}
			inboxtest.New(t).Once(t, got...)
		})
	}
}

// TestProperties: without the Jitoutbox-* headers the MessageId and Type
// properties give the event id and type.
func TestProperties(t *testing.T) {
	id := uuid.Must(uuid.NewV7()).String()
	got := rabbitsub.Delivery(&amqp.Delivery{MessageId: id, Type: "order.paid",
		Headers: amqp.Table{rabbitpub.HeaderSeq: int64(9)}})
	if got.EventID != id || got.EventType != "order.paid" || got.Seq != 9 {
		t.Fatalf("%+v", got)
	}
	if m := rabbitsub.Delivery(nil); m.EventID != "" {
		t.Fatal(m)
	}
}

// TestCloudEventsOnly: CloudEvents of another producer (no Jitoutbox-*
// headers), in binary mode with the AMQP binding's "cloudEvents:" (or
// "cloudEvents_") application properties as headers and in structured mode
// (the content-type property), give their id, type, subject as aggregate
// id and data.
func TestCloudEventsOnly(t *testing.T) {
	id := uuid.Must(uuid.NewV7()).String()
	for _, p := range []string{"cloudEvents:", "cloudEvents_"} {
		d := &amqp.Delivery{ContentType: "application/json", Body: []byte(`{"total":1}`), Headers: amqp.Table{
			p + "specversion": "1.0", p + "id": id, p + "source": "/orders", p + "type": "order.paid", p + "subject": "o-2"}}
		if diff := inboxtest.Equal(rabbitsub.Delivery(d), inbox.Message{EventID: id, EventType: "order.paid", AggregateID: "o-2",
			Payload: d.Body}); diff != "" {
			t.Fatal(p, diff)
		}
	}
	d := &amqp.Delivery{ContentType: "application/cloudevents+json",
		Body: []byte(`{"specversion":"1.0","id":"` + id + `","source":"/orders","type":"order.paid","subject":"o-3",` +
			`"datacontenttype":"text/plain","data":"hello"}`)}
	if diff := inboxtest.Equal(rabbitsub.Delivery(d), inbox.Message{EventID: id, EventType: "order.paid", AggregateID: "o-3",
		Payload: []byte("hello")}); diff != "" {
		t.Fatal(diff)
	}
}
