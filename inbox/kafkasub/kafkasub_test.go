package kafkasub_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/goleak"

	"github.com/jitoutbox/jitoutbox/inbox"
	"github.com/jitoutbox/jitoutbox/inbox/internal/inboxtest"
	"github.com/jitoutbox/jitoutbox/inbox/kafkasub"
	"github.com/jitoutbox/jitoutbox/relay"
	"github.com/jitoutbox/jitoutbox/relay/cloudevents"
	"github.com/jitoutbox/jitoutbox/relay/kafkapub"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestRecords: records published by kafkapub on an in-process cluster,
// plain, with the Debezium option and as CloudEvents (the payload is the
// event data in structured mode too), read back with their id, aggregate
// (the key, with Debezium) and seq; a republish is a Duplicate.
func TestRecords(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "outbox.order", "outbox.event.order",
		"cebinary.order", "cestructured.order"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	seeds := c.ListenAddrs()
	f := inboxtest.New(t)
	for _, tc := range []struct {
		name    string
		pubOpts []kafkapub.Option
		opts    []kafkasub.Option
		topic   string
	}{
		{"jitoutbox", nil, nil, "outbox.order"},
		{"debezium", []kafkapub.Option{kafkapub.Debezium()}, []kafkasub.Option{kafkasub.Debezium()}, "outbox.event.order"},
		{"cloudevents binary", []kafkapub.Option{kafkapub.CloudEvents("/orders", cloudevents.Binary),
			kafkapub.WithTopicPrefix("cebinary")}, nil, "cebinary.order"},
		{"cloudevents structured", []kafkapub.Option{kafkapub.CloudEvents("/orders", cloudevents.Structured),
			kafkapub.WithTopicPrefix("cestructured")}, nil, "cestructured.order"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			pub, err := kafkapub.Open(seeds, tc.pubOpts...)
			if err != nil {
				t.Fatal(err)
			}
			defer pub.Close()
			ev := relay.Message{ID: uuid.Must(uuid.NewV7()).String(), Seq: 11, AggregateType: "order", AggregateID: "o-9",
				EventType: "order.paid", Payload: []byte(`{"total":42}`), CreatedAt: time.Now()}
			for range 2 { // the second is a republish after a relay crash
				errs := make([]error, 1)
				pub.Publish(ctx, []relay.Message{ev}, errs)
				if errs[0] != nil {
					t.Fatal(errs[0])
				}
			}
			cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.ConsumeTopics(tc.topic),
				kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Close()
			var got []inbox.Message
			for len(got) < 2 {
				fs := cl.PollFetches(ctx)
				if err := ctx.Err(); err != nil {
					t.Fatal(err)
				}
				fs.EachRecord(func(r *kgo.Record) { got = append(got, kafkasub.Record(r, tc.opts...)) })
			}
			want := inbox.Message{EventID: ev.ID, Seq: 11, AggregateType: "order", AggregateID: "o-9",
				EventType: "order.paid", Payload: ev.Payload}
			if d := inboxtest.Equal(got[0], want); d != "" {
				t.Fatal(d)
			}
			f.Once(t, got...)
		})
	}
}

// TestDebeziumConnectorRecord: a record of Debezium's own outbox event
// router (no Jitoutbox-* headers; the JSON header converter quotes the id)
// is read from its fields: id, eventType, topic, key.
func TestDebeziumConnectorRecord(t *testing.T) {
	id := uuid.Must(uuid.NewV7()).String()
	r := &kgo.Record{Topic: "outbox.event.order", Key: []byte("o-1"), Value: []byte("{}"),
		Headers: []kgo.RecordHeader{{Key: "id", Value: []byte(`"` + id + `"`)}, {Key: "eventType", Value: []byte("order.paid")}}}
	got := kafkasub.Record(r)
	if got.EventID != id || got.AggregateType != "order" || got.AggregateID != "o-1" || got.EventType != "order.paid" {
		t.Fatalf("%+v", got)
	}
	if m := kafkasub.Record(nil); m.EventID != "" {
		t.Fatal(m)
	}
}

// TestCloudEventsOnly: CloudEvents of another producer (no Jitoutbox-*
// headers), in binary mode with the Kafka binding's "ce_" headers and in
// structured mode, give their id, type, subject as aggregate id and data.
func TestCloudEventsOnly(t *testing.T) {
	id := uuid.Must(uuid.NewV7()).String()
	h := func(k, v string) kgo.RecordHeader { return kgo.RecordHeader{Key: k, Value: []byte(v)} }
	binary := &kgo.Record{Topic: "orders", Key: []byte("k"), Value: []byte(`{"total":1}`), Headers: []kgo.RecordHeader{
		h("ce_specversion", "1.0"), h("ce_id", id), h("ce_source", "/orders"), h("ce_type", "order.paid"),
		h("ce_subject", "o-2"), h("content-type", "application/json")}}
	if d := inboxtest.Equal(kafkasub.Record(binary), inbox.Message{EventID: id, EventType: "order.paid", AggregateID: "o-2",
		Payload: binary.Value}); d != "" {
		t.Fatal(d)
	}
	structured := &kgo.Record{Topic: "orders", Headers: []kgo.RecordHeader{h("content-type", "application/cloudevents+json")},
		Value: []byte(`{"specversion":"1.0","id":"` + id + `","source":"/orders","type":"order.paid","partitionkey":"o-3",` +
			`"data_base64":"AAEC"}`)}
	if d := inboxtest.Equal(kafkasub.Record(structured), inbox.Message{EventID: id, EventType: "order.paid", AggregateID: "o-3",
		Payload: []byte{0, 1, 2}}); d != "" {
		t.Fatal(d)
	}
}
