package kafkapub

import (
	"context"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/jitoutbox/jitoutbox/relay"
)

// ErrAckTimeout is recorded for a record whose acknowledgement did not
// arrive within the ack timeout (WithAckTimeout), for example because no
// broker is reachable. It is retryable, and errors wrapping it also match
// context.DeadlineExceeded, which the relay reads as a sign of an outage.
var ErrAckTimeout = errors.New("kafkapub: timeout waiting for acknowledgement")

// produceError wraps err with the message's identity and marks errors that
// retrying cannot fix as permanent.
func (p *Publisher) produceError(m *relay.Message, topic string, err error) error {
	if !errors.Is(err, context.DeadlineExceeded) && (errors.Is(err, ErrAckTimeout) || errors.Is(err, kgo.ErrRecordTimeout)) {
		err = fmt.Errorf("%w (%w)", err, context.DeadlineExceeded)
	}
	err = fmt.Errorf("kafkapub: produce event %s to %q: %w", m.ID, topic, err)
	if p.isPermanent(err) {
		return relay.Permanent(err)
	}
	return err
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
	case errors.Is(err, kerr.UnknownTopicOrPartition), errors.Is(err, kerr.UnknownTopicID):
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
