package txoutbox

import (
	"encoding/json"
	"maps"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
)

// Content types chosen by Add when Event.ContentType is empty.
const (
	ContentTypeJSON   = "application/json"
	ContentTypeBinary = "application/octet-stream"
)

// Event is a domain event to capture with Tx.Add.
type Event struct {
	// AggregateType names the kind of entity the event is about ("order").
	// Required.
	AggregateType string
	// AggregateID identifies the entity ("42"). Required. Events of one
	// aggregate are delivered in the order they were added.
	AggregateID string
	// EventType names what happened ("order.placed"). Required.
	EventType string
	// Payload is the event body; it may be empty. Add copies it, so the
	// caller may reuse the buffer.
	Payload []byte
	// ContentType is the payload's media type. When empty, Add uses
	// "application/json" if the payload is non-empty valid JSON (RFC 8259,
	// any JSON value), else "application/octet-stream".
	ContentType string
	// Headers are user headers sent with the message. Names must be
	// non-empty printable ASCII without space or colon and must not start
	// with the reserved prefixes "Jitoutbox-" or "Nats-" (case-insensitive);
	// values must be valid UTF-8 without control characters other than tab.
	// Names and values together may hold at most MaxHeaderBytes bytes.
	// Add copies the map.
	Headers map[string]string
	// IdempotencyKey is an optional caller-chosen key (at most 255 bytes)
	// consumers can use to drop duplicates; see the IdempotencyKey function.
	IdempotencyKey string
	// TimeCritical marks the event, and so its whole transaction, as
	// time-critical (see TimeCritical).
	TimeCritical bool
	// NotBefore schedules the event: the relay publishes it no earlier than
	// this time as the database's clock reads it (never a relay's or this
	// process's). Zero: not scheduled; a time already past: published at
	// once. At most MaxDelay after Add.
	NotBefore time.Time
	// Delay schedules the event this long after its transaction writes it,
	// by the database's clock (0: not scheduled; at most MaxDelay). With
	// NotBefore too, the later of the two.
	Delay time.Duration
	// Unordered puts a scheduled event outside its aggregate's order: the
	// later events of its aggregate are published without waiting for it.
	// By default a scheduled event holds them until it is due (docs/capture.md,
	// "Scheduled events"). Ignored for an event that is not scheduled.
	Unordered bool
}

// scheduled reports whether ev asks for a later delivery.
func (ev *Event) scheduled() bool { return !ev.NotBefore.IsZero() || ev.Delay > 0 }

// detectContentType picks the content type of a payload with none given.
func detectContentType(p []byte) string {
	// Cheap pre-check: JSON text starts (after whitespace) with one of
	// { [ " t f n - or a digit; anything else is binary without validating.
	for _, c := range p {
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		case '{', '[', '"', 't', 'f', 'n', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
			if json.Valid(p) {
				return ContentTypeJSON
			}
		}
		return ContentTypeBinary
	}
	return ContentTypeBinary
}

// toDialect copies ev into the stored form (id and time assigned later).
func (ev *Event) toDialect() dialects.Event {
	out := dialects.Event{
		AggregateType:  ev.AggregateType,
		AggregateID:    ev.AggregateID,
		EventType:      ev.EventType,
		ContentType:    ev.ContentType,
		IdempotencyKey: ev.IdempotencyKey,
		Critical:       ev.TimeCritical,
	}
	if ev.scheduled() {
		out.NotBefore = ev.NotBefore.UTC().Truncate(time.Microsecond)
		out.Delay = ev.Delay
		out.Unordered = ev.Unordered
	}
	if len(ev.Payload) > 0 {
		out.Payload = append([]byte(nil), ev.Payload...)
	}
	if out.ContentType == "" {
		out.ContentType = detectContentType(ev.Payload)
	}
	if len(ev.Headers) > 0 {
		out.Headers = maps.Clone(ev.Headers)
	}
	return out
}
