package kafkapub_test

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/jitoutbox/jitoutbox/relay"
	"github.com/jitoutbox/jitoutbox/relay/kafkapub"
)

// orderEvent is what a consumer written for Debezium's outbox event router
// takes from a record.
type orderEvent struct {
	eventID, eventType, orderID string
	payload                     string
}

// consumeDebeziumOrders is a consumer written the way one is written for
// Debezium's outbox event router with its defaults (route.topic.replacement
// "outbox.event.${routedByValue}", event id in header "id", aggregate id as
// key, payload as value) and table.fields.additional.placement=
// type:header:eventType. It knows nothing of jitoutbox.
func consumeDebeziumOrders(ctx context.Context, seeds []string, n int) ([]orderEvent, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.ConsumeTopics("outbox.event.order"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	var out []orderEvent
	for len(out) < n {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return out, err
		}
		fs.EachRecord(func(r *kgo.Record) {
			ev := orderEvent{orderID: string(r.Key), payload: string(r.Value)}
			for _, h := range r.Headers {
				switch h.Key {
				case "id":
					ev.eventID = string(h.Value)
				case "eventType":
					ev.eventType = string(h.Value)
				}
			}
			out = append(out, ev)
		})
	}
	return out, nil
}

// TestDebeziumShape: a consumer written for Debezium reads what the Debezium
// option publishes, unchanged.
func TestDebeziumShape(t *testing.T) {
	eachTarget(t, func(t *testing.T, tg target) {
		ctx := ctxTimeout(t, 60*time.Second)
		cl := newClient(t, tg.seeds)
		createTopic(t, ctx, cl, "outbox.event.order", 3, nil)
		pub, err := kafkapub.New(cl, kafkapub.Debezium())
		if err != nil {
			t.Fatal(err)
		}
		batch := testMessages("order", 4)
		batch[2].Headers = map[string]string{"id": "user value loses"}
		mustPublish(t, ctx, pub, batch)
		want := map[string]relay.Message{}
		for _, m := range batch {
			want[m.ID] = m
		}
		// A real cluster may hold records of earlier runs in this topic:
		// read until this run's are all seen.
		got, err := consumeDebeziumOrders(ctx, tg.seeds, len(batch))
		for err == nil && !allSeen(got, want) {
			got, err = consumeDebeziumOrders(ctx, tg.seeds, len(got)+1)
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range got {
			m, ok := want[ev.eventID]
			if !ok {
				continue
			}
			if ev.orderID != m.AggregateID || ev.eventType != m.EventType || ev.payload != string(m.Payload) {
				t.Errorf("event %s: got %+v, want key %s type %s payload %s", m.ID, ev, m.AggregateID, m.EventType, m.Payload)
			}
		}
	})
}

func allSeen(got []orderEvent, want map[string]relay.Message) bool {
	seen := 0
	for _, ev := range got {
		if _, ok := want[ev.eventID]; ok {
			seen++
		}
	}
	return seen == len(want)
}
