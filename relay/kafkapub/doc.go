// Package kafkapub publishes outbox events to Apache Kafka with franz-go
// (github.com/twmb/franz-go/pkg/kgo).
//
// [Publisher] implements relay.Publisher. Each event becomes one record:
//
//   - topic: from a [Router]; by default [DefaultRouter]:
//     "<prefix>.<aggregate_type>" with prefix "outbox", one topic per
//     aggregate type ("outbox.order");
//   - key: the aggregate id, so that the events of one aggregate go to one
//     partition (franz-go hashes keys with murmur2, as Kafka's Java client
//     does) and are consumed in order;
//   - value: the payload;
//   - headers: the user's headers, then jitoutbox's ([HeaderEventID] and its
//     siblings, the names package natspub uses), and, on events handed to
//     the relay's dead-letter publisher, [HeaderDeadError],
//     [HeaderDeadAttempts] and [HeaderDeadAt].
//
// With the [Debezium] option the records look like those of Debezium's
// outbox event router: topic "outbox.event.<aggregate_type>", header "id"
// with the event id and "eventType" with the event type, so consumers
// written for Debezium work unchanged.
//
// With the [CloudEvents] option each record is a CloudEvents 1.0 event, in
// binary mode ("ce_" headers) or structured mode (the JSON event format as
// the value); package relay/cloudevents has the mapping.
//
// # Delivery guarantees
//
// A record counts as delivered when the partition leader acknowledged it
// with acks=all. The client must be franz-go's idempotent producer (its
// default), so the client's own retries neither duplicate nor reorder
// records of a partition; New and Open refuse a client that is not. A relay
// retry after an unconfirmed publish (a timeout, a crash) can still produce
// an event twice: consumers deduplicate with [EventID].
//
// # Errors
//
// Errors that retrying cannot fix are wrapped with relay.Permanent, so the
// relay dead-letters the event at once: a record larger than the client's
// batch limit or the topic's max.message.bytes (kerr.MessageTooLarge), an
// invalid topic name ([ErrInvalidTopic], kerr.InvalidTopicException), a
// topic the client is not authorized to write (kerr.TopicAuthorizationFailed),
// a record the broker rejects as invalid (kerr.InvalidRecord), and, when
// the client does not allow automatic topic creation
// (kgo.AllowAutoTopicCreation), a topic that does not exist. Errors that
// say the cluster cannot take records now are wrapped with
// relay.Unavailable, so the relay spends no attempt on them and treats a
// wave of them as an outage: unreachable brokers (the client retries them
// until the records time out with [ErrAckTimeout], which also matches
// context.DeadlineExceeded, or the relay's publish deadline), dial and
// connection errors, records timed out or retried too often, a closed
// client, and the broker errors of a cluster in trouble: broker or leader
// not available (a leader election), not the leader, request timed out,
// network exception, not enough in-sync replicas, a storage error.
// Everything else is retryable (a cancelled context, a topic being
// created). Kafka interprets no record header, so user headers pass
// unchanged (but those that clash with jitoutbox's).
package kafkapub
