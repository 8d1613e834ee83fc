package rabbitpub

import (
	"fmt"
	"strconv"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/jitoutbox/jitoutbox/relay"
	"github.com/jitoutbox/jitoutbox/relay/cloudevents"
)

// Header names set on every published message, the same as natspub's. User
// headers never use the "Jitoutbox-" prefix (txoutbox rejects it); on a
// clash jitoutbox's header wins. Every value is a string.
const (
	// HeaderEventID is the event id (UUIDv7 text), also the message id.
	HeaderEventID = "Jitoutbox-Event-Id"
	// HeaderEventType is the event type, also the message type.
	HeaderEventType = "Jitoutbox-Event-Type"
	// HeaderAggregateType is the aggregate type.
	HeaderAggregateType = "Jitoutbox-Aggregate-Type"
	// HeaderAggregateID is the aggregate id.
	HeaderAggregateID = "Jitoutbox-Aggregate-Id"
	// HeaderSeq is the outbox row's seq in decimal text (relay.Message.Seq):
	// it grows with registration order within an aggregate, so a consumer
	// can tell an event older than the last one it applied. Messages with
	// seq 0 (not read from an outbox table) do not carry it.
	HeaderSeq = "Jitoutbox-Seq"
	// HeaderIdempotencyKey is the caller's idempotency key, when one was given.
	HeaderIdempotencyKey = "Jitoutbox-Idempotency-Key"
	// HeaderCreatedAt is when the event was registered, RFC 3339 with
	// nanoseconds, in UTC (the timestamp property has whole seconds only).
	HeaderCreatedAt = "Jitoutbox-Created-At"
)

// Header names set only on dead letters (messages with relay.Message.Dead
// set, handed to the relay's dead-letter publisher).
const (
	// HeaderDeadError is the last publish error's text.
	HeaderDeadError = "Jitoutbox-Dead-Error"
	// HeaderDeadAttempts is the number of failed publish attempts, in decimal.
	HeaderDeadAttempts = "Jitoutbox-Dead-Attempts"
	// HeaderDeadAt is when the relay dead-lettered the event, RFC 3339 with
	// nanoseconds, in UTC.
	HeaderDeadAt = "Jitoutbox-Dead-At"
)

// newPublishing builds the AMQP message for m: persistent, MessageId = event
// id, Type = event type, Timestamp = created at, the user's headers (but
// "CC" and "BCC": reservedHeader) and then jitoutbox's. With ce, the
// CloudEvents headers, content type and body are the encoder's. It fails
// (permanently) when a short-string field is too long.
func newPublishing(m *relay.Message, ce *cloudevents.Encoder) (amqp.Publishing, error) {
	if len(m.ID) > MaxNameLen || len(m.EventType) > MaxNameLen || len(m.ContentType) > MaxNameLen {
		return amqp.Publishing{}, relay.Permanent(fmt.Errorf("%w: event id, event type or content type longer than %d bytes", ErrInvalidMessage, MaxNameLen))
	}
	n := len(m.Headers) + 10
	if ce != nil {
		n += cloudevents.HeaderCount
	}
	h := make(amqp.Table, n)
	for k, v := range m.Headers {
		if reservedHeader(k) {
			continue
		}
		if len(k) > MaxNameLen {
			return amqp.Publishing{}, relay.Permanent(fmt.Errorf("%w: header name of %d bytes is longer than %d", ErrInvalidMessage, len(k), MaxNameLen))
		}
		h[k] = v
	}
	// In CloudEvents binary mode the cloudEvents: headers carry the event
	// id, type, aggregate id (subject) and created at (time): the headers of
	// jitoutbox's that would repeat them are left out (the message id and
	// type properties stay).
	bin := ce != nil && ce.Mode() == cloudevents.Binary
	if !bin {
		h[HeaderEventID] = m.ID
		h[HeaderEventType] = m.EventType
	}
	h[HeaderAggregateType] = m.AggregateType
	if !bin {
		h[HeaderAggregateID] = m.AggregateID
	}
	if m.Seq != 0 {
		h[HeaderSeq] = strconv.FormatInt(m.Seq, 10)
	}
	if m.IdempotencyKey != "" {
		h[HeaderIdempotencyKey] = m.IdempotencyKey
	}
	if !bin && !m.CreatedAt.IsZero() {
		h[HeaderCreatedAt] = m.CreatedAt.UTC().Format(time.RFC3339Nano)
	}
	if d := m.Dead; d != nil {
		h[HeaderDeadError] = d.Error
		h[HeaderDeadAttempts] = strconv.Itoa(d.Attempts)
		h[HeaderDeadAt] = d.At.UTC().Format(time.RFC3339Nano)
	}
	ct, body := m.ContentType, m.Payload
	if ce != nil {
		ce.Headers(m, func(k, v string) { h[k] = v })
		ct, body = ce.ContentType(m), ce.Body(m)
	} else if ct == "" {
		ct = "application/octet-stream"
	}
	return amqp.Publishing{
		Headers:      h,
		ContentType:  ct,
		DeliveryMode: amqp.Persistent,
		MessageId:    m.ID,
		Type:         m.EventType,
		Timestamp:    m.CreatedAt,
		Body:         body,
	}, nil
}

// reservedHeader reports whether a user header name is one RabbitMQ acts
// on and refuses as a string: "CC" and "BCC" (sender-selected distribution
// lists, which must be arrays) make the broker close the channel with 406
// PRECONDITION_FAILED on every try. RabbitMQ matches them exactly, case
// included. Headers starting "x-" are accepted as strings and passed on.
func reservedHeader(k string) bool {
	return k == "CC" || k == "BCC"
}

// EventID returns the jitoutbox event id of a received message: its
// [HeaderEventID] header, else its MessageId property (the event id too,
// with or without CloudEvents), "" if it has neither. Consumers that must
// process each event once record it.
func EventID(d *amqp.Delivery) string {
	if d == nil {
		return ""
	}
	if s, ok := d.Headers[HeaderEventID].(string); ok {
		return s
	}
	return d.MessageId
}
