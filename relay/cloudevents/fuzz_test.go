package cloudevents

import (
	"bytes"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jitoutbox/jitoutbox/relay"
)

// FuzzEnvelopeRoundTrip: whatever the event's strings and payload,
// ParseEnvelope reads back from Envelope the attributes and data put in.
func FuzzEnvelopeRoundTrip(f *testing.F) {
	f.Add("id-1", "order.paid", "o-1", "application/json", []byte(`{"a": [1, 2]}`), "00-ab-cd-01")
	f.Add("\u00e9\"\\", "t\x00", "", "text/plain", []byte("hi"), "")
	f.Add("x", "y", "z", "application/x+json", []byte("{bad"), "tp")
	f.Fuzz(func(t *testing.T, id, typ, agg, ct string, payload []byte, tp string) {
		if id == "" {
			return // ParseEnvelope requires an id
		}
		e, err := NewEncoder("/fuzz", Structured, PrefixNATS)
		if err != nil {
			t.Fatal(err)
		}
		m := relay.Message{ID: id, EventType: typ, AggregateID: agg, ContentType: ct, Payload: payload,
			Headers: map[string]string{AttrTraceParent: tp}, CreatedAt: time.Unix(1, 5).UTC()}
		ev, err := ParseEnvelope(e.Envelope(&m))
		if err != nil {
			t.Fatalf("%v\n%s", err, e.Envelope(&m))
		}
		// JSON strings carry valid UTF-8 only: each invalid byte comes back
		// as U+FFFD, as a conversion to runes does.
		fix := func(s string) string { return string([]rune(s)) }
		if ev.ID != fix(id) || ev.Type != fix(typ) || ev.Subject != fix(agg) ||
			ev.DataContentType != fix(ct) || ev.TraceParent != fix(tp) {
			t.Fatalf("attributes %+v", ev)
		}
		if len(payload) == 0 && ev.Data != nil || len(payload) > 0 && !bytes.Equal(ev.Data, payload) {
			t.Fatalf("data %q, want %q", ev.Data, payload)
		}
	})
}

// FuzzValidateSource: a source ValidateSource accepts is a URI-reference
// url.Parse reads, with no byte outside RFC 3986's set; a refusal wraps
// ErrInvalidSource.
func FuzzValidateSource(f *testing.F) {
	for _, s := range []string{"https://x.example/a?b#c", "/a", "urn:x:y", "a b", "%zz", "http://[::1]:80/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		err := ValidateSource(s)
		if err != nil {
			if !errors.Is(err, ErrInvalidSource) {
				t.Fatalf("%q: %v does not wrap ErrInvalidSource", s, err)
			}
			return
		}
		if s == "" || strings.ContainsAny(s, " \"<>\\^`{|}") {
			t.Fatalf("%q accepted", s)
		}
		if _, err := url.Parse(s); err != nil {
			t.Fatalf("%q accepted, url.Parse: %v", s, err)
		}
	})
}
