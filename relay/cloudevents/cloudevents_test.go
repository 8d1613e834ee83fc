package cloudevents

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/jitoutbox/jitoutbox/relay"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestValidateSource(t *testing.T) {
	for _, s := range []string{"https://orders.example.com", "/orders", "orders", "urn:example:orders",
		"https://[::1]:8080/x", "//host/path", "a/b:c", "mailto:ops@example.com", "https://x/%41?q=1#f", "#frag"} {
		if err := ValidateSource(s); err != nil {
			t.Errorf("ValidateSource(%q) = %v, want nil", s, err)
		}
	}
	for _, s := range []string{"", "has space", "%zz", "a%4", "1http://x", "a_b:c/d", "x#a#b", "http://x/[a]",
		"caf\u00e9", "http://[::1/", `say"hi"`, "{x}", "a\nb", ":x"} {
		err := ValidateSource(s)
		if !errors.Is(err, ErrInvalidSource) {
			t.Errorf("ValidateSource(%q) = %v, want ErrInvalidSource", s, err)
		}
	}
}

func TestNewEncoderRefuses(t *testing.T) {
	if _, err := NewEncoder("not a uri", Binary, PrefixNATS); !errors.Is(err, ErrInvalidSource) {
		t.Errorf("bad source: %v", err)
	}
	if _, err := NewEncoder("/x", Mode(7), PrefixNATS); !errors.Is(err, ErrInvalidMode) {
		t.Errorf("bad mode: %v", err)
	}
}

func message() relay.Message {
	return relay.Message{ID: "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b", AggregateType: "order", AggregateID: "o-1",
		EventType: "order.paid", Payload: []byte(`{"total": 12}`), ContentType: "application/json",
		Headers:   map[string]string{"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "tracestate": "k=v", "x": "y"},
		CreatedAt: time.Date(2026, 11, 27, 10, 0, 0, 123456789, time.FixedZone("X", 3600))}
}

func TestBinaryHeaders(t *testing.T) {
	e, err := NewEncoder("/orders", Binary, PrefixKafka)
	if err != nil {
		t.Fatal(err)
	}
	m := message()
	got := map[string]string{}
	e.Headers(&m, func(k, v string) {
		if _, dup := got[k]; dup {
			t.Errorf("header %s set twice", k)
		}
		got[k] = v
	})
	want := map[string]string{"ce_specversion": "1.0", "ce_id": m.ID, "ce_source": "/orders", "ce_type": m.EventType,
		"ce_subject": "o-1", "ce_time": "2026-11-27T09:00:00.123456789Z", "ce_traceparent": m.Headers["traceparent"],
		"ce_tracestate": "k=v", "ce_partitionkey": "o-1"}
	if len(got) != len(want) || len(got) > HeaderCount {
		t.Errorf("got %d headers %v, want %d", len(got), got, len(want))
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if ct := e.ContentType(&m); ct != m.ContentType {
		t.Errorf("content type %q", ct)
	}
	if !bytes.Equal(e.Body(&m), m.Payload) {
		t.Errorf("body %q", e.Body(&m))
	}
}

func TestEnvelopeRoundTrip(t *testing.T) {
	e, err := NewEncoder("https://orders.example.com", Structured, PrefixNATS)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, ct string
		payload  []byte
	}{
		{"json verbatim", "application/json; charset=utf-8", []byte("{\"total\":  12,\n \"s\": \"<&>\"}")},
		{"binary", "application/octet-stream", []byte{0, 1, 2, 0xff}},
		{"invalid json", "application/vnd.x+json", []byte("{no")},
		{"empty", "", nil},
	} {
		m := message()
		m.ContentType, m.Payload = c.ct, c.payload
		m.AggregateID = "quote\" and \\ and \u00e9"
		body := e.Body(&m)
		if ct := e.ContentType(&m); !IsStructured(ct) {
			t.Errorf("%s: content type %q", c.name, ct)
		}
		ev, err := ParseEnvelope(body)
		if err != nil {
			t.Fatalf("%s: %v\n%s", c.name, err, body)
		}
		want := Event{ID: m.ID, Source: "https://orders.example.com", SpecVersion: "1.0", Type: m.EventType,
			Subject: m.AggregateID, Time: "2026-11-27T09:00:00.123456789Z", DataContentType: c.ct,
			TraceParent: m.Headers["traceparent"], TraceState: "k=v", PartitionKey: m.AggregateID}
		data := ev.Data
		ev.Data = nil
		if !reflect.DeepEqual(ev, want) {
			t.Errorf("%s: got %+v, want %+v", c.name, ev, want)
		}
		if !bytes.Equal(data, c.payload) {
			t.Errorf("%s: data %q, want %q", c.name, data, c.payload)
		}
	}
}

func TestParseEnvelopeRefuses(t *testing.T) {
	for _, b := range []string{``, `[]`, `{"id":"x"}`, `{"specversion":"1.0"}`, `{"id":"x","specversion":"1.0","data":"x"`} {
		if _, err := ParseEnvelope([]byte(b)); !errors.Is(err, ErrMalformed) {
			t.Errorf("ParseEnvelope(%s) = %v, want ErrMalformed", b, err)
		}
	}
	ev, err := ParseEnvelope([]byte(`{"id":"x","specversion":"1.0","datacontenttype":"text/plain","data":"hi"}`))
	if err != nil || string(ev.Data) != "hi" {
		t.Errorf("text data: %q, %v", ev.Data, err)
	}
}

func TestHeaderLenCountsHeaders(t *testing.T) {
	bin, _ := NewEncoder("/s", Binary, PrefixNATS)
	st, _ := NewEncoder("/s", Structured, PrefixNATS)
	full := message()
	bare := relay.Message{ID: "x", EventType: "t"}
	noState := message()
	noState.Headers = map[string]string{"traceparent": full.Headers["traceparent"]}
	for _, m := range []relay.Message{full, bare, noState} {
		for _, e := range []*Encoder{bin, st} {
			n := 0
			e.Headers(&m, func(string, string) { n++ })
			if got := e.HeaderLen(&m); got != n || n > HeaderCount {
				t.Errorf("%s %+v: HeaderLen %d, Headers set %d", e.Mode(), m, got, n)
			}
		}
	}
}
