// Package natspub publishes outbox events to NATS: [JetStream] for
// at-least-once delivery into a stream, [Core] for plain core NATS.
//
// Both implement relay.Publisher. Each event becomes one NATS message whose
// subject comes from a [Router] (by default [DefaultRouter]:
// "<prefix>.<aggregate_type>.<event_type>"), whose data is the event's payload
// and whose headers describe the event (see [HeaderEventID] and its siblings)
// next to the user's own headers. Messages of dead-lettered events (those the
// relay hands to its Config.DeadLetter publisher) also carry
// [HeaderDeadError], [HeaderDeadAttempts] and [HeaderDeadAt].
//
// With the [Debezium] option the messages take the shape of Debezium's
// outbox event router: subject "outbox.event.<aggregate_type>"
// ([AggregateTypeRouter]), header "id" with the event id and "eventType"
// with the event type (the names package kafkapub uses), so one consumer
// written for that shape reads them unchanged.
//
// # Delivery guarantees
//
// [JetStream] reports a message delivered only when the stream has
// acknowledged it, and sets Nats-Msg-Id to the event id, so a message the
// relay sends again (after a crash or a lost acknowledgement) is dropped by
// the stream as a duplicate inside the stream's duplicate window. Consumers
// that must be exactly-once across longer gaps deduplicate with [EventID].
//
// [Core] is AT-MOST-ONCE: core NATS keeps nothing. "Delivered" means only
// that the server received the message (one flush per batch); a subscriber
// that is not connected at that moment misses the event for good, and the
// relay marks it published anyway. Use [JetStream] whenever a consumer must
// not miss events.
//
// # Errors
//
// Errors that retrying cannot fix are wrapped with relay.Permanent, so the
// relay dead-letters the event at once: a message larger than the server's
// max payload or the stream's max message size, and a subject that is not a
// valid NATS publish subject. Everything else (no stream for the subject,
// acknowledgement timeouts, a disconnected or closed connection, the context
// ending) is retryable.
package natspub
