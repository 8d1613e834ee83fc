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
// With the [CloudEvents] option each message is a CloudEvents 1.0 event, in
// binary mode ("ce-" headers) or structured mode (the JSON event format as
// the data); package relay/cloudevents has the mapping.
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
// Errors are classified for the relay. Errors that retrying cannot fix are
// wrapped with relay.Permanent, so the relay dead-letters the event at
// once: a message larger than the server's max payload or the stream's max
// message size, a subject that is not a valid NATS publish subject, and
// any JetStream API error with status 400, which the stream returns for
// the message itself (a wrong last sequence from a Nats-Expected-* header,
// headers too large, an invalid per-message TTL). Errors that say the
// broker cannot take messages now are wrapped with relay.Unavailable, so
// the relay spends no attempt on them and treats a wave of them as an
// outage: a connection not connected, reconnecting, draining or closed, no
// server reachable, no responders (no stream leader, a server restarting;
// also a subject no stream captures), acknowledgement and flush timeouts
// ([ErrAckTimeout]) and the relay's publish deadline, too many publishes
// awaiting their acknowledgement, and JetStream API errors with status 503
// ("JetStream system temporarily unavailable", insufficient resources, a
// full stream with DiscardNew) or an offline stream. Anything else (a
// custom Router's error, a cancelled context, another API error) is
// retryable.
//
// User headers named "Nats-..." (any case), which txoutbox refuses but a
// row written otherwise may carry, are dropped: the server reserves them.
package natspub
