package natspub

import (
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jitoutbox/jitoutbox/relay"
)

func testMessage() relay.Message {
	return relay.Message{
		ID: "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b", Seq: 9007199254740993, AggregateType: "order", AggregateID: "o-42",
		EventType: "order.placed", Payload: []byte(`{"id":42}`), ContentType: "application/json",
		Headers:        map[string]string{"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"},
		IdempotencyKey: "k-1", CreatedAt: time.Date(2026, 11, 22, 10, 0, 0, 123456789, time.UTC),
	}
}

// TestNewMsgHeaders: every header carries its own value, and adding to one
// header (as JetStream does with Nats-Msg-Id, or a caller with Add) leaves
// the others alone although their values share one backing array.
func TestNewMsgHeaders(t *testing.T) {
	m := testMessage()
	msg := newMsg("events.order", &m, m.ID, "STREAM", &options{})
	want := map[string]string{
		HeaderEventID: m.ID, HeaderEventType: "order.placed", HeaderAggregateType: "order",
		HeaderAggregateID: "o-42", HeaderSeq: "9007199254740993", HeaderIdempotencyKey: "k-1", HeaderContentType: "application/json",
		HeaderCreatedAt: "2026-11-22T10:00:00.123456789Z", "traceparent": m.Headers["traceparent"],
		HeaderMsgID: m.ID, jetstream.ExpectedStreamHeader: "STREAM",
	}
	check := func(when string) {
		t.Helper()
		for k, v := range want {
			if got := msg.Header.Values(k); len(got) != 1 || got[0] != v {
				t.Errorf("%s: header %s = %q, want [%q]", when, k, got, v)
			}
		}
	}
	check("built")
	msg.Header.Add(HeaderEventID, "second")
	if got := msg.Header.Values(HeaderEventID); len(got) != 2 || got[1] != "second" {
		t.Fatalf("Add: %q", got)
	}
	delete(want, HeaderEventID)
	check("after Add")
	if msg.Subject != "events.order" || string(msg.Data) != `{"id":42}` {
		t.Errorf("subject %q data %q", msg.Subject, msg.Data)
	}
}

// TestNewMsgWithoutSeq: a message with seq 0 (not read from an outbox table)
// carries no Jitoutbox-Seq header rather than a misleading "0".
func TestNewMsgWithoutSeq(t *testing.T) {
	m := testMessage()
	m.Seq = 0
	msg := newMsg("events.order", &m, "", "", &options{})
	if v, ok := msg.Header[HeaderSeq]; ok {
		t.Errorf("header %s = %q on a message with seq 0", HeaderSeq, v)
	}
}

// BenchmarkNewMsg reports the allocations of building one message.
func BenchmarkNewMsg(b *testing.B) {
	m := testMessage()
	b.ReportAllocs()
	for b.Loop() {
		_ = newMsg("events.order", &m, m.ID, "", &options{})
	}
}

// TestNewMsgDebeziumAndDead: the Debezium headers and the Dead headers are
// set after the user's, so they win over user headers of the same names.
func TestNewMsgDebeziumAndDead(t *testing.T) {
	m := testMessage()
	m.Headers = map[string]string{"id": "spoofed", "eventType": "spoofed", "X": "kept"}
	m.Dead = &relay.DeadInfo{Error: "boom", Attempts: 3, At: time.Date(2026, 11, 23, 9, 0, 0, 0, time.FixedZone("X", -3600))}
	msg := newMsg("outbox.event.order", &m, "", "", &options{debezium: true})
	want := map[string]string{
		DebeziumHeaderID: m.ID, DebeziumHeaderEventType: m.EventType, HeaderEventID: m.ID, "X": "kept",
		HeaderDeadError: "boom", HeaderDeadAttempts: "3", HeaderDeadAt: "2026-11-23T10:00:00Z",
	}
	for k, v := range want {
		if got := msg.Header.Values(k); len(got) != 1 || got[0] != v {
			t.Errorf("header %s = %q, want [%q]", k, got, v)
		}
	}
	m.Dead, m.Headers = nil, nil
	msg = newMsg("outbox.order.placed", &m, "", "", &options{})
	for _, k := range []string{DebeziumHeaderID, DebeziumHeaderEventType, HeaderDeadError, HeaderDeadAttempts, HeaderDeadAt} {
		if _, ok := msg.Header[k]; ok {
			t.Errorf("unexpected header %s", k)
		}
	}
}

// TestNewMsgDropsReservedHeaders: user headers the NATS server reserves
// ("Nats-", any case), which a row written by something other than
// txoutbox may carry, are dropped; the others are kept, and jitoutbox's
// own Nats-Msg-Id stays.
func TestNewMsgDropsReservedHeaders(t *testing.T) {
	m := testMessage()
	m.Headers = map[string]string{
		"Nats-Expected-Last-Subject-Sequence": "999", "nats-ttl": "1s", "NATS-Rollup": "sub",
		"Nats-Msg-Id": "not-the-event", "natsy": "kept", "X-Trace": "kept",
	}
	msg := newMsg("events.order", &m, m.ID, "", &options{})
	for k := range msg.Header {
		if reservedHeader(k) && k != HeaderMsgID {
			t.Errorf("reserved user header %s kept", k)
		}
	}
	if got := msg.Header.Values(HeaderMsgID); len(got) != 1 || got[0] != m.ID {
		t.Errorf("Nats-Msg-Id = %q, want the event id", got)
	}
	if msg.Header.Get("natsy") != "kept" || msg.Header.Get("X-Trace") != "kept" {
		t.Errorf("headers without the reserved prefix dropped: %v", msg.Header)
	}
}
