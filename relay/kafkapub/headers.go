package kafkapub

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/jitoutbox/jitoutbox/relay"
	"github.com/jitoutbox/jitoutbox/relay/cloudevents"
)

// Header names set on records. They are those of package natspub, so a
// consumer reads the same names from either broker. User headers never use
// the "Jitoutbox-" prefix (txoutbox rejects it); a user header whose name
// matches one of these (ignoring case) is dropped, so jitoutbox's win.
const (
	// HeaderEventID is the event id (UUIDv7 text).
	HeaderEventID = "Jitoutbox-Event-Id"
	// HeaderEventType is the event type.
	HeaderEventType = "Jitoutbox-Event-Type"
	// HeaderAggregateType is the aggregate type.
	HeaderAggregateType = "Jitoutbox-Aggregate-Type"
	// HeaderAggregateID is the aggregate id (also the record's key).
	HeaderAggregateID = "Jitoutbox-Aggregate-Id"
	// HeaderSeq is the outbox row's seq in decimal (relay.Message.Seq): it
	// grows with registration order within an aggregate, so a consumer can
	// tell an event older than the last one it applied. Records with seq 0
	// (not read from an outbox table) do not carry it.
	HeaderSeq = "Jitoutbox-Seq"
	// HeaderIdempotencyKey is the caller's idempotency key, when one was given.
	HeaderIdempotencyKey = "Jitoutbox-Idempotency-Key"
	// HeaderCreatedAt is when the event was registered, RFC 3339 with
	// nanoseconds, in UTC.
	HeaderCreatedAt = "Jitoutbox-Created-At"
	// HeaderContentType is the payload's media type, when one was given.
	HeaderContentType = "Content-Type"

	// HeaderDeadError is the last publish error's text, on records of
	// dead-lettered events (relay.Message.Dead set, as the relay hands them
	// to Config.DeadLetter).
	HeaderDeadError = "Jitoutbox-Dead-Error"
	// HeaderDeadAttempts is the number of failed publish attempts, in
	// decimal, on records of dead-lettered events.
	HeaderDeadAttempts = "Jitoutbox-Dead-Attempts"
	// HeaderDeadAt is when the relay dead-lettered the event, RFC 3339 with
	// nanoseconds, in UTC, on records of dead-lettered events.
	HeaderDeadAt = "Jitoutbox-Dead-At"

	// DebeziumHeaderID is the header that holds the event id with the
	// Debezium option, as Debezium's outbox event router sets it.
	DebeziumHeaderID = "id"
	// DebeziumHeaderEventType is the header that holds the event type with
	// the Debezium option: the name Debezium gives it with
	// table.fields.additional.placement=type:header:eventType.
	DebeziumHeaderEventType = "eventType"
)

// newRecord builds the record for m on topic: key = aggregate id, value =
// payload, the user's headers (sorted by name, for a stable order) followed
// by jitoutbox's. With o.ce, the CloudEvents headers, content type and value
// are the encoder's.
func newRecord(topic string, m *relay.Message, o *options) *kgo.Record {
	ce := o.ce
	n := 13
	if ce != nil {
		n += cloudevents.HeaderCount
	}
	own := make([]kgo.RecordHeader, 0, n)
	add := func(k, v string) { own = append(own, kgo.RecordHeader{Key: k, Value: []byte(v)}) }
	if o.debezium {
		add(DebeziumHeaderID, m.ID)
		add(DebeziumHeaderEventType, m.EventType)
	}
	// In CloudEvents binary mode the ce_ headers carry the event id, type,
	// aggregate id (subject), created at (time) and content type: the
	// headers of jitoutbox's that would repeat them are left out.
	bin := ce != nil && ce.Mode() == cloudevents.Binary
	if !bin {
		add(HeaderEventID, m.ID)
		add(HeaderEventType, m.EventType)
	}
	add(HeaderAggregateType, m.AggregateType)
	if !bin {
		add(HeaderAggregateID, m.AggregateID)
	}
	if m.Seq != 0 {
		add(HeaderSeq, strconv.FormatInt(m.Seq, 10))
	}
	if m.IdempotencyKey != "" {
		add(HeaderIdempotencyKey, m.IdempotencyKey)
	}
	if !bin && !m.CreatedAt.IsZero() {
		add(HeaderCreatedAt, m.CreatedAt.UTC().Format(time.RFC3339Nano))
	}
	value := m.Payload
	if ce == nil {
		if m.ContentType != "" {
			add(HeaderContentType, m.ContentType)
		}
	} else {
		if ct := ce.ContentType(m); ct != "" {
			add(cloudevents.HeaderContentType, ct)
		}
		ce.Headers(m, add)
		value = ce.Body(m)
	}
	if d := m.Dead; d != nil {
		add(HeaderDeadError, d.Error)
		add(HeaderDeadAttempts, strconv.Itoa(d.Attempts))
		if !d.At.IsZero() {
			add(HeaderDeadAt, d.At.UTC().Format(time.RFC3339Nano))
		}
	}

	headers := own
	if len(m.Headers) > 0 {
		keys := make([]string, 0, len(m.Headers))
		for k := range m.Headers {
			if !clashes(k, own) {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		headers = make([]kgo.RecordHeader, 0, len(keys)+len(own))
		for _, k := range keys {
			headers = append(headers, kgo.RecordHeader{Key: k, Value: []byte(m.Headers[k])})
		}
		headers = append(headers, own...)
	}
	return &kgo.Record{Topic: topic, Key: []byte(m.AggregateID), Value: value, Headers: headers}
}

// clashes reports whether a header named k is among own, ignoring case.
func clashes(k string, own []kgo.RecordHeader) bool {
	for _, h := range own {
		if strings.EqualFold(k, h.Key) {
			return true
		}
	}
	return false
}

// Header returns the value of the first header of r named key, "" if it has
// none.
func Header(r *kgo.Record, key string) string {
	if r == nil {
		return ""
	}
	for _, h := range r.Headers {
		if h.Key == key {
			return string(h.Value)
		}
	}
	return ""
}

// EventID returns the jitoutbox event id of a consumed record: its
// [HeaderEventID] header, else its "ce_id" header (CloudEvents binary mode),
// "" if it has neither. Consumers that must process each event once record
// it.
func EventID(r *kgo.Record) string {
	if id := Header(r, HeaderEventID); id != "" {
		return id
	}
	return Header(r, cloudevents.PrefixKafka+cloudevents.AttrID)
}
