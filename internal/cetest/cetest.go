// Package cetest decodes, with the CloudEvents Go SDK
// (github.com/cloudevents/sdk-go/v2), the messages that the publishers send
// with their CloudEvents option, and compares the decoded event field by
// field with the relay.Message published. Only tests import it, so a
// service that imports jitoutbox never builds the SDK.
//
// The SDK's own protocol bindings for NATS, AMQP 1.0 and Kafka (sarama) are
// modules apart that would each bring their broker client; RabbitMQ's
// AMQP 0-9-1 and franz-go have none. Message implements the SDK's generic
// binding.Message over a received message flattened to its headers, so
// that binding.ToEvent (the SDK's receiver path) decodes it: binary mode
// maps "<prefix><attribute>" headers to attributes and other prefixed
// headers to extensions, as every SDK binding does, and the content type
// to datacontenttype; structured mode hands the body to the SDK's JSON
// event format.
package cetest

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/cloudevents/sdk-go/v2/binding"
	"github.com/cloudevents/sdk-go/v2/binding/format"
	"github.com/cloudevents/sdk-go/v2/binding/spec"
	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/cloudevents/sdk-go/v2/types"

	"github.com/jitoutbox/jitoutbox/relay"
	"github.com/jitoutbox/jitoutbox/relay/cloudevents"
)

// Message is a received message as the SDK's binding.Message.
type Message struct {
	// Headers are the message's headers, first value of each.
	Headers map[string]string
	// Prefix is the binding's header prefix (cloudevents.PrefixNATS, ...).
	Prefix string
	// ContentType is the message's content type (the "content-type"
	// header, or AMQP's content-type property).
	ContentType string
	// Body is the message's body.
	Body []byte

	version spec.Version
	format  format.Format
}

var (
	_ binding.Message               = (*Message)(nil)
	_ binding.MessageMetadataReader = (*Message)(nil)
)

// datacontenttype is carried by ContentType, never by a header: the name
// mapped to it is one no header has.
const noHeader = "\x00"

func (m *Message) init() {
	if m.format != nil || m.version != nil {
		return
	}
	if m.format = format.Lookup(m.ContentType); m.format != nil {
		return
	}
	vs := spec.WithPrefixMatchExact(func(s string) string {
		if s == cloudevents.AttrDataContentType {
			return noHeader
		}
		return m.Prefix + s
	}, m.Prefix)
	m.version = vs.Version(m.Headers[m.Prefix+cloudevents.AttrSpecVersion])
}

// ReadEncoding implements binding.MessageReader.
func (m *Message) ReadEncoding() binding.Encoding {
	m.init()
	switch {
	case m.format != nil:
		return binding.EncodingStructured
	case m.version != nil:
		return binding.EncodingBinary
	}
	return binding.EncodingUnknown
}

// ReadStructured implements binding.MessageReader.
func (m *Message) ReadStructured(ctx context.Context, w binding.StructuredWriter) error {
	if m.ReadEncoding() != binding.EncodingStructured {
		return binding.ErrNotStructured
	}
	return w.SetStructuredEvent(ctx, m.format, bytes.NewReader(m.Body))
}

// ReadBinary implements binding.MessageReader.
func (m *Message) ReadBinary(_ context.Context, w binding.BinaryWriter) error {
	if m.ReadEncoding() != binding.EncodingBinary {
		return binding.ErrNotBinary
	}
	for k, v := range m.Headers {
		var err error
		if a := m.version.Attribute(k); a != nil {
			err = w.SetAttribute(a, v)
		} else if name, ok := strings.CutPrefix(k, m.Prefix); ok {
			err = w.SetExtension(strings.ToLower(name), v)
		}
		if err != nil {
			return err
		}
	}
	if m.ContentType != "" {
		if err := w.SetAttribute(m.version.AttributeFromKind(spec.DataContentType), m.ContentType); err != nil {
			return err
		}
	}
	if len(m.Body) > 0 {
		return w.SetData(bytes.NewReader(m.Body))
	}
	return nil
}

// GetAttribute implements binding.MessageMetadataReader.
func (m *Message) GetAttribute(k spec.Kind) (spec.Attribute, any) {
	m.init()
	a := m.version.AttributeFromKind(k)
	if a == nil {
		return nil, nil
	}
	if k == spec.DataContentType {
		if m.ContentType == "" {
			return a, nil
		}
		return a, m.ContentType
	}
	if v, ok := m.Headers[m.Prefix+a.Name()]; ok {
		return a, v
	}
	return a, nil
}

// GetExtension implements binding.MessageMetadataReader.
func (m *Message) GetExtension(name string) any {
	if v, ok := m.Headers[m.Prefix+name]; ok {
		return v
	}
	return nil
}

// Finish implements binding.Message.
func (m *Message) Finish(error) error { return nil }

// Decode decodes msg with binding.ToEvent, checks that it was in the
// expected content mode and that the event is valid.
func Decode(t testing.TB, msg *Message, mode cloudevents.Mode) *event.Event {
	t.Helper()
	want := binding.EncodingBinary
	if mode == cloudevents.Structured {
		want = binding.EncodingStructured
	}
	if enc := msg.ReadEncoding(); enc != want {
		t.Fatalf("encoding %v, want %v (content type %q, headers %v)", enc, want, msg.ContentType, msg.Headers)
	}
	ev, err := binding.ToEvent(context.Background(), msg)
	if err != nil {
		t.Fatalf("binding.ToEvent: %v", err)
	}
	if err := ev.Validate(); err != nil {
		t.Fatalf("decoded event is not valid: %v", err)
	}
	return ev
}

// Check compares the decoded event with the message published with the
// given source, field by field: id, source, specversion, type, subject,
// time, datacontenttype, data, and the extensions traceparent, tracestate
// (when the message's headers have them) and partitionkey, and no other.
func Check(t testing.TB, ev *event.Event, source string, m relay.Message) {
	t.Helper()
	str := [...]struct{ name, got, want string }{
		{"id", ev.ID(), m.ID},
		{"source", ev.Source(), source},
		{"specversion", ev.SpecVersion(), cloudevents.SpecVersion},
		{"type", ev.Type(), m.EventType},
		{"subject", ev.Subject(), m.AggregateID},
		{"datacontenttype", ev.DataContentType(), m.ContentType},
	}
	for _, f := range str {
		if f.got != f.want {
			t.Errorf("%s: %s = %q, want %q", m.ID, f.name, f.got, f.want)
		}
	}
	if !ev.Time().Equal(m.CreatedAt) {
		t.Errorf("%s: time = %v, want %v", m.ID, ev.Time(), m.CreatedAt)
	}
	if !bytes.Equal(ev.Data(), m.Payload) {
		t.Errorf("%s: data = %q, want %q", m.ID, ev.Data(), m.Payload)
	}
	want := map[string]string{}
	if m.AggregateID != "" {
		want[cloudevents.AttrPartitionKey] = m.AggregateID
	}
	if v := m.Headers[cloudevents.AttrTraceParent]; v != "" {
		want[cloudevents.AttrTraceParent] = v
		if v := m.Headers[cloudevents.AttrTraceState]; v != "" {
			want[cloudevents.AttrTraceState] = v
		}
	}
	ext := ev.Extensions()
	if len(ext) != len(want) {
		t.Errorf("%s: extensions %v, want %v", m.ID, ext, want)
	}
	for k, v := range want {
		got, err := types.ToString(ext[k])
		if err != nil || got != v {
			t.Errorf("%s: extension %s = %v (%v), want %q", m.ID, k, ext[k], err, v)
		}
	}
}

// Flatten returns the first value of each header.
func Flatten[V any](h map[string][]V) map[string]V {
	out := make(map[string]V, len(h))
	for k, v := range h {
		if len(v) > 0 {
			out[k] = v[0]
		}
	}
	return out
}
