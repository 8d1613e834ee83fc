// Package cloudevents maps a relay.Message to a CloudEvents 1.0 event, for
// the CloudEvents option of the publishers (relay/natspub, relay/rabbitpub,
// relay/kafkapub) and for the inbox adapters that read such events back.
//
// The mapping is the same on every broker:
//
//	id              event id
//	source          the configured source (a URI-reference)
//	specversion     1.0
//	type            event type
//	subject         aggregate id (omitted when empty)
//	time            created at, RFC 3339 with nanoseconds, UTC (omitted when zero)
//	datacontenttype content type (omitted when empty)
//	traceparent     the event's "traceparent" header (distributed-tracing extension)
//	tracestate      the event's "tracestate" header
//	partitionkey    aggregate id (partitioning extension; omitted when empty)
//
// In [Binary] mode each attribute but datacontenttype travels as a header
// named with the protocol binding's prefix ([PrefixNATS], [PrefixKafka],
// [PrefixAMQP]), datacontenttype as the binding's content type, and the
// payload as the body. In [Structured] mode the body is the JSON event
// format ([Encoder.Envelope]) and the content type is [ContentTypeJSON].
package cloudevents

import (
	"errors"
	"fmt"
	"time"

	"github.com/jitoutbox/jitoutbox/relay"
)

// SpecVersion is the CloudEvents version of the events built here.
const SpecVersion = "1.0"

// ContentTypeJSON is the content type of a structured-mode message in the
// JSON event format.
const ContentTypeJSON = "application/cloudevents+json"

// Header name prefixes of the protocol bindings' binary mode.
const (
	// PrefixNATS prefixes the NATS headers (the NATS protocol binding, as
	// the Go SDK's NATS and JetStream bindings read them).
	PrefixNATS = "ce-"
	// PrefixKafka prefixes the Kafka record headers (the Kafka protocol
	// binding).
	PrefixKafka = "ce_"
	// PrefixAMQP prefixes the AMQP application properties (the AMQP
	// protocol binding); RabbitMQ's AMQP 0-9-1 publisher puts them in the
	// message's headers table.
	PrefixAMQP = "cloudEvents:"
	// PrefixAMQPAlt is the other prefix the AMQP binding allows for
	// receivers; the inbox adapters accept it too.
	PrefixAMQPAlt = "cloudEvents_"
)

// HeaderContentType is the header that carries datacontenttype (binary
// mode) or [ContentTypeJSON] (structured mode) in the NATS and Kafka
// bindings. The AMQP binding uses the content-type property instead.
const HeaderContentType = "content-type"

// Attribute names.
const (
	AttrID              = "id"
	AttrSource          = "source"
	AttrSpecVersion     = "specversion"
	AttrType            = "type"
	AttrSubject         = "subject"
	AttrTime            = "time"
	AttrDataContentType = "datacontenttype"
	// AttrTraceParent and AttrTraceState are the distributed-tracing
	// extension's attributes, taken from the event's headers of the same
	// names (as jitotel.PropagateTrace stores them).
	AttrTraceParent = "traceparent"
	AttrTraceState  = "tracestate"
	// AttrPartitionKey is the partitioning extension's attribute.
	AttrPartitionKey = "partitionkey"
)

// Mode is a content mode.
type Mode uint8

// Content modes.
const (
	// Binary puts the attributes in headers and the payload in the body
	// unchanged.
	Binary Mode = iota
	// Structured puts the whole event, attributes and data, in the body
	// as the JSON event format.
	Structured
)

// String returns "binary" or "structured".
func (m Mode) String() string {
	switch m {
	case Binary:
		return "binary"
	case Structured:
		return "structured"
	}
	return fmt.Sprintf("Mode(%d)", uint8(m))
}

// ErrInvalidSource reports a source that is not a valid URI-reference.
var ErrInvalidSource = errors.New("cloudevents: invalid source")

// ErrInvalidMode reports a Mode other than Binary and Structured.
var ErrInvalidMode = errors.New("cloudevents: invalid mode")

// binaryAttrs are the attributes sent as headers in binary mode, in order;
// datacontenttype is not among them (it travels as the content type).
var binaryAttrs = [...]string{AttrSpecVersion, AttrID, AttrSource, AttrType, AttrSubject, AttrTime,
	AttrTraceParent, AttrTraceState, AttrPartitionKey}

const (
	iSpecVersion = iota
	iID
	iSource
	iType
	iSubject
	iTime
	iTraceParent
	iTraceState
	iPartitionKey
)

// Encoder builds the CloudEvents form of messages for one source, mode and
// binding. It is immutable and safe for concurrent use.
type Encoder struct {
	source string
	mode   Mode
	// names are the binding's header names of binaryAttrs, built once so
	// that a message costs no string concatenation.
	names [len(binaryAttrs)]string
}

// NewEncoder returns an encoder for the given source (validated with
// [ValidateSource]), mode and binding header prefix.
func NewEncoder(source string, mode Mode, prefix string) (*Encoder, error) {
	if err := ValidateSource(source); err != nil {
		return nil, err
	}
	if mode != Binary && mode != Structured {
		return nil, fmt.Errorf("%w: %v", ErrInvalidMode, mode)
	}
	e := &Encoder{source: source, mode: mode}
	for i, a := range binaryAttrs {
		e.names[i] = prefix + a
	}
	return e, nil
}

// Mode returns the content mode.
func (e *Encoder) Mode() Mode { return e.mode }

// HeaderCount is the most headers [Encoder.Headers] sets for one message.
const HeaderCount = len(binaryAttrs)

// HeaderLen returns how many headers [Encoder.Headers] sets for m, so that
// a publisher sizes its header map once and no larger than needed.
func (e *Encoder) HeaderLen(m *relay.Message) int {
	if e.mode != Binary {
		return 0
	}
	n := 4 // specversion, id, source, type
	if m.AggregateID != "" {
		n += 2 // subject, partitionkey
	}
	if !m.CreatedAt.IsZero() {
		n++
	}
	if m.Headers[AttrTraceParent] != "" {
		n++
		if m.Headers[AttrTraceState] != "" {
			n++
		}
	}
	return n
}

// Headers calls set with the binding's header name and value of each
// attribute of m that binary mode sends as a header (all but
// datacontenttype); in structured mode it does nothing.
func (e *Encoder) Headers(m *relay.Message, set func(name, value string)) {
	if e.mode != Binary {
		return
	}
	set(e.names[iSpecVersion], SpecVersion)
	set(e.names[iID], m.ID)
	set(e.names[iSource], e.source)
	set(e.names[iType], m.EventType)
	if m.AggregateID != "" {
		set(e.names[iSubject], m.AggregateID)
	}
	if !m.CreatedAt.IsZero() {
		set(e.names[iTime], m.CreatedAt.UTC().Format(time.RFC3339Nano))
	}
	if v := m.Headers[AttrTraceParent]; v != "" {
		set(e.names[iTraceParent], v)
		if v := m.Headers[AttrTraceState]; v != "" {
			set(e.names[iTraceState], v)
		}
	}
	if m.AggregateID != "" {
		set(e.names[iPartitionKey], m.AggregateID)
	}
}

// ContentType returns the content type of m's message: m.ContentType in
// binary mode, [ContentTypeJSON] in structured mode.
func (e *Encoder) ContentType(m *relay.Message) string {
	if e.mode == Structured {
		return ContentTypeJSON
	}
	return m.ContentType
}

// Body returns the body of m's message: the payload in binary mode, the
// JSON event format ([Encoder.Envelope]) in structured mode.
func (e *Encoder) Body(m *relay.Message) []byte {
	if e.mode == Structured {
		return e.Envelope(m)
	}
	return m.Payload
}
