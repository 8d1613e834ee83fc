package natspub

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jitoutbox/jitoutbox/relay"
)

var (
	// ErrNotConnected is recorded for every message of a batch when the
	// connection is not connected (reconnecting or closed) as Publish starts.
	// It is retryable.
	ErrNotConnected = errors.New("natspub: connection not connected")
	// ErrAckTimeout is recorded for a message whose acknowledgement (or
	// batch flush) did not arrive within the ack timeout. It is retryable,
	// and errors wrapping it also match context.DeadlineExceeded.
	ErrAckTimeout = errors.New("natspub: timeout waiting for acknowledgement")
)

// publishError wraps err with the message's identity and marks errors that
// retrying cannot fix as permanent.
func publishError(m *relay.Message, subject string, err error) error {
	if !errors.Is(err, context.DeadlineExceeded) &&
		(errors.Is(err, ErrAckTimeout) || errors.Is(err, jetstream.ErrAsyncPublishTimeout) || errors.Is(err, nats.ErrTimeout)) {
		// Timeouts match context.DeadlineExceeded, which the relay reads
		// as a sign of a broker outage.
		err = fmt.Errorf("%w (%w)", err, context.DeadlineExceeded)
	}
	err = fmt.Errorf("natspub: publish event %s to %q: %w", m.ID, subject, err)
	if isPermanent(err) {
		return relay.Permanent(err)
	}
	return err
}

// isPermanent reports errors the broker will return for the same message
// every time.
func isPermanent(err error) bool {
	if errors.Is(err, nats.ErrMaxPayload) || errors.Is(err, nats.ErrBadSubject) ||
		errors.Is(err, ErrInvalidSubject) {
		return true
	}
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) && apiErr.ErrorCode == jetstream.JSErrCodeStreamMessageExceedsMaximum {
		return true
	}
	return false
}

// connError returns the retryable error recorded for a whole batch when nc
// is not connected, or nil.
func connError(nc *nats.Conn) error {
	if nc == nil || nc.IsConnected() {
		return nil
	}
	if nc.IsClosed() {
		return fmt.Errorf("%w: %w", ErrNotConnected, nats.ErrConnectionClosed)
	}
	return fmt.Errorf("%w (%s): %w", ErrNotConnected, nc.Status(), nats.ErrDisconnected)
}

// fill records err for every message whose outcome is still unknown (nil),
// from index from on.
func fill(errs []error, from int, err error) {
	for i := from; i < len(errs); i++ {
		if errs[i] == nil {
			errs[i] = err
		}
	}
}
