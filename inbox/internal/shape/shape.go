// Package shape reads an inbox.Message from the headers, destination and
// key of a received message, for the broker adapters of package inbox:
// jitoutbox's Jitoutbox-* headers, and the shape of Debezium's outbox event
// router.
package shape

import (
	"strconv"
	"strings"

	"github.com/jitoutbox/jitoutbox/inbox"
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
	// from the key) to the Jitoutbox-* headers. Without it, the Jitoutbox-*
	// headers win and Debezium's fields fill in what they lack (detection:
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
	dbz := [...]string{unquote(h[debeziumID]), unquote(h[debeziumEventType]), dAggType, string(src.Key)}
	first, second := jit, dbz
	if o.Debezium {
		first, second = dbz, jit
	}
	pick := func(i int) string {
		if first[i] != "" {
			return first[i]
		}
		return second[i]
	}
	m := inbox.Message{
		EventID: pick(0), EventType: pick(1), AggregateType: pick(2), AggregateID: pick(3),
		Seq: parseSeq(h[headerSeq]), Payload: src.Payload, Headers: h,
	}
	if m.EventID == "" {
		m.EventID = src.FallbackID
	}
	if m.EventType == "" {
		m.EventType = src.FallbackType
	}
	return m
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
