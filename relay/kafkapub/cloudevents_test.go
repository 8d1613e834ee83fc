package kafkapub_test

import (
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/jitoutbox/jitoutbox/internal/cetest"
	"github.com/jitoutbox/jitoutbox/relay"
	"github.com/jitoutbox/jitoutbox/relay/cloudevents"
	"github.com/jitoutbox/jitoutbox/relay/kafkapub"
)

const ceSource = "https://orders.example.com/jitoutbox"

// TestCloudEventsDecodedBySDK publishes with the CloudEvents option, in
// both modes, and decodes the consumed records with the CloudEvents Go SDK.
// The SDK's Kafka binding is built on sarama, not franz-go: the records go
// through binding.ToEvent over the Kafka binding's header names ("ce_"
// prefix, "content-type") with internal/cetest's generic message. Every
// event equals what was published, and the key is the aggregate id.
func TestCloudEventsDecodedBySDK(t *testing.T) {
	for _, mode := range []cloudevents.Mode{cloudevents.Binary, cloudevents.Structured} {
		t.Run(mode.String(), func(t *testing.T) {
			eachTarget(t, func(t *testing.T, tg target) {
				ctx := ctxTimeout(t, 60*time.Second)
				cl := newClient(t, tg.seeds)
				prefix := randomName("kafkapub-ce-")
				createTopic(t, ctx, cl, prefix+".order", 2, nil)
				pub, err := kafkapub.New(cl, kafkapub.WithTopicPrefix(prefix), kafkapub.CloudEvents(ceSource, mode))
				if err != nil {
					t.Fatal(err)
				}
				batch := testMessages("order", 8)
				batch[0].Headers["traceparent"] = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
				batch[0].Headers["tracestate"] = "vendor=v1"
				batch[1].Headers["traceparent"] = "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-00"
				batch[2].Payload, batch[2].ContentType = []byte{0, 1, 0xfe, 0xff}, "application/octet-stream"
				batch[3].Payload = nil
				batch[4].ContentType = ""
				mustPublish(t, ctx, pub, batch)
				byID := map[string]relay.Message{}
				for _, m := range batch {
					byID[m.ID] = m
				}
				for _, rec := range consume(t, ctx, tg.seeds, len(batch), prefix+".order") {
					flat := flatten(rec.Headers)
					ev := cetest.Decode(t, &cetest.Message{Headers: flat, Prefix: cloudevents.PrefixKafka,
						ContentType: flat[cloudevents.HeaderContentType], Body: rec.Value}, mode)
					m, ok := byID[ev.ID()]
					if !ok {
						t.Fatalf("unexpected event %q", ev.ID())
					}
					delete(byID, ev.ID())
					cetest.Check(t, ev, ceSource, m)
					if string(rec.Key) != m.AggregateID || kafkapub.EventID(rec) != m.ID {
						t.Errorf("%s: key %q, event id header %q", m.ID, rec.Key, kafkapub.EventID(rec))
					}
					for _, k := range []string{kafkapub.HeaderEventID, kafkapub.HeaderEventType, kafkapub.HeaderAggregateID, kafkapub.HeaderCreatedAt} {
						if _, ok := flat[k]; ok == (mode == cloudevents.Binary) {
							t.Errorf("%s: %s mode, header %s present: %v", m.ID, mode, k, ok)
						}
					}
					if flat[kafkapub.HeaderAggregateType] != m.AggregateType {
						t.Errorf("%s: aggregate type header %q", m.ID, flat[kafkapub.HeaderAggregateType])
					}
					if _, ok := flat[kafkapub.HeaderContentType]; ok {
						t.Errorf("%s: both %s and %s headers", m.ID, kafkapub.HeaderContentType, cloudevents.HeaderContentType)
					}
				}
				if len(byID) != 0 {
					t.Errorf("%d events not received", len(byID))
				}
			})
		})
	}
}

// flatten returns the first value of each record header.
func flatten(hs []kgo.RecordHeader) map[string]string {
	out := make(map[string]string, len(hs))
	for _, h := range hs {
		if _, ok := out[h.Key]; !ok {
			out[h.Key] = string(h.Value)
		}
	}
	return out
}

func TestCloudEventsOptionRefused(t *testing.T) {
	cl := newClient(t, newFake(t).ListenAddrs())
	for _, src := range []string{"", "not a uri", "1x:y", "/a%zz", "x#a#b"} {
		_, err := kafkapub.New(cl, kafkapub.CloudEvents(src, cloudevents.Binary))
		if !errors.Is(err, cloudevents.ErrInvalidSource) || !errors.Is(err, kafkapub.ErrInvalidOption) {
			t.Errorf("source %q: %v, want ErrInvalidSource and ErrInvalidOption", src, err)
		}
	}
	if _, err := kafkapub.New(cl, kafkapub.CloudEvents("/x", cloudevents.Mode(9))); !errors.Is(err, cloudevents.ErrInvalidMode) {
		t.Errorf("bad mode: %v", err)
	}
	if _, err := kafkapub.New(cl, kafkapub.CloudEvents("/x", cloudevents.Binary), kafkapub.Debezium()); !errors.Is(err, kafkapub.ErrInvalidOption) {
		t.Errorf("with Debezium: %v", err)
	}
}
