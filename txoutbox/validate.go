package txoutbox

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// MaxNameLen is the longest AggregateType, AggregateID, EventType,
// ContentType or IdempotencyKey accepted, in bytes.
const MaxNameLen = 255

// MaxHeaderBytes is the most bytes an event's headers may hold, names and
// values added up (64 KiB). Brokers carry headers apart from the payload,
// under limits of their own: RabbitMQ sends them in the message's content
// header frame, which must fit in one frame (frame_max, 128 KiB by
// default), with the properties the relay sets itself; NATS and Kafka
// count them in the message size (1 MiB and 1 MB by default). Headers are
// metadata (trace context, a tenant, a schema version); a bound checked at
// Add gives the error to the code that made it, not a dead letter later.
const MaxHeaderBytes = 64 << 10

// MaxDelay is the furthest ahead an event may be scheduled (Event.Delay,
// Event.NotBefore measured from Add): a year and a day, enough for yearly
// renewals and reminders. Something further away is a business record to
// keep in the service's own tables, not a message in flight.
const MaxDelay = 366 * 24 * time.Hour

// Reserved header name prefixes (compared case-insensitively): jitoutbox and
// NATS set these headers themselves.
var reservedHeaderPrefixes = []string{"jitoutbox-", "nats-"}

func invalid(field, format string, args ...any) *ValidationError {
	return &ValidationError{Field: field, Reason: fmt.Sprintf(format, args...)}
}

// validate checks ev against the rules documented on Event.
func validate(ev *Event, maxPayload int) *ValidationError {
	if err := checkName("AggregateType", ev.AggregateType, true); err != nil {
		return err
	}
	if err := checkName("AggregateID", ev.AggregateID, true); err != nil {
		return err
	}
	if err := checkName("EventType", ev.EventType, true); err != nil {
		return err
	}
	if err := checkName("ContentType", ev.ContentType, false); err != nil {
		return err
	}
	if err := checkName("IdempotencyKey", ev.IdempotencyKey, false); err != nil {
		return err
	}
	if len(ev.Payload) > maxPayload {
		e := invalid("Payload", "%d bytes exceeds the maximum of %d", len(ev.Payload), maxPayload)
		e.tooLarge = true
		return e
	}
	for k, v := range ev.Headers {
		if err := checkHeader(k, v); err != nil {
			return err
		}
	}
	return checkHeaderSize(ev.Headers)
}

// checkSchedule checks Delay and NotBefore against MaxDelay, now being the
// registration time.
func checkSchedule(ev *Event, now time.Time) *ValidationError {
	switch {
	case ev.Delay < 0:
		return invalid("Delay", "%v is negative", ev.Delay)
	case ev.Delay > MaxDelay:
		return invalid("Delay", "%v exceeds MaxDelay (%v)", ev.Delay, MaxDelay)
	case !ev.NotBefore.IsZero() && ev.NotBefore.Sub(now) > MaxDelay:
		return invalid("NotBefore", "%s is more than MaxDelay (%v) ahead", ev.NotBefore.UTC().Format(time.RFC3339), MaxDelay)
	}
	return nil
}

// checkHeaderSize checks that the headers' names and values add up to at
// most MaxHeaderBytes.
func checkHeaderSize(h map[string]string) *ValidationError {
	n := 0
	for k, v := range h {
		n += len(k) + len(v)
	}
	if n > MaxHeaderBytes {
		e := invalid("Headers", "%d bytes of names and values exceeds the maximum of %d", n, MaxHeaderBytes)
		e.headersTooLarge = true
		return e
	}
	return nil
}

// checkName validates a short text field.
func checkName(field, s string, required bool) *ValidationError {
	if s == "" {
		if required {
			return invalid(field, "required")
		}
		return nil
	}
	if len(s) > MaxNameLen {
		return invalid(field, "%d bytes exceeds the maximum of %d", len(s), MaxNameLen)
	}
	if !utf8.ValidString(s) {
		return invalid(field, "invalid UTF-8")
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return invalid(field, "contains control character %U", r)
		}
	}
	return nil
}

// checkHeader validates one header: the name must be a token (NATS header
// names are), the value must stay on one line.
func checkHeader(name, value string) *ValidationError {
	field := "Headers[" + strconv.Quote(name) + "]"
	if name == "" {
		return invalid("Headers", "empty header name")
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c <= ' ' || c >= 0x7f || c == ':' {
			return invalid(field, "header names must be printable ASCII without space or colon")
		}
	}
	lower := strings.ToLower(name)
	for _, p := range reservedHeaderPrefixes {
		if strings.HasPrefix(lower, p) {
			return invalid(field, "header prefix %q is reserved", name[:len(p)])
		}
	}
	if !utf8.ValidString(value) {
		return invalid(field, "value is not valid UTF-8")
	}
	for _, r := range value {
		if r != '\t' && unicode.IsControl(r) {
			// CR and LF would split the header line; other control
			// characters are refused by brokers and databases alike.
			return invalid(field, "value contains control character %U", r)
		}
	}
	return nil
}
