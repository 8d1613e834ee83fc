// Package kafkasub turns Kafka records published by jitoutbox's
// relay/kafkapub into inbox.Message values for inbox.Handle.
//
// It reads the Jitoutbox-* headers (event id, type, aggregate, seq). For
// records in the shape of Debezium's outbox event router (kafkapub's
// Debezium option, or Debezium itself), it reads the event id from the
// "id" header (a JSON string is unquoted), the event type from
// "eventType", the aggregate type from the topic
// "outbox.event.<aggregate type>" and the aggregate id from the key: when
// asked to with Debezium, or when the Jitoutbox-* headers are missing.
//
// CloudEvents (kafkapub's CloudEvents option, or another producer) are read
// too: in binary mode from the "ce_" headers (ce_id, ce_type, ce_subject,
// else ce_partitionkey as the aggregate id), in structured mode (content
// type application/cloudevents+json) from the JSON event format, whose
// data becomes the Payload. The Jitoutbox-* headers win when present;
// CloudEvents have no aggregate type.
//
// Payloads that txoutbox encoded with package codec (the Jitoutbox-Encoding
// header: encrypted, compressed) are returned as received; decode them with
// the Message's Decode method and a *codec.Codec before inbox.Handle.
package kafkasub

import (
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/jitoutbox/jitoutbox/inbox"
	"github.com/jitoutbox/jitoutbox/inbox/internal/shape"
)

// Option adjusts how a record is read.
type Option func(*shape.Options)

// Debezium reads Debezium's fields first (the "id" and "eventType"
// headers, the aggregate type from the topic, the aggregate id from the
// key), the Jitoutbox-* headers only where those are missing.
func Debezium() Option { return func(o *shape.Options) { o.Debezium = true } }

// DebeziumPrefix sets the topic prefix before the aggregate type (default
// "outbox.event", as kafkapub.DebeziumTopicPrefix).
func DebeziumPrefix(prefix string) Option {
	return func(o *shape.Options) { o.DebeziumPrefix = prefix }
}

// Record returns the inbox message of a record (nil: an empty message,
// which Handle refuses with ErrNoEventID). Of repeated headers the first
// counts.
func Record(r *kgo.Record, opts ...Option) inbox.Message {
	if r == nil {
		return inbox.Message{}
	}
	var o shape.Options
	for _, opt := range opts {
		opt(&o)
	}
	flat := make(map[string]string, len(r.Headers))
	for _, h := range r.Headers {
		if _, ok := flat[h.Key]; !ok {
			flat[h.Key] = string(h.Value)
		}
	}
	return shape.Read(shape.Source{Headers: flat, Dest: r.Topic, Key: r.Key, Payload: r.Value}, o)
}
