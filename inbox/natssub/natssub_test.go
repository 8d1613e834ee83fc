package natssub_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/goleak"

	"github.com/jitoutbox/jitoutbox/inbox"
	"github.com/jitoutbox/jitoutbox/inbox/internal/inboxtest"
	"github.com/jitoutbox/jitoutbox/inbox/natssub"
	"github.com/jitoutbox/jitoutbox/internal/testnats"
	"github.com/jitoutbox/jitoutbox/relay"
	"github.com/jitoutbox/jitoutbox/relay/cloudevents"
	"github.com/jitoutbox/jitoutbox/relay/natspub"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func event(seq int64) relay.Message {
	return relay.Message{ID: uuid.Must(uuid.NewV7()).String(), Seq: seq, AggregateType: "order", AggregateID: "o-1",
		EventType: "order.paid", Payload: []byte(`{"total":42}`), CreatedAt: time.Now()}
}

func want(m relay.Message) inbox.Message {
	return inbox.Message{EventID: m.ID, Seq: m.Seq, AggregateType: m.AggregateType, AggregateID: m.AggregateID,
		EventType: m.EventType, Payload: m.Payload}
}

func publish(t *testing.T, p relay.Publisher, batch ...relay.Message) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	errs := make([]error, len(batch))
	p.Publish(ctx, batch, errs)
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestCore: messages published by natspub on core NATS, plain, in the
// Debezium shape and as CloudEvents (the payload is the event data in
// structured mode too), read back with their id, aggregate and seq; a republish
// is a Duplicate.
func TestCore(t *testing.T) {
	srv := testnats.Server(t)
	nc := testnats.Connect(t, srv.URL)
	f := inboxtest.New(t)
	for _, c := range []struct {
		name    string
		pubOpts []natspub.Option
		opts    []natssub.Option
		subject string
	}{
		{"jitoutbox", nil, nil, "outbox.>"},
		{"debezium", []natspub.Option{natspub.Debezium()}, []natssub.Option{natssub.Debezium()}, "outbox.event.>"},
		{"cloudevents binary", []natspub.Option{natspub.CloudEvents("/orders", cloudevents.Binary)}, nil, "outbox.>"},
		{"cloudevents structured", []natspub.Option{natspub.CloudEvents("/orders", cloudevents.Structured)}, nil, "outbox.>"},
	} {
		t.Run(c.name, func(t *testing.T) {
			sub, err := nc.SubscribeSync(c.subject)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = sub.Unsubscribe() }()
			pub, err := natspub.NewCore(nc, c.pubOpts...)
			if err != nil {
				t.Fatal(err)
			}
			ev := event(7)
			publish(t, pub, ev)
			publish(t, pub, ev) // a republish after a relay crash
			var got []inbox.Message
			for range 2 {
				msg, err := sub.NextMsg(5 * time.Second)
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, natssub.Message(msg, c.opts...))
			}
			if d := inboxtest.Equal(got[0], want(ev)); d != "" {
				t.Fatal(d)
			}
			f.Once(t, got...)
		})
	}
}

// TestDebeziumOnly: a message of another Debezium-shaped producer (no
// Jitoutbox-* headers, the id a JSON string) is read from its own fields.
func TestDebeziumOnly(t *testing.T) {
	id := uuid.Must(uuid.NewV7()).String()
	msg := &nats.Msg{Subject: "outbox.event.order", Data: []byte("{}"),
		Header: nats.Header{"id": []string{`"` + id + `"`}, "eventType": []string{"order.paid"}}}
	got := natssub.Message(msg)
	if got.EventID != id || got.AggregateType != "order" || got.EventType != "order.paid" || got.Seq != 0 {
		t.Fatalf("%+v", got)
	}
	if m := natssub.Message(nil); m.EventID != "" {
		t.Fatal(m)
	}
}

// TestCloudEventsOnly: CloudEvents of another producer (no Jitoutbox-*
// headers), in binary mode with the NATS binding's "ce-" headers and in
// structured mode, give their id, type, subject (else partitionkey) as
// aggregate id and data; they apply once.
func TestCloudEventsOnly(t *testing.T) {
	f := inboxtest.New(t)
	id := uuid.Must(uuid.NewV7()).String()
	binary := &nats.Msg{Subject: "orders", Data: []byte(`{"total":1}`), Header: nats.Header{
		"ce-specversion": {"1.0"}, "ce-id": {id}, "ce-source": {"/orders"}, "ce-type": {"order.paid"},
		"ce-partitionkey": {"o-2"}, "content-type": {"application/json"}}}
	got := natssub.Message(binary)
	if d := inboxtest.Equal(got, inbox.Message{EventID: id, EventType: "order.paid", AggregateID: "o-2",
		Payload: binary.Data}); d != "" {
		t.Fatal(d)
	}
	f.Once(t, got, natssub.Message(binary))

	id = uuid.Must(uuid.NewV7()).String()
	structured := &nats.Msg{Subject: "orders", Header: nats.Header{"content-type": {"application/cloudevents+json; charset=utf-8"}},
		Data: []byte(`{"specversion":"1.0","id":"` + id + `","source":"/orders","type":"order.paid","subject":"o-3",` +
			`"datacontenttype":"application/json","data":{"total":2}}`)}
	got = natssub.Message(structured)
	if d := inboxtest.Equal(got, inbox.Message{EventID: id, EventType: "order.paid", AggregateID: "o-3",
		Payload: []byte(`{"total":2}`)}); d != "" {
		t.Fatal(d)
	}
	f.Once(t, got, natssub.Message(structured))
}

// TestJetStream: a message published by natspub to JetStream and consumed
// twice (a redelivery after a missing ack) applies once; a message without
// the id header is refused.
func TestJetStream(t *testing.T) {
	srv := testnats.Server(t)
	nc := testnats.Connect(t, srv.URL)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	stream, prefix := testnats.Stream(t, js)
	pub, err := natspub.NewJetStream(js, natspub.WithSubjectPrefix(prefix))
	if err != nil {
		t.Fatal(err)
	}
	ev := event(3)
	publish(t, pub, ev)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cons, err := stream.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{AckPolicy: jetstream.AckExplicitPolicy,
		AckWait: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var got []inbox.Message
	for len(got) < 2 { // the first is never acked: JetStream redelivers it
		batch, err := cons.Fetch(1, jetstream.FetchMaxWait(5*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		for msg := range batch.Messages() {
			got = append(got, natssub.JetStream(msg))
			if len(got) == 2 {
				_ = msg.Ack()
			}
		}
		if err := batch.Error(); err != nil {
			t.Fatal(err)
		}
	}
	if d := inboxtest.Equal(got[0], want(ev)); d != "" {
		t.Fatal(d)
	}
	f := inboxtest.New(t)
	f.Once(t, got...)

	if _, err := f.Handle(t, natssub.Message(&nats.Msg{Subject: "x", Data: []byte("{}")})); !errors.Is(err, inbox.ErrNoEventID) {
		t.Fatalf("a message without an id: %v", err)
	}
}
