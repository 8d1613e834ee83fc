package cloudevents

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"strings"
	"time"

	"github.com/jitoutbox/jitoutbox/relay"
)

// Envelope returns m as the JSON event format: the attributes of the
// package's mapping, and the payload as "data" when the content type is
// JSON (application/json, text/json or a "+json" suffix) and the payload is
// valid JSON, copied byte for byte, else as "data_base64". An empty payload
// has neither.
func (e *Encoder) Envelope(m *relay.Message) []byte {
	b := make([]byte, 0, 256+len(m.ID)+len(m.EventType)+2*len(m.AggregateID)+len(m.ContentType)+len(e.source)+
		base64.StdEncoding.EncodedLen(len(m.Payload)))
	b = append(b, `{"specversion":"`+SpecVersion+`"`...)
	b = appendField(b, AttrID, m.ID)
	b = appendField(b, AttrSource, e.source)
	b = appendField(b, AttrType, m.EventType)
	if m.AggregateID != "" {
		b = appendField(b, AttrSubject, m.AggregateID)
	}
	if !m.CreatedAt.IsZero() {
		b = appendField(b, AttrTime, m.CreatedAt.UTC().Format(time.RFC3339Nano))
	}
	if m.ContentType != "" {
		b = appendField(b, AttrDataContentType, m.ContentType)
	}
	if v := m.Headers[AttrTraceParent]; v != "" {
		b = appendField(b, AttrTraceParent, v)
		if v := m.Headers[AttrTraceState]; v != "" {
			b = appendField(b, AttrTraceState, v)
		}
	}
	if m.AggregateID != "" {
		b = appendField(b, AttrPartitionKey, m.AggregateID)
	}
	if len(m.Payload) > 0 {
		if IsJSON(m.ContentType) && json.Valid(m.Payload) {
			b = append(b, `,"data":`...)
			b = append(b, m.Payload...)
		} else {
			b = append(b, `,"data_base64":"`...)
			b = base64.StdEncoding.AppendEncode(b, m.Payload)
			b = append(b, '"')
		}
	}
	return append(b, '}')
}

// appendField appends ,"name":"value" with value as a JSON string.
func appendField(b []byte, name, value string) []byte {
	b = append(b, ',', '"')
	b = append(b, name...)
	b = append(b, '"', ':')
	q, _ := json.Marshal(value) // a string always marshals
	return append(b, q...)
}

// IsJSON reports whether the media type ct is JSON: application/json,
// text/json or a type with the "+json" suffix (parameters ignored).
func IsJSON(ct string) bool {
	mt := mediaType(ct)
	return mt == "application/json" || mt == "text/json" || strings.HasSuffix(mt, "+json")
}

// IsStructured reports whether the content type ct marks a structured-mode
// message in the JSON event format ([ContentTypeJSON], parameters ignored).
func IsStructured(ct string) bool {
	return mediaType(ct) == ContentTypeJSON
}

// mediaType returns ct's media type in lower case, without parameters.
func mediaType(ct string) string {
	if ct == "" {
		return ""
	}
	if mt, _, err := mime.ParseMediaType(ct); err == nil {
		return mt
	}
	mt, _, _ := strings.Cut(ct, ";")
	return strings.ToLower(strings.TrimSpace(mt))
}

// Event is a CloudEvent read back from a message: the attributes of the
// package's mapping and the data.
type Event struct {
	ID, Source, SpecVersion, Type, Subject, Time, DataContentType string
	TraceParent, TraceState, PartitionKey                         string
	// Data is the event data: the raw JSON of "data" (the string's text
	// when data is a JSON string and datacontenttype is not JSON), or the
	// decoded "data_base64"; nil when the event has none.
	Data []byte
}

// ErrMalformed reports a structured-mode body that is not a CloudEvent in
// the JSON event format.
var ErrMalformed = errors.New("cloudevents: malformed event")

// ParseEnvelope reads an event in the JSON event format. It requires the
// id and specversion attributes.
func ParseEnvelope(body []byte) (Event, error) {
	var env struct {
		ID              string          `json:"id"`
		Source          string          `json:"source"`
		SpecVersion     string          `json:"specversion"`
		Type            string          `json:"type"`
		Subject         string          `json:"subject"`
		Time            string          `json:"time"`
		DataContentType string          `json:"datacontenttype"`
		TraceParent     string          `json:"traceparent"`
		TraceState      string          `json:"tracestate"`
		PartitionKey    string          `json:"partitionkey"`
		Data            json.RawMessage `json:"data"`
		DataBase64      []byte          `json:"data_base64"`
	}
	if err := json.Unmarshal(body, &env); err != nil {
		return Event{}, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	if env.ID == "" || env.SpecVersion == "" {
		return Event{}, fmt.Errorf("%w: no id or specversion", ErrMalformed)
	}
	ev := Event{ID: env.ID, Source: env.Source, SpecVersion: env.SpecVersion, Type: env.Type, Subject: env.Subject,
		Time: env.Time, DataContentType: env.DataContentType, TraceParent: env.TraceParent, TraceState: env.TraceState,
		PartitionKey: env.PartitionKey, Data: env.DataBase64}
	if len(env.Data) > 0 && string(env.Data) != "null" {
		ev.Data = env.Data
		if env.Data[0] == '"' && !IsJSON(env.DataContentType) {
			var s string
			if err := json.Unmarshal(env.Data, &s); err != nil {
				return Event{}, fmt.Errorf("%w: data: %w", ErrMalformed, err)
			}
			ev.Data = []byte(s)
		}
	}
	return ev, nil
}
