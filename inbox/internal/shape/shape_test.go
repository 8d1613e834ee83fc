package shape

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/jitoutbox/jitoutbox/inbox"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const id = "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"

func TestRead(t *testing.T) {
	jit := map[string]string{headerEventID: id, headerEventType: "order.paid", headerAggregateType: "order",
		headerAggregateID: "o-1", headerSeq: "42"}
	for _, c := range []struct {
		name string
		src  Source
		o    Options
		want inbox.Message
	}{
		{"jitoutbox headers", Source{Headers: jit, Dest: "outbox.order"},
			Options{}, inbox.Message{EventID: id, EventType: "order.paid", AggregateType: "order", AggregateID: "o-1", Seq: 42}},
		{"debezium detected", Source{Headers: map[string]string{"id": `"` + id + `"`, "eventType": "order.paid"},
			Dest: "outbox.event.order", Key: []byte("o-1")},
			Options{}, inbox.Message{EventID: id, EventType: "order.paid", AggregateType: "order", AggregateID: "o-1"}},
		{"debezium preferred", Source{Headers: map[string]string{headerEventID: "other", "id": id, "eventType": "paid",
			headerAggregateType: "x"}, Dest: "cdc.order", Key: []byte("o-1")},
			Options{Debezium: true, DebeziumPrefix: "cdc"}, inbox.Message{EventID: id, EventType: "paid", AggregateType: "order", AggregateID: "o-1"}},
		{"jitoutbox wins by default", Source{Headers: map[string]string{headerEventID: id, "id": "user value"}},
			Options{}, inbox.Message{EventID: id}},
		{"fallback id and type", Source{Headers: map[string]string{}, FallbackID: id, FallbackType: "t"},
			Options{}, inbox.Message{EventID: id, EventType: "t"}},
		{"malformed seq", Source{Headers: map[string]string{headerSeq: "4x2"}}, Options{}, inbox.Message{Seq: -1}},
		{"zero seq", Source{Headers: map[string]string{headerSeq: "0"}}, Options{}, inbox.Message{Seq: -1}},
	} {
		got := Read(c.src, c.o)
		if got.EventID != c.want.EventID || got.EventType != c.want.EventType || got.AggregateType != c.want.AggregateType ||
			got.AggregateID != c.want.AggregateID || got.Seq != c.want.Seq {
			t.Errorf("%s: got %+v, want %+v", c.name, got, c.want)
		}
	}
}

func TestReadCloudEvents(t *testing.T) {
	env := []byte(`{"specversion":"1.0","id":"` + id + `","source":"/s","type":"order.paid","subject":"o-1","data":{"a":1}}`)
	for _, c := range []struct {
		name string
		src  Source
		o    Options
		want inbox.Message
	}{
		{"nats binary", Source{Headers: map[string]string{"ce-id": id, "ce-type": "order.paid", "ce-subject": "o-1"},
			Payload: []byte("p")}, Options{}, inbox.Message{EventID: id, EventType: "order.paid", AggregateID: "o-1", Payload: []byte("p")}},
		{"kafka binary, partitionkey", Source{Headers: map[string]string{"ce_id": id, "ce_type": "t", "ce_partitionkey": "k"}},
			Options{}, inbox.Message{EventID: id, EventType: "t", AggregateID: "k"}},
		{"amqp binary", Source{Headers: map[string]string{"cloudEvents:id": id, "cloudEvents:type": "t"}},
			Options{}, inbox.Message{EventID: id, EventType: "t"}},
		{"amqp binary, underscore", Source{Headers: map[string]string{"cloudEvents_id": id}},
			Options{}, inbox.Message{EventID: id}},
		{"structured, header", Source{Headers: map[string]string{"content-type": "application/cloudevents+json"}, Payload: env},
			Options{}, inbox.Message{EventID: id, EventType: "order.paid", AggregateID: "o-1", Payload: []byte(`{"a":1}`)}},
		{"structured, property", Source{Headers: map[string]string{}, ContentType: "Application/CloudEvents+JSON; charset=utf-8", Payload: env},
			Options{}, inbox.Message{EventID: id, EventType: "order.paid", AggregateID: "o-1", Payload: []byte(`{"a":1}`)}},
		{"structured, malformed body kept", Source{Headers: map[string]string{"Content-Type": "application/cloudevents+json"},
			Payload: []byte("{")}, Options{}, inbox.Message{Payload: []byte("{")}},
		{"jitoutbox headers win", Source{Headers: map[string]string{headerEventID: id, headerAggregateType: "order",
			"ce-id": "other", "ce-type": "t", "ce-subject": "o-9"}},
			Options{}, inbox.Message{EventID: id, EventType: "t", AggregateType: "order", AggregateID: "o-9"}},
		{"debezium preferred to cloudevents", Source{Headers: map[string]string{"id": id, "ce-id": "other", "ce-type": "t"},
			Key: []byte("k")}, Options{Debezium: true}, inbox.Message{EventID: id, EventType: "t", AggregateID: "k"}},
	} {
		got := Read(c.src, c.o)
		if got.EventID != c.want.EventID || got.EventType != c.want.EventType || got.AggregateType != c.want.AggregateType ||
			got.AggregateID != c.want.AggregateID || got.Seq != c.want.Seq || string(got.Payload) != string(c.want.Payload) {
			t.Errorf("%s: got %+v, want %+v", c.name, got, c.want)
		}
	}
}
