// Package natssub turns NATS messages (core NATS and JetStream) published by
// jitoutbox's relay/natspub into inbox.Message values for inbox.Handle.
//
// It reads the Jitoutbox-* headers (event id, type, aggregate, seq). For
// messages in the shape of Debezium's outbox event router (natspub's
// Debezium option, or another producer of that shape), it reads the event
// id from the "id" header, the event type from "eventType" and the
// aggregate type from the subject "outbox.event.<aggregate type>": when
// asked to with Debezium, or when the Jitoutbox-* headers are missing.
// Core NATS has no key, so a Debezium-shaped message without jitoutbox's
// headers has no aggregate id.
//
// CloudEvents (natspub's CloudEvents option, or another producer) are read
// too: in binary mode from the "ce-" headers (ce-id, ce-type, ce-subject,
// else ce-partitionkey as the aggregate id), in structured mode (content
// type application/cloudevents+json) from the JSON event format, whose
// data becomes the Payload. The Jitoutbox-* headers win when present;
// CloudEvents have no aggregate type.
//
// Payloads that txoutbox encoded with package codec (the Jitoutbox-Encoding
// header: encrypted, compressed) are returned as received; decode them with
// the Message's Decode method and a *codec.Codec before inbox.Handle.
package natssub

import (
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jitoutbox/jitoutbox/inbox"
	"github.com/jitoutbox/jitoutbox/inbox/internal/shape"
)

// Option adjusts how a message is read.
type Option func(*shape.Options)

// Debezium reads Debezium's fields first (the "id" and "eventType"
// headers, the aggregate type from the subject), the Jitoutbox-* headers
// only where those are missing.
func Debezium() Option { return func(o *shape.Options) { o.Debezium = true } }

// DebeziumPrefix sets the subject prefix before the aggregate type
// (default "outbox.event", as natspub.DebeziumSubjectPrefix).
func DebeziumPrefix(prefix string) Option {
	return func(o *shape.Options) { o.DebeziumPrefix = prefix }
}

// Message returns the inbox message of a core NATS message (nil: an empty
// message, which Handle refuses with ErrNoEventID).
func Message(m *nats.Msg, opts ...Option) inbox.Message {
	if m == nil {
		return inbox.Message{}
	}
	return read(m.Header, m.Subject, m.Data, opts)
}

// JetStream returns the inbox message of a JetStream message.
func JetStream(m jetstream.Msg, opts ...Option) inbox.Message {
	if m == nil {
		return inbox.Message{}
	}
	return read(m.Headers(), m.Subject(), m.Data(), opts)
}

func read(h nats.Header, subject string, data []byte, opts []Option) inbox.Message {
	var o shape.Options
	for _, opt := range opts {
		opt(&o)
	}
	flat := make(map[string]string, len(h))
	for k, v := range h {
		if len(v) > 0 {
			flat[k] = v[0]
		}
	}
	return shape.Read(shape.Source{Headers: flat, Dest: subject, Payload: data}, o)
}
