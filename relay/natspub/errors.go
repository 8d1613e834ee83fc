package natspub

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jitoutbox/jitoutbox/relay"
)

var (
	// ErrNotConnected is recorded for every message of a batch when the
	// connection is not connected (reconnecting or closed) as Publish starts.
	// It is a broker outage: errors wrapping it are unavailable
	// (relay.IsUnavailable).
	ErrNotConnected = errors.New("natspub: connection not connected")
	// ErrAckTimeout is recorded for a message whose acknowledgement (or
	// batch flush) did not arrive within the ack timeout. Errors wrapping it
	// are unavailable (relay.IsUnavailable) and also match
	// context.DeadlineExceeded.
	ErrAckTimeout = errors.New("natspub: timeout waiting for acknowledgement")
)

// publishError wraps err with the message's identity and classifies it
// for the relay: permanent when the broker refused the message for a
// reason in the message itself, unavailable when the broker cannot take
// messages now (see isUnavailable), plainly retryable otherwise.
func publishError(m *relay.Message, subject string, err error) error {
	if !errors.Is(err, context.DeadlineExceeded) &&
		(errors.Is(err, ErrAckTimeout) || errors.Is(err, jetstream.ErrAsyncPublishTimeout) || errors.Is(err, nats.ErrTimeout)) {
		err = fmt.Errorf("%w (%w)", err, context.DeadlineExceeded)
	}
	err = fmt.Errorf("natspub: publish event %s to %q: %w", m.ID, subject, err)
	switch {
	case isPermanent(err):
		return relay.Permanent(err)
	case isUnavailable(err):
		return relay.Unavailable(err)
	}
	return err
}

// isPermanent reports errors the broker will return for the same message
// every time: a payload over the server's max_payload, a subject it
// rejects, and every JetStream API error with status 400 (bad request),
// which the stream returns for the message itself: wrong last sequence or
// message id (10071, 10164, 10070) from a Nats-Expected-* header, message
// or headers larger than the stream allows (10054, 10097), an invalid
// per-message TTL (10165, 10166), a mismatching expected stream (10060),
// and the like. A message too large for the stream's file store (10077,
// "message too large") is permanent too, although its status is 503.
func isPermanent(err error) bool {
	if errors.Is(err, nats.ErrMaxPayload) || errors.Is(err, nats.ErrBadSubject) ||
		errors.Is(err, ErrInvalidSubject) {
		return true
	}
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) {
		switch {
		case apiErr.Code == 400, apiErr.ErrorCode == jetstream.JSErrCodeStreamMessageExceedsMaximum:
			return true
		case apiErr.ErrorCode == jsErrCodeStreamStoreFailed && strings.Contains(apiErr.Description, "message too large"):
			return true
		}
	}
	return false
}

// JetStream API error codes (nats-server's errors.json) that package
// jetstream does not name.
const (
	jsErrCodeStreamStoreFailed   jetstream.ErrorCode = 10077 // "{err}" from the store, status 503
	jsErrCodeStreamOffline       jetstream.ErrorCode = 10118 // "stream is offline", status 500
	jsErrCodeStreamOfflineReason jetstream.ErrorCode = 10194 // "stream is offline: {err}", status 500
)

// isUnavailable reports errors that say the broker cannot take messages
// now, whatever the message: the connection is not connected, closed,
// reconnecting or draining; no server is reachable; the subject has no
// responder (no stream leader: a stream whose leader is being elected, or
// a server restarting; the same answer comes for a subject no stream
// captures, which WithExpectStream and the relay's preflight catch);
// an acknowledgement or flush timed out, or too many publishes await
// theirs; the JetStream context was closed; and JetStream API errors with
// status 503 ("JetStream system temporarily unavailable" 10008,
// insufficient resources, a stream that is full with DiscardNew, JetStream
// not enabled yet) or a stream that is offline.
func isUnavailable(err error) bool {
	for _, target := range [...]error{
		ErrNotConnected, ErrAckTimeout, context.DeadlineExceeded,
		nats.ErrConnectionClosed, nats.ErrDisconnected, nats.ErrConnectionReconnecting,
		nats.ErrConnectionDraining, nats.ErrNoServers, nats.ErrNoResponders, nats.ErrTimeout,
		nats.ErrReconnectBufExceeded, nats.ErrStaleConnection, nats.ErrMaxConnectionsExceeded,
		jetstream.ErrNoStreamResponse, jetstream.ErrAsyncPublishTimeout, jetstream.ErrTooManyStalledMsgs,
		jetstream.ErrConnectionClosed, jetstream.ErrJetStreamPublisherClosed,
	} {
		if errors.Is(err, target) {
			return true
		}
	}
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) {
		return apiErr.Code == 503 || apiErr.ErrorCode == jsErrCodeStreamOffline ||
			apiErr.ErrorCode == jsErrCodeStreamOfflineReason
	}
	return false
}

// connError returns the unavailable error recorded for a whole batch when
// nc is not connected, or nil.
func connError(nc *nats.Conn) error {
	if nc == nil || nc.IsConnected() {
		return nil
	}
	if nc.IsClosed() {
		return relay.Unavailable(fmt.Errorf("%w: %w", ErrNotConnected, nats.ErrConnectionClosed))
	}
	return relay.Unavailable(fmt.Errorf("%w (%s): %w", ErrNotConnected, nc.Status(), nats.ErrDisconnected))
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
