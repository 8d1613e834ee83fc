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
	"github.com/jitoutbox/jitoutbox/relay/kafkapub"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestRecords: records published by kafkapub on an in-process cluster,
// plain and with the Debezium option, read back with their id, aggregate
// (the key, with Debezium) and seq; a republish is a Duplicate.
func TestRecords(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "outbox.order", "outbox.event.order"))
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
