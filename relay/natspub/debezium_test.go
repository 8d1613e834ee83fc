package natspub_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jitoutbox/jitoutbox/internal/testnats"
	"github.com/jitoutbox/jitoutbox/relay"
	"github.com/jitoutbox/jitoutbox/relay/natspub"
)

// orderEvent is what a consumer written for the Debezium outbox shape takes
// from a message.
type orderEvent struct {
	eventID, eventType, payload string
}

// readDebeziumOrder is a consumer written for the Debezium outbox shape
// (subject outbox.event.<aggregate_type>, event id in header "id", event
// type in header "eventType", payload as data). It knows nothing of
// jitoutbox.
func readDebeziumOrder(ctx context.Context, sub *nats.Subscription) (orderEvent, error) {
	msg, err := sub.NextMsgWithContext(ctx)
	if err != nil {
		return orderEvent{}, err
	}
	if msg.Subject != "outbox.event.order" {
		return orderEvent{}, errors.New("unexpected subject " + msg.Subject)
	}
	return orderEvent{eventID: msg.Header.Get("id"), eventType: msg.Header.Get("eventType"), payload: string(msg.Data)}, nil
}

// TestDebeziumShapeCore: a consumer written for the Debezium shape reads
// what the Debezium option publishes, unchanged, and the event id wins over
// a user header "id".
func TestDebeziumShapeCore(t *testing.T) {
	ctx := ctxTimeout(t, 30*time.Second)
	url := testnats.URL(t)
	pubConn, subConn := testnats.Connect(t, url), testnats.Connect(t, url)
	sub, err := subConn.SubscribeSync("outbox.event.order")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sub.Unsubscribe() }()
	if err := subConn.FlushWithContext(ctx); err != nil {
		t.Fatal(err)
	}
	p, err := natspub.NewCore(pubConn, natspub.Debezium())
	if err != nil {
		t.Fatal(err)
	}
	batch := testMessages(3)
	batch[1].Headers = map[string]string{"id": "user value loses", "eventType": "neither"}
	for i, err := range publish(ctx, p, batch) {
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
	}
	want := map[string]relay.Message{}
	for _, m := range batch {
		want[m.ID] = m
	}
	for range batch {
		ev, err := readDebeziumOrder(ctx, sub)
		if err != nil {
			t.Fatal(err)
		}
		m, ok := want[ev.eventID]
		if !ok {
			t.Fatalf("unexpected event id %q", ev.eventID)
		}
		delete(want, ev.eventID)
		if ev.eventType != m.EventType || ev.payload != string(m.Payload) {
			t.Errorf("event %s: got %+v", m.ID, ev)
		}
	}
}

// TestDebeziumShapeJetStream: with JetStream, the Debezium option routes by
// aggregate type alone, under the prefix given, and sets the id and
// eventType headers next to jitoutbox's.
func TestDebeziumShapeJetStream(t *testing.T) {
	ctx := ctxTimeout(t, 30*time.Second)
	_, js := newJS(t, testnats.URL(t))
	s, prefix := testnats.Stream(t, js)
	p := newJetStreamPub(t, js, natspub.Debezium(), natspub.WithSubjectPrefix(prefix+".outbox.event"))
	batch := testMessages(4)
	batch[2].EventType = "order.shipped"
	for i, err := range publish(ctx, p, batch) {
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
	}
	byID := map[string]relay.Message{}
	for _, m := range batch {
		byID[m.ID] = m
	}
	for _, msg := range readStream(t, ctx, s, len(batch)) {
		m := byID[msg.Headers().Get("id")]
		if msg.Subject() != prefix+".outbox.event.order" {
			t.Errorf("%s: subject %q", m.ID, msg.Subject())
		}
		if got := msg.Headers().Get(natspub.DebeziumHeaderEventType); got != m.EventType {
			t.Errorf("%s: eventType %q, want %q", m.ID, got, m.EventType)
		}
		checkHeaders(t, msg.Headers(), m, true)
	}
}

// TestDeadHeaders: a message handed to the dead-letter publisher carries
// the error text, attempts and time; others carry none of these headers.
func TestDeadHeaders(t *testing.T) {
	ctx := ctxTimeout(t, 30*time.Second)
	_, js := newJS(t, testnats.URL(t))
	s, prefix := testnats.Stream(t, js)
	dlq := prefix + ".dead"
	p := newJetStreamPub(t, js, natspub.WithRouter(func(relay.Message) (string, error) { return dlq, nil }))
	batch := testMessages(2)
	at := time.Date(2026, 11, 23, 8, 0, 0, 5, time.FixedZone("CET", 3600))
	batch[0].Dead = &relay.DeadInfo{Error: "kafkapub: message too large", Attempts: 7, At: at}
	for i, err := range publish(ctx, p, batch) {
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
	}
	for _, msg := range readStream(t, ctx, s, len(batch)) {
		h := msg.Headers()
		dead := natspub.EventID(&nats.Msg{Header: h}) == batch[0].ID
		want := map[string]string{natspub.HeaderDeadError: "", natspub.HeaderDeadAttempts: "", natspub.HeaderDeadAt: ""}
		if dead {
			want = map[string]string{natspub.HeaderDeadError: "kafkapub: message too large",
				natspub.HeaderDeadAttempts: "7", natspub.HeaderDeadAt: "2026-11-23T07:00:00.000000005Z"}
		} else if len(h.Values(natspub.HeaderDeadError)) != 0 {
			t.Errorf("live message carries %s", natspub.HeaderDeadError)
		}
		for k, v := range want {
			if got := h.Get(k); got != v {
				t.Errorf("dead %v: header %s = %q, want %q", dead, k, got, v)
			}
		}
	}

	// Core NATS carries them too.
	url := testnats.URL(t)
	pubConn, subConn := testnats.Connect(t, url), testnats.Connect(t, url)
	sub, err := subConn.SubscribeSync(dlq)
	if err != nil {
		t.Fatal(err)
	}
	if err := subConn.FlushWithContext(ctx); err != nil {
		t.Fatal(err)
	}
	cp, err := natspub.NewCore(pubConn, natspub.WithRouter(func(relay.Message) (string, error) { return dlq, nil }))
	if err != nil {
		t.Fatal(err)
	}
	if errs := publish(ctx, cp, batch[:1]); errs[0] != nil {
		t.Fatal(errs[0])
	}
	msg, err := sub.NextMsgWithContext(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if msg.Header.Get(natspub.HeaderDeadAttempts) != "7" || msg.Header.Get(natspub.HeaderDeadError) == "" {
		t.Errorf("core dead headers: %v", msg.Header)
	}
}
