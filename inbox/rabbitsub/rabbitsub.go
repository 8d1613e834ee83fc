// Package rabbitsub turns RabbitMQ deliveries published by jitoutbox's
// relay/rabbitpub into inbox.Message values for inbox.Handle.
//
// It reads the Jitoutbox-* headers (event id, type, aggregate, seq), and
// falls back on the MessageId and Type properties (rabbitpub sets them to
// the event id and type) when a header is missing.
//
// CloudEvents (rabbitpub's CloudEvents option, or another producer) are
// read too: in binary mode from the AMQP binding's "cloudEvents:" (or
// "cloudEvents_") headers (id, type, subject, else partitionkey as the
// aggregate id), in structured mode (content type
// application/cloudevents+json) from the JSON event format, whose data
// becomes the Payload. The Jitoutbox-* headers win when present;
// CloudEvents have no aggregate type.
//
// Payloads that txoutbox encoded with package codec (the Jitoutbox-Encoding
// header: encrypted, compressed) are returned as received; decode them with
// the Message's Decode method and a *codec.Codec before inbox.Handle.
package rabbitsub

import (
	"fmt"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/jitoutbox/jitoutbox/inbox"
	"github.com/jitoutbox/jitoutbox/inbox/internal/shape"
)

// Delivery returns the inbox message of d (nil: an empty message, which
// Handle refuses with ErrNoEventID). Header values that are not strings
// are turned into text (byte slices as they are, others with fmt).
func Delivery(d *amqp.Delivery) inbox.Message {
	if d == nil {
		return inbox.Message{}
	}
	flat := make(map[string]string, len(d.Headers))
	for k, v := range d.Headers {
		switch v := v.(type) {
		case string:
			flat[k] = v
		case []byte:
			flat[k] = string(v)
		case nil:
		default:
			flat[k] = fmt.Sprint(v)
		}
	}
	return shape.Read(shape.Source{Headers: flat, Payload: d.Body, ContentType: d.ContentType, FallbackID: d.MessageId, FallbackType: d.Type},
		shape.Options{})
}
