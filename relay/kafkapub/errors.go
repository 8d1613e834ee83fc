package kafkapub

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/jitoutbox/jitoutbox/relay"
)

// ErrAckTimeout is recorded for a record whose acknowledgement did not
// arrive within the ack timeout (WithAckTimeout), for example because no
// broker is reachable. Errors wrapping it are unavailable
// (relay.IsUnavailable) and also match context.DeadlineExceeded.
var ErrAckTimeout = errors.New("kafkapub: timeout waiting for acknowledgement")

// produceError wraps err with the message's identity and classifies it for
// the relay: permanent when retrying cannot fix it (isPermanent),
// unavailable when the cluster cannot take records now (isUnavailable),
// plainly retryable otherwise.
func (p *Publisher) produceError(m *relay.Message, topic string, err error) error {
	if !errors.Is(err, context.DeadlineExceeded) && (errors.Is(err, ErrAckTimeout) || errors.Is(err, kgo.ErrRecordTimeout)) {
		err = fmt.Errorf("%w (%w)", err, context.DeadlineExceeded)
	}
	err = fmt.Errorf("kafkapub: produce event %s to %q: %w", m.ID, topic, err)
	switch {
	case p.isPermanent(err):
		return relay.Permanent(err)
	case isUnavailable(err):
		return relay.Unavailable(err)
	}
	return err
}

// isUnavailable reports errors that say the cluster cannot take records
// now, whatever the record: no acknowledgement within the ack timeout or
// the relay's publish deadline (kgo retries an unreachable or failing
// broker until then), records timed out or retried too often, a closed
// client, a dial or connection error (refused, reset, closed), and the
// broker errors of a cluster in trouble: broker or leader not available
// (a leader election), not the leader, request timed out, network
// exception, not enough in-sync replicas, a storage error, and an unknown
// topic id (the topic's name is known, but the broker and the client's
// metadata disagree on its id: a topic re-created, or a broker that has not
// learned it yet; the client reloads its metadata).
func isUnavailable(err error) bool {
	for _, target := range [...]error{
		ErrAckTimeout, context.DeadlineExceeded, kgo.ErrRecordTimeout, kgo.ErrRecordRetries, kgo.ErrClientClosed,
		kerr.BrokerNotAvailable, kerr.LeaderNotAvailable, kerr.NotLeaderForPartition, kerr.ReplicaNotAvailable,
		kerr.PreferredLeaderNotAvailable, kerr.RequestTimedOut, kerr.NetworkException, kerr.NotEnoughReplicas,
		kerr.NotEnoughReplicasAfterAppend, kerr.KafkaStorageError, kerr.UnknownTopicID,
		syscall.ECONNREFUSED, syscall.ECONNRESET, net.ErrClosed, io.EOF, io.ErrUnexpectedEOF,
	} {
		if errors.Is(err, target) {
			return true
		}
	}
	var opErr *net.OpError
	return errors.As(err, &opErr)
}

// isPermanent reports errors the cluster will return for the same record
// every time: a record larger than the client's or the broker's limit, a
// topic name the broker rejects, a topic the client may not write to, a
// record the broker's validation rejects, and, when the client does not ask
// for topics to be created, a topic that does not exist (kgo gives up on it
// after kgo.UnknownTopicRetries metadata loads, 4 by default).
func (p *Publisher) isPermanent(err error) bool {
	switch {
	case errors.Is(err, kerr.MessageTooLarge), errors.Is(err, kerr.InvalidTopicException),
		errors.Is(err, kerr.TopicAuthorizationFailed), errors.Is(err, kerr.InvalidRecord),
		errors.Is(err, ErrInvalidTopic):
		return true
	case errors.Is(err, kerr.UnknownTopicOrPartition):
		return !p.autoCreate
	}
	return false
}

// fill records err for every message whose outcome is still unknown (nil).
func fill(errs []error, err error) {
	for i := range errs {
		if errs[i] == nil {
			errs[i] = err
		}
	}
}
