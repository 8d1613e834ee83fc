package natspub

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/jitoutbox/jitoutbox/relay"
)

// DefaultSubjectPrefix is the subject prefix of the default router.
const DefaultSubjectPrefix = "outbox"

// DebeziumSubjectPrefix is the subject prefix of the router of the Debezium
// option, after Debezium's default route.topic.replacement
// "outbox.event.${routedByValue}", routed by the aggregate type.
const DebeziumSubjectPrefix = "outbox.event"

// MaxSubjectLen is the longest subject a publisher sends, in bytes. The NATS
// server closes a connection whose protocol line exceeds max_control_line
// (4096 bytes by default), so longer subjects are refused up front.
const MaxSubjectLen = 2048

// ErrInvalidSubject reports a subject that is not a valid NATS publish
// subject. Publishers wrap it with relay.Permanent.
var ErrInvalidSubject = errors.New("natspub: invalid subject")

// Router maps a message to the subject it is published on. An error it
// returns is recorded for that message as is: wrap it with relay.Permanent
// when retrying cannot help. A subject that [ValidateSubject] rejects is
// recorded as a permanent error.
type Router func(relay.Message) (string, error)

// DefaultRouter returns the router "<prefix>.<aggregate_type>.<event_type>".
//
// The prefix may hold several tokens ("svc.outbox") and must be a valid
// subject ([ValidateSubject]). The aggregate type always takes exactly one
// token: dots in it become '_'. Dots in the event type are kept as token
// separators, so aggregate "order" with event "order.paid" goes to
// "outbox.order.order.paid" and subscribers can match "outbox.order.>".
//
// Characters NATS forbids inside a token are replaced by '_': whitespace,
// control characters, invalid UTF-8, '*' and '>'; an empty token (an empty
// type, or ".." or a leading or trailing dot in the event type) becomes "_".
// The mapping is deterministic, so one event type always has one subject. It
// fails only when the resulting subject is longer than [MaxSubjectLen].
func DefaultRouter(prefix string) (Router, error) {
	if err := ValidateSubject(prefix); err != nil {
		return nil, fmt.Errorf("natspub: subject prefix: %w", err)
	}
	return func(m relay.Message) (string, error) {
		var b strings.Builder
		b.Grow(len(prefix) + len(m.AggregateType) + len(m.EventType) + 2)
		b.WriteString(prefix)
		b.WriteByte('.')
		writeToken(&b, m.AggregateType, false)
		b.WriteByte('.')
		writeToken(&b, m.EventType, true)
		s := b.String()
		if len(s) > MaxSubjectLen {
			return "", relay.Permanent(fmt.Errorf("%w: %d bytes is longer than %d", ErrInvalidSubject, len(s), MaxSubjectLen))
		}
		return s, nil
	}, nil
}

// AggregateTypeRouter returns the router "<prefix>.<aggregate_type>": one
// subject per aggregate type, whatever the event type, as the Debezium
// option uses. The prefix and the aggregate type follow DefaultRouter's
// rules: the aggregate type takes exactly one token, sanitized the same way.
func AggregateTypeRouter(prefix string) (Router, error) {
	if err := ValidateSubject(prefix); err != nil {
		return nil, fmt.Errorf("natspub: subject prefix: %w", err)
	}
	return func(m relay.Message) (string, error) {
		var b strings.Builder
		b.Grow(len(prefix) + len(m.AggregateType) + 1)
		b.WriteString(prefix)
		b.WriteByte('.')
		writeToken(&b, m.AggregateType, false)
		s := b.String()
		if len(s) > MaxSubjectLen {
			return "", relay.Permanent(fmt.Errorf("%w: %d bytes is longer than %d", ErrInvalidSubject, len(s), MaxSubjectLen))
		}
		return s, nil
	}, nil
}

// writeToken writes s as one token (keepDots false) or as dot-separated
// tokens (keepDots true), sanitized.
func writeToken(b *strings.Builder, s string, keepDots bool) {
	empty := true
	for len(s) > 0 {
		r, size := utf8.DecodeRuneInString(s)
		s = s[size:]
		switch {
		case r == '.' && keepDots:
			if empty {
				b.WriteByte('_')
			}
			b.WriteByte('.')
			empty = true
			continue
		case r == utf8.RuneError && size <= 1, r == '.', r == '*', r == '>',
			unicode.IsSpace(r), unicode.IsControl(r):
			b.WriteByte('_')
		default:
			b.WriteRune(r)
		}
		empty = false
	}
	if empty {
		b.WriteByte('_')
	}
}

// ValidateSubject reports whether s is a valid subject to publish on: not
// empty, at most [MaxSubjectLen] bytes, valid UTF-8, no empty token, no
// wildcard token ('*' or '>' alone) and no whitespace or control character.
// Its errors wrap [ErrInvalidSubject].
func ValidateSubject(s string) error {
	switch {
	case s == "":
		return fmt.Errorf("%w: empty", ErrInvalidSubject)
	case len(s) > MaxSubjectLen:
		return fmt.Errorf("%w: %d bytes is longer than %d", ErrInvalidSubject, len(s), MaxSubjectLen)
	case !utf8.ValidString(s):
		return fmt.Errorf("%w: not valid UTF-8", ErrInvalidSubject)
	}
	for _, r := range s {
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			return fmt.Errorf("%w: %q contains whitespace or a control character", ErrInvalidSubject, s)
		}
	}
	for tok := range strings.SplitSeq(s, ".") {
		switch tok {
		case "":
			return fmt.Errorf("%w: %q has an empty token", ErrInvalidSubject, s)
		case "*", ">":
			return fmt.Errorf("%w: %q has a wildcard token", ErrInvalidSubject, s)
		}
	}
	return nil
}
