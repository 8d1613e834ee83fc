// Package shape reads an inbox.Message from the headers, destination and
// key of a received message, for the broker adapters of package inbox:
// jitoutbox's Jitoutbox-* headers, CloudEvents (binary mode in the NATS,
// Kafka and AMQP bindings' header names, and structured mode in the JSON
// event format), and the shape of Debezium's outbox event router.
package shape

import (
	"cmp"
	"strconv"
	"strings"

	"github.com/jitoutbox/jitoutbox/inbox"
	"github.com/jitoutbox/jitoutbox/relay/cloudevents"
	"github.com/jitoutbox/jitoutbox/relay/natspub"
)

// Header names, the same for every publisher of jitoutbox (the publishers'
// tests check that they agree).
const (
	headerEventID       = natspub.HeaderEventID
	headerEventType     = natspub.HeaderEventType
	headerAggregateType = natspub.HeaderAggregateType
	headerAggregateID   = natspub.HeaderAggregateID
	headerSeq           = natspub.HeaderSeq
	debeziumID          = natspub.DebeziumHeaderID
	debeziumEventType   = natspub.DebeziumHeaderEventType
	// DefaultDebeziumPrefix is the subject or topic prefix of Debezium's
	// default route ("outbox.event.<aggregate type>").
	DefaultDebeziumPrefix = natspub.DebeziumSubjectPrefix
)

// Options select how fields are read.
type Options struct {
	// Debezium prefers Debezium's fields (the "id" and "eventType"
	// headers, the aggregate type from the destination, the aggregate id
	// from the key) to the Jitoutbox-* headers and CloudEvents attributes.
	// Without it, the Jitoutbox-* headers win, then the CloudEvents
	// attributes, and Debezium's fields fill in what they lack (detection:
	// a record of a real Debezium connector carries no Jitoutbox-* header).
	Debezium bool
	// DebeziumPrefix is the destination prefix before the aggregate type,
	// without the trailing dot ("" means DefaultDebeziumPrefix).
	DebeziumPrefix string
}

// Source is what a broker's message offers.
type Source struct {
	// Headers are the message's headers, first value of each.
	Headers map[string]string
	// Dest is the subject (NATS) or topic (Kafka); "" for RabbitMQ.
	Dest string
	// Key is the record key (Kafka); nil elsewhere.
	Key []byte
	// Payload is the body.
	Payload []byte
	// ContentType is the broker's content type property (RabbitMQ); ""
	// elsewhere, where the "content-type" (or "Content-Type") header is
	// read instead.
	ContentType string
	// FallbackID and FallbackType are the broker's own message id and type
	// (RabbitMQ's MessageId and Type properties), used when no header has
	// them.
	FallbackID, FallbackType string
}

// Read builds the message.
func Read(src Source, o Options) inbox.Message {
	h := src.Headers
	prefix := o.DebeziumPrefix
	if prefix == "" {
		prefix = DefaultDebeziumPrefix
	}
	var dAggType string
	if rest, ok := strings.CutPrefix(src.Dest, prefix+"."); ok {
		dAggType = rest
	}
	jit := [...]string{h[headerEventID], h[headerEventType], h[headerAggregateType], h[headerAggregateID]}
	ce, payload := readCloudEvent(src)
	dbz := [...]string{unquote(h[debeziumID]), unquote(h[debeziumEventType]), dAggType, string(src.Key)}
	order := [...][4]string{jit, ce, dbz}
	if o.Debezium {
		order = [...][4]string{dbz, jit, ce}
	}
	pick := func(i int) string {
		for _, f := range order {
			if f[i] != "" {
				return f[i]
			}
		}
		return ""
	}
	m := inbox.Message{
		EventID: pick(0), EventType: pick(1), AggregateType: pick(2), AggregateID: pick(3),
		Seq: parseSeq(h[headerSeq]), Payload: payload, Headers: h,
	}
	if m.EventID == "" {
		m.EventID = src.FallbackID
	}
	if m.EventType == "" {
		m.EventType = src.FallbackType
	}
	return m
}

// cePrefixes are the binary-mode header prefixes of the bindings.
var cePrefixes = [...]string{cloudevents.PrefixNATS, cloudevents.PrefixKafka, cloudevents.PrefixAMQP, cloudevents.PrefixAMQPAlt}

// readCloudEvent returns the event id, event type, aggregate type (always
// "": CloudEvents has no such attribute) and aggregate id (the subject, else
// the partitionkey extension) of a CloudEvents message, and its data. A
// structured-mode message (content type application/cloudevents+json)
// yields the envelope's attributes and data; a binary-mode message the
// prefixed headers of the first binding whose id header is present, and the
// body. Other messages yield no fields and the body.
func readCloudEvent(src Source) ([4]string, []byte) {
	h := src.Headers
	ct := src.ContentType
	if ct == "" {
		ct = h[cloudevents.HeaderContentType]
	}
	if ct == "" {
		ct = h[natspub.HeaderContentType]
	}
	if cloudevents.IsStructured(ct) {
		ev, err := cloudevents.ParseEnvelope(src.Payload)
		if err != nil {
			return [4]string{}, src.Payload
		}
		return [4]string{ev.ID, ev.Type, "", cmp.Or(ev.Subject, ev.PartitionKey)}, ev.Data
	}
	for _, p := range cePrefixes {
		if id := h[p+cloudevents.AttrID]; id != "" {
			return [4]string{id, h[p+cloudevents.AttrType], "", cmp.Or(h[p+cloudevents.AttrSubject], h[p+cloudevents.AttrPartitionKey])},
				src.Payload
		}
	}
	return [4]string{}, src.Payload
}

// parseSeq returns 0 for "", the seq for a positive decimal, -1 otherwise
// (inbox.Handle refuses it with ErrBadMessage).
func parseSeq(s string) int64 {
	if s == "" {
		return 0
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return -1
	}
	return n
}

// unquote strips the double quotes of a header value that Debezium's JSON
// header converter wrote as a JSON string.
func unquote(s string) string {
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		if u, err := strconv.Unquote(s); err == nil {
			return u
		}
	}
	return s
}
