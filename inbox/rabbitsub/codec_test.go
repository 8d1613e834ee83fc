package rabbitsub_test

import (
	"context"
	"os"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/jitoutbox/jitoutbox/codec"
	"github.com/jitoutbox/jitoutbox/inbox"
	"github.com/jitoutbox/jitoutbox/inbox/internal/inboxtest"
	"github.com/jitoutbox/jitoutbox/inbox/rabbitsub"
	"github.com/jitoutbox/jitoutbox/relay/cloudevents"
	"github.com/jitoutbox/jitoutbox/relay/rabbitpub"
)

// TestEncryptedEndToEnd: events encrypted by txoutbox (SQLite), one before
// and one after a key rotation, are published by the relay to RabbitMQ as
// ciphertext (jitoutbox headers, CloudEvents binary and structured mode),
// decoded by the consumer with both keys and applied once; a consumer that
// lacks the new key gets codec.ErrUnknownKey for the newer event
// (inboxtest.Encrypted.Check). In binary mode the codec's headers travel
// in the headers table beside the cloudEvents: attributes.
func TestEncryptedEndToEnd(t *testing.T) {
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
	for _, tc := range []struct {
		name string
		opts []rabbitpub.Option
	}{
		{"jitoutbox", nil},
		{"cloudevents binary", []rabbitpub.Option{rabbitpub.CloudEvents("/orders", cloudevents.Binary)}},
		{"cloudevents structured", []rabbitpub.Option{rabbitpub.CloudEvents("/orders", cloudevents.Structured)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
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
			pub, err := rabbitpub.New(u, append(tc.opts, rabbitpub.WithExchange(x))...)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = pub.Close() }()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			sent := inboxtest.PublishEncrypted(ctx, t, pub)

			var got []amqp.Delivery
			deadline := time.Now().Add(10 * time.Second)
			for len(got) < 2 {
				d, ok, err := ch.Get(q.Name, true)
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
				got = append(got, d)
			}
			for i, d := range got {
				// The codec's headers are strings in the headers table in
				// every shape, the CloudEvents binding's included.
				if v, ok := d.Headers[codec.HeaderEncoding].(string); !ok || v != sent.Encodings[i] {
					t.Fatalf("message %d: %s header %#v, want %q", i, codec.HeaderEncoding, d.Headers[codec.HeaderEncoding], sent.Encodings[i])
				}
				if _, ok := d.Headers[codec.HeaderContentType].(string); !ok {
					t.Fatalf("message %d: no %s header: %v", i, codec.HeaderContentType, d.Headers)
				}
				if tc.name == "cloudevents binary" && d.Headers[cloudevents.PrefixAMQP+cloudevents.AttrID] != sent.IDs[i] {
					t.Fatalf("message %d: headers %v, want the cloudEvents: attributes", i, d.Headers)
				}
			}
			sent.Check(t, func(i int) []byte { return got[i].Body }, func(i int) inbox.Message { return rabbitsub.Delivery(&got[i]) })
		})
	}
}
