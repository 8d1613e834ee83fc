package natspub

import (
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jitoutbox/jitoutbox/relay"
	"github.com/jitoutbox/jitoutbox/relay/cloudevents"
)

// Header names set on every published message. User headers never use the
// "Jitoutbox-" or "Nats-" prefixes (txoutbox rejects them), so these always
// describe the event. A user header with the "Nats-" prefix (any case) in a
// row written by something other than txoutbox is dropped: the server
// reserves those names and acts on them (Nats-Expected-Last-Subject-Sequence
// would make JetStream refuse the message on every try, Nats-TTL or
// Nats-Rollup would change what the stream keeps); on a clash with a
// "Jitoutbox-" header, jitoutbox's wins.
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
	// HeaderSeq is the outbox row's seq in decimal (relay.Message.Seq): it
	// grows with registration order within an aggregate, so a consumer can
	// tell an event older than the last one it applied. Messages with seq 0
	// (not read from an outbox table) do not carry it.
	HeaderSeq = "Jitoutbox-Seq"
	// HeaderIdempotencyKey is the caller's idempotency key, when one was given.
	HeaderIdempotencyKey = "Jitoutbox-Idempotency-Key"
	// HeaderCreatedAt is when the event was registered, RFC 3339 with
	// nanoseconds, in UTC.
	HeaderCreatedAt = "Jitoutbox-Created-At"
	// HeaderContentType is the payload's media type, when one was given.
	HeaderContentType = "Content-Type"

	// HeaderDeadError is the last publish error's text, on messages of
	// dead-lettered events (relay.Message.Dead set, as the relay hands them
	// to Config.DeadLetter).
	HeaderDeadError = "Jitoutbox-Dead-Error"
	// HeaderDeadAttempts is the number of failed publish attempts, in
	// decimal, on messages of dead-lettered events.
	HeaderDeadAttempts = "Jitoutbox-Dead-Attempts"
	// HeaderDeadAt is when the relay dead-lettered the event, RFC 3339 with
	// nanoseconds, in UTC, on messages of dead-lettered events.
	HeaderDeadAt = "Jitoutbox-Dead-At"

	// DebeziumHeaderID is the header that holds the event id with the
	// Debezium option, as Debezium's outbox event router sets it. It is set
	// after the user's headers, so a user header "id" cannot replace it.
	DebeziumHeaderID = "id"
	// DebeziumHeaderEventType is the header that holds the event type with
	// the Debezium option: the name Debezium gives it with
	// table.fields.additional.placement=type:header:eventType (and the name
	// package kafkapub uses).
	DebeziumHeaderEventType = "eventType"
)

// newMsg builds the NATS message for m on subject: the user's headers first,
// then jitoutbox's, so jitoutbox's win on a clash. With o.debezium, the
// event id and type are also set as [DebeziumHeaderID] and
// [DebeziumHeaderEventType]; with o.ce, the CloudEvents headers, content
// type and body are the encoder's; when m.Dead is set, the Dead headers are
// added. jitoutbox's values share
// one backing array (one allocation, not one per header; each value is
// capped at length one, so that a later Add to a header copies).
//
// For JetStream, msgID (the event id) and expectStream, when not empty, are
// set as the Nats-Msg-Id and Nats-Expected-Stream headers here, in the same
// array, rather than through jetstream.WithMsgID and WithExpectStream, which
// cost an option closure and a header allocation per message and set the
// same headers.
func newMsg(subject string, m *relay.Message, msgID, expectStream string, o *options) *nats.Msg {
	ce := o.ce
	// In CloudEvents binary mode the ce- headers carry the event id, type,
	// aggregate id (subject), created at (time) and content type: the
	// headers of jitoutbox's that would repeat them are left out.
	bin := ce != nil && ce.Mode() == cloudevents.Binary
	// The exact entry count: up to 8 fits a small map of one group; past
	// that, sizing the map once beats growing it, and a larger hint than
	// needed costs a larger table.
	n := len(m.Headers) + 1
	if !bin {
		n += 3
		if !m.CreatedAt.IsZero() {
			n++
		}
	}
	if m.Seq != 0 {
		n++
	}
	ct := m.ContentType
	if ce != nil {
		ct = ce.ContentType(m)
		n += ce.HeaderLen(m)
	}
	for _, v := range [...]string{m.IdempotencyKey, ct, msgID, expectStream} {
		if v != "" {
			n++
		}
	}
	if o.debezium {
		n += 2
	}
	if m.Dead != nil {
		n += 2
		if !m.Dead.At.IsZero() {
			n++
		}
	}
	h := make(nats.Header, n)
	for k, v := range m.Headers {
		if reservedHeader(k) {
			continue
		}
		h.Set(k, v)
	}
	vals := make([]string, 0, n-len(m.Headers))
	set := func(k, v string) {
		vals = append(vals, v)
		n := len(vals)
		h[k] = vals[n-1 : n : n]
	}
	if !bin {
		set(HeaderEventID, m.ID)
		set(HeaderEventType, m.EventType)
	}
	set(HeaderAggregateType, m.AggregateType)
	if !bin {
		set(HeaderAggregateID, m.AggregateID)
	}
	if m.Seq != 0 {
		set(HeaderSeq, strconv.FormatInt(m.Seq, 10))
	}
	if m.IdempotencyKey != "" {
		set(HeaderIdempotencyKey, m.IdempotencyKey)
	}
	if !bin && !m.CreatedAt.IsZero() {
		set(HeaderCreatedAt, m.CreatedAt.UTC().Format(time.RFC3339Nano))
	}
	data := m.Payload
	if ce == nil {
		if ct != "" {
			set(HeaderContentType, ct)
		}
	} else {
		if ct != "" {
			set(cloudevents.HeaderContentType, ct)
		}
		ce.Headers(m, set)
		data = ce.Body(m)
	}
	if msgID != "" {
		set(jetstream.MsgIDHeader, msgID)
	}
	if expectStream != "" {
		set(jetstream.ExpectedStreamHeader, expectStream)
	}
	if o.debezium {
		set(DebeziumHeaderID, m.ID)
		set(DebeziumHeaderEventType, m.EventType)
	}
	if d := m.Dead; d != nil {
		set(HeaderDeadError, d.Error)
		set(HeaderDeadAttempts, strconv.Itoa(d.Attempts))
		if !d.At.IsZero() {
			set(HeaderDeadAt, d.At.UTC().Format(time.RFC3339Nano))
		}
	}
	return &nats.Msg{Subject: subject, Header: h, Data: data}
}

// reservedPrefix starts the header names the NATS server reserves.
const reservedPrefix = "nats-"

// reservedHeader reports whether a user header name is one the server
// reserves (prefix "Nats-", any case).
func reservedHeader(k string) bool {
	return len(k) >= len(reservedPrefix) && strings.EqualFold(k[:len(reservedPrefix)], reservedPrefix)
}

// EventID returns the jitoutbox event id of a received message: its
// [HeaderEventID] header, else its "ce-id" header (CloudEvents binary mode),
// "" if it has neither. Consumers that must process each event once record
// it.
func EventID(msg *nats.Msg) string {
	if msg == nil {
		return ""
	}
	if id := msg.Header.Get(HeaderEventID); id != "" {
		return id
	}
	return msg.Header.Get(cloudevents.PrefixNATS + cloudevents.AttrID)
}
