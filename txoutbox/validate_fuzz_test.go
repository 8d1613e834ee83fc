package txoutbox

import (
	"errors"
	"net/textproto"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// FuzzValidate feeds arbitrary names, header names and values to the event
// validation. Whatever it accepts must be safe for every database and for NATS
// headers: valid UTF-8 without control characters in names, header names
// that are printable ASCII tokens which survive NATS/textproto
// canonicalisation and are not reserved, and header values on one line.
// Whatever it refuses must be a *ValidationError matching ErrInvalidEvent.
func FuzzValidate(f *testing.F) {
	f.Add("order", "42", "order.placed", "X-Trace", "abc", []byte(`{"a":1}`))
	f.Add("", "42", "order.placed", "", "", []byte(nil))
	f.Add("order", "4\x002", "t", "Nats-Msg-Id", "x", []byte{0xff})
	f.Add("ord\xffer", "1", "t", "a b", "v", []byte{})
	f.Add("o", "1", "t", "k:v", "line\r\nInjected: 1", []byte("x"))
	f.Add("o", "1", "t", "JITOUTBOX-EVENT-ID", "v", []byte("x"))
	f.Fuzz(func(t *testing.T, aggType, aggID, evType, hName, hValue string, payload []byte) {
		ev := Event{AggregateType: aggType, AggregateID: aggID, EventType: evType, Payload: payload,
			Headers: map[string]string{hName: hValue}}
		verr := validate(&ev, 64)
		if verr != nil {
			if !errors.Is(verr, ErrInvalidEvent) || verr.Field == "" {
				t.Fatalf("refusal is not a proper ValidationError: %#v", verr)
			}
			return
		}
		for _, s := range []string{aggType, aggID, evType} {
			if s == "" || len(s) > MaxNameLen || !utf8.ValidString(s) || strings.IndexFunc(s, unicode.IsControl) >= 0 {
				t.Fatalf("accepted bad name %q", s)
			}
		}
		if len(payload) > 64 {
			t.Fatalf("accepted a %d-byte payload over the 64-byte maximum", len(payload))
		}
		if hName == "" || strings.ContainsAny(hName, " :\t\r\n") {
			t.Fatalf("accepted header name %q", hName)
		}
		for i := 0; i < len(hName); i++ {
			if hName[i] < '!' || hName[i] > '~' {
				t.Fatalf("accepted non-token header name %q", hName)
			}
		}
		canon := strings.ToLower(textproto.CanonicalMIMEHeaderKey(hName))
		if strings.HasPrefix(canon, "nats-") || strings.HasPrefix(canon, "jitoutbox-") {
			t.Fatalf("accepted reserved header name %q", hName)
		}
		if !utf8.ValidString(hValue) || strings.ContainsAny(hValue, "\r\n\x00") {
			t.Fatalf("accepted header value %q", hValue)
		}
	})
}
