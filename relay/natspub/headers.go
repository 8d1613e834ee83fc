package natspub

import (
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jitoutbox/jitoutbox/relay"
)

// Header names set on every published message. User headers never use the
// "Jitoutbox-" or "Nats-" prefixes (txoutbox rejects them), so these always
// describe the event.
const (
	// HeaderMsgID is JetStream's deduplication header; JetStream sets it to
	// the event id. Core NATS messages do not carry it.
	HeaderMsgID = jetstream.MsgIDHeader
	// HeaderEventID is the event id (UUIDv7 text).
	HeaderEventID = "Jitoutbox-Event-Id"
	// HeaderEventType is the event type.
	HeaderEventType = "Jitoutbox-Event-Type"
	// HeaderAggregateType is the aggregate type.
	HeaderAggregateType = "Jitoutbox-Aggregate-Type"
	// HeaderAggregateID is the aggregate id.
	HeaderAggregateID = "Jitoutbox-Aggregate-Id"
	// HeaderIdempotencyKey is the caller's idempotency key, when one was given.
	HeaderIdempotencyKey = "Jitoutbox-Idempotency-Key"
	// HeaderCreatedAt is when the event was registered, RFC 3339 with
	// nanoseconds, in UTC.
	HeaderCreatedAt = "Jitoutbox-Created-At"
	// HeaderContentType is the payload's media type, when one was given.
	HeaderContentType = "Content-Type"
)

// newMsg builds the NATS message for m on subject: the user's headers first,
// then jitoutbox's, so jitoutbox's win on a clash. jitoutbox's values share
// one backing array (one allocation, not one per header; each value is
// capped at length one, so that a later Add to a header copies).
func newMsg(subject string, m *relay.Message) *nats.Msg {
	h := make(nats.Header, len(m.Headers)+7)
	for k, v := range m.Headers {
		h.Set(k, v)
	}
	vals := make([]string, 0, 7)
	set := func(k, v string) {
		vals = append(vals, v)
		n := len(vals)
		h[k] = vals[n-1 : n : n]
	}
	set(HeaderEventID, m.ID)
	set(HeaderEventType, m.EventType)
	set(HeaderAggregateType, m.AggregateType)
	set(HeaderAggregateID, m.AggregateID)
	if m.IdempotencyKey != "" {
		set(HeaderIdempotencyKey, m.IdempotencyKey)
	}
	if !m.CreatedAt.IsZero() {
		set(HeaderCreatedAt, m.CreatedAt.UTC().Format(time.RFC3339Nano))
	}
	if m.ContentType != "" {
		set(HeaderContentType, m.ContentType)
	}
	return &nats.Msg{Subject: subject, Header: h, Data: m.Payload}
}

// EventID returns the jitoutbox event id of a received message, "" if it
// has none. Consumers that must process each event once record it.
func EventID(msg *nats.Msg) string {
	if msg == nil {
		return ""
	}
	return msg.Header.Get(HeaderEventID)
}
