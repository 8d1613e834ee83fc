// Package rabbitpub publishes outbox events to RabbitMQ (AMQP 0-9-1, on
// github.com/rabbitmq/amqp091-go).
//
// [Publisher] implements relay.Publisher. Each event becomes one persistent
// AMQP message whose exchange and routing key come from a [Router] (by
// default [DefaultRouter]: the exchange given to [WithExchange], routing key
// "<aggregate_type>.<event_type>"). Its body is the event's payload; its
// properties carry the event id (MessageId), event type (Type), creation
// time (Timestamp) and content type ("application/octet-stream" when the
// event has none); its headers describe the event (see [HeaderEventID] and
// its siblings) next to the user's own headers. A dead letter (a message
// with relay.Message.Dead set) also carries [HeaderDeadError],
// [HeaderDeadAttempts] and [HeaderDeadAt], so the same publisher given to
// the relay's Config.DeadLetter, routed to a dead-letter exchange, keeps why
// and when the event died.
//
// With the [CloudEvents] option each message is a CloudEvents 1.0 event, in
// binary mode ("cloudEvents:" headers, the AMQP binding's names) or
// structured mode (the JSON event format as the body); package
// relay/cloudevents has the mapping.
//
// # Destination
//
// There is no default exchange: give [WithExchange] (a topic exchange suits
// the default routing key) or [WithRouter]. The publisher never declares
// exchanges or queues; declare them, and bind the queues, before events
// flow.
//
// # Delivery guarantees
//
// Messages are published on a dedicated channel in confirm mode, one batch
// in flight, with the mandatory flag. A message counts as delivered when
// the broker has confirmed it (basic.ack) and has not returned it. A
// message may be delivered more than once (after a lost confirm the relay
// publishes it again); consumers that must process each event once
// deduplicate with [EventID].
//
// # Errors
//
// Errors that retrying cannot fix are wrapped with relay.Permanent, so the
// relay dead-letters the event at once:
//   - a message the broker returned as unroutable (no queue bound for its
//     routing key; [ErrUnroutable]), even though the broker confirms it
//     afterwards: bind a queue before publishing, or use [WithoutMandatory]
//     to let the broker drop such messages;
//   - a message sent to an exchange that does not exist
//     ([ErrExchangeNotFound]; the broker closes the channel with 404);
//   - a route or message AMQP cannot carry ([ErrInvalidRoute],
//     [ErrInvalidMessage]).
//
// Errors that say the broker cannot take messages now are wrapped with
// relay.Unavailable, so the relay spends no attempt on them and treats a
// wave of them as an outage: a connection that cannot be opened (refused,
// reset, a failed handshake) or is lost ([ErrNotConnected]), a connection
// the broker has blocked (connection.blocked, on a memory or disk alarm,
// until the alarm clears), a confirm timeout ([ErrConfirmTimeout]) or the
// relay's publish deadline, a channel closed by a broker shutting down or
// failing (320, 506, 541) or without a reason ([ErrChannelClosed]), and a
// closed publisher ([ErrClosed]). Every unconfirmed message of the batch
// gets that error, and the next Publish connects again. Everything else is
// retryable: a negative confirm ([ErrNacked]) and a channel the broker
// closed because of another message of the batch ([ErrChannelClosed] with
// 403, 404 or 406). When the context given to Publish ends, every
// unconfirmed message gets the context's error, and the connection is
// dropped so that late confirms and returns cannot be mistaken for a later
// batch's; a publish blocked on a socket write ends then too.
//
// User headers named "CC" or "BCC", which RabbitMQ reads as sender-selected
// routing lists and refuses as strings (406, closing the channel on every
// try), are dropped.
//
// The broker URL may hold a password: the publisher never logs it or puts
// it in an error.
package rabbitpub
