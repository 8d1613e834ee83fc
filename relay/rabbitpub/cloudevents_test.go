package rabbitpub_test

import (
	"errors"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/jitoutbox/jitoutbox/internal/cetest"
	"github.com/jitoutbox/jitoutbox/relay"
	"github.com/jitoutbox/jitoutbox/relay/cloudevents"
	"github.com/jitoutbox/jitoutbox/relay/rabbitpub"
)

const ceSource = "https://orders.example.com/jitoutbox"

// TestCloudEventsDecodedBySDK publishes with the CloudEvents option, in
// both modes, and decodes the deliveries with the CloudEvents Go SDK. The
// SDK has no AMQP 0-9-1 binding (its AMQP binding speaks AMQP 1.0): the
// deliveries go through binding.ToEvent over the AMQP binding's names
// ("cloudEvents:" headers, the content-type property) with
// internal/cetest's generic message. Every event equals what was published.
func TestCloudEventsDecodedBySDK(t *testing.T) {
	for _, mode := range []cloudevents.Mode{cloudevents.Binary, cloudevents.Structured} {
		t.Run(mode.String(), func(t *testing.T) {
			ctx := ctxTimeout(t, 30*time.Second)
			b := newBroker(t)
			x := b.exchange()
			q := b.queue(x, "order.#")
			p := newPub(t, b.url, rabbitpub.WithExchange(x), rabbitpub.CloudEvents(ceSource, mode))
			batch := testMessages(8)
			batch[0].Headers["traceparent"] = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
			batch[0].Headers["tracestate"] = "vendor=v1"
			batch[1].Headers["traceparent"] = "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-00"
			batch[2].Payload, batch[2].ContentType = []byte{0, 1, 0xfe, 0xff}, "application/octet-stream"
			batch[3].Payload = nil
			batch[4].ContentType = ""
			noErrors(t, publish(ctx, p, batch))
			byID := map[string]relay.Message{}
			for _, m := range batch {
				byID[m.ID] = m
			}
			for _, d := range b.consume(q, len(batch)) {
				ev := cetest.Decode(t, &cetest.Message{Headers: flatten(d.Headers), Prefix: cloudevents.PrefixAMQP,
					ContentType: d.ContentType, Body: d.Body}, mode)
				m, ok := byID[ev.ID()]
				if !ok {
					t.Fatalf("unexpected event %q", ev.ID())
				}
				delete(byID, ev.ID())
				cetest.Check(t, ev, ceSource, m)
				if rabbitpub.EventID(&d) != m.ID || d.MessageId != m.ID || d.Type != m.EventType {
					t.Errorf("%s: event id %q, message id %q, type %q", m.ID, rabbitpub.EventID(&d), d.MessageId, d.Type)
				}
				flat := flatten(d.Headers)
				for _, k := range []string{rabbitpub.HeaderEventID, rabbitpub.HeaderEventType, rabbitpub.HeaderAggregateID, rabbitpub.HeaderCreatedAt} {
					if _, ok := flat[k]; ok == (mode == cloudevents.Binary) {
						t.Errorf("%s: %s mode, header %s present: %v", m.ID, mode, k, ok)
					}
				}
				if flat[rabbitpub.HeaderAggregateType] != m.AggregateType {
					t.Errorf("%s: aggregate type header %q", m.ID, flat[rabbitpub.HeaderAggregateType])
				}
			}
			if len(byID) != 0 {
				t.Errorf("%d events not received", len(byID))
			}
		})
	}
}

// flatten returns the string headers of a delivery.
func flatten(h amqp.Table) map[string]string {
	out := make(map[string]string, len(h))
	for k, v := range h {
		if s, ok := v.(string); ok {
			out[k] = s
		}
	}
	return out
}

func TestCloudEventsOptionRefused(t *testing.T) {
	for _, src := range []string{"", "not a uri", "1x:y", "/a%zz", "x#a#b"} {
		_, err := rabbitpub.New("amqp://localhost/", rabbitpub.WithExchange("x"), rabbitpub.CloudEvents(src, cloudevents.Binary))
		if !errors.Is(err, cloudevents.ErrInvalidSource) || !errors.Is(err, rabbitpub.ErrInvalidOption) {
			t.Errorf("source %q: %v, want ErrInvalidSource and ErrInvalidOption", src, err)
		}
	}
	if _, err := rabbitpub.New("amqp://localhost/", rabbitpub.WithExchange("x"), rabbitpub.CloudEvents("/x", cloudevents.Mode(9))); !errors.Is(err, cloudevents.ErrInvalidMode) {
		t.Errorf("bad mode: %v", err)
	}
}
