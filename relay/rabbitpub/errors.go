package rabbitpub

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/jitoutbox/jitoutbox/relay"
)

var (
	// ErrNotConnected is recorded for messages that could not be published
	// or confirmed because the connection to the broker is down: the dial
	// failed, the connection was lost during the batch, or the broker
	// blocked it (a resource alarm). Errors wrapping it are unavailable
	// (relay.IsUnavailable): the relay spends no attempt on them; the next
	// Publish connects again.
	ErrNotConnected = errors.New("rabbitpub: not connected to the broker")
	// ErrChannelClosed is recorded for messages whose channel closed during
	// the batch for a reason that is not theirs. When the broker closed it
	// for a message of the batch (403, 404, 406: another message caused it,
	// and which one is not known) it is retryable; when the broker is
	// shutting down or failing (320, 506, 541) or gave no reason, errors
	// wrapping it are unavailable (relay.IsUnavailable). The next Publish
	// opens a new channel.
	ErrChannelClosed = errors.New("rabbitpub: channel closed by the broker")
	// ErrExchangeNotFound is recorded, wrapped with relay.Permanent, for a
	// message published to an exchange that does not exist (the broker
	// closes the channel with 404 NOT_FOUND).
	ErrExchangeNotFound = errors.New("rabbitpub: exchange not found")
	// ErrUnroutable is recorded, wrapped with relay.Permanent, for a
	// mandatory message the broker returned because no queue is bound to
	// receive it (basic.return, 312 NO_ROUTE), even though the broker
	// confirms it afterwards.
	ErrUnroutable = errors.New("rabbitpub: message unroutable")
	// ErrNacked is recorded for a message the broker rejected with a
	// negative confirm (basic.nack). It is retryable.
	ErrNacked = errors.New("rabbitpub: message nacked by the broker")
	// ErrConfirmTimeout is recorded for a message whose confirm did not
	// arrive within the confirm timeout. Errors wrapping it are unavailable
	// (relay.IsUnavailable) and also match context.DeadlineExceeded.
	ErrConfirmTimeout = errors.New("rabbitpub: timeout waiting for the publisher confirm")
	// ErrInvalidMessage is recorded, wrapped with relay.Permanent, for a
	// message AMQP cannot carry (a property or header name longer than 255
	// bytes).
	ErrInvalidMessage = errors.New("rabbitpub: invalid message")
	// ErrClosed is recorded for every message of a Publish called after
	// Close. Errors wrapping it are unavailable (relay.IsUnavailable): the
	// events wait rather than spend attempts.
	ErrClosed = errors.New("rabbitpub: publisher closed")
	// ErrRecoveryEnabled is returned when a dial function hands over a
	// connection with amqp091-go's automatic recovery on: the publisher
	// reconnects by itself and must see a lost connection close. It is
	// retryable, as every connect error.
	ErrRecoveryEnabled = errors.New("rabbitpub: connection has automatic recovery enabled")
)

// msgError wraps err with the message's identity and destination, and
// classifies it (classify).
func msgError(m *relay.Message, r Route, err error) error {
	return classify(fmt.Errorf("rabbitpub: publish event %s to exchange %q routing key %q: %w", m.ID, r.Exchange, r.Key, err))
}

// classify wraps with relay.Unavailable an error that says the broker
// cannot take messages now: no connection ([ErrNotConnected]: the dial
// failed or was refused, the connection was lost or blocked), a confirm
// that did not come in time or the relay's publish deadline, a closed
// connection or channel (amqp.ErrClosed), a closed publisher. Permanent
// errors stay permanent; others stay plainly retryable.
func classify(err error) error {
	if err == nil || relay.IsPermanent(err) || relay.IsUnavailable(err) {
		return err
	}
	for _, target := range [...]error{ErrNotConnected, ErrConfirmTimeout, ErrClosed, amqp.ErrClosed, context.DeadlineExceeded} {
		if errors.Is(err, target) {
			return relay.Unavailable(err)
		}
	}
	return err
}

// brokerFailing reports channel close reasons that say the broker is
// shutting down or failing rather than refusing a message: 320
// CONNECTION_FORCED (a node stopping), 506 RESOURCE_ERROR, 541
// INTERNAL_ERROR.
func brokerFailing(cause *amqp.Error) bool {
	switch cause.Code {
	case amqp.ConnectionForced, amqp.ResourceError, amqp.InternalError:
		return true
	}
	return false
}

// returnError is the permanent error of a returned message.
func returnError(m *relay.Message, ret *amqp.Return) error {
	return relay.Permanent(fmt.Errorf("rabbitpub: publish event %s: %w: exchange %q routing key %q: %d %s",
		m.ID, ErrUnroutable, ret.Exchange, ret.RoutingKey, ret.ReplyCode, ret.ReplyText))
}

// closedError classifies a message left unconfirmed when its channel or
// connection closed. cause is the broker's close reason, nil if none is
// known (a client-side close). A 404 that names the message's exchange is
// permanent; a lost connection, a channel closed by a failing broker or
// without a reason are unavailable; any other channel close is retryable.
func closedError(m *relay.Message, r Route, connClosed bool, cause *amqp.Error) error {
	var err error
	switch {
	case cause != nil && cause.Code == amqp.NotFound && mentionsExchange(cause.Reason, r.Exchange):
		return relay.Permanent(msgError(m, r, fmt.Errorf("%w: %w", ErrExchangeNotFound, cause)))
	case connClosed && cause != nil:
		err = fmt.Errorf("%w: connection lost: %w", ErrNotConnected, cause)
	case connClosed:
		err = fmt.Errorf("%w: connection closed", ErrNotConnected)
	case cause != nil && !brokerFailing(cause):
		// The broker refused a message of the batch (perhaps this one).
		return msgError(m, r, fmt.Errorf("%w: %w", ErrChannelClosed, cause))
	case cause != nil:
		err = fmt.Errorf("%w: %w", ErrChannelClosed, cause)
	default:
		err = ErrChannelClosed
	}
	return relay.Unavailable(msgError(m, r, err))
}

// mentionsExchange reports whether a RabbitMQ close reason such as
// "NOT_FOUND - no exchange 'x' in vhost '/'" names exchange.
func mentionsExchange(reason, exchange string) bool {
	return strings.Contains(reason, "exchange '"+exchange+"'")
}

// waitError is the error of a message still unconfirmed when the wait ended:
// ctx's error when ctx ended, else a confirm timeout.
func waitError(ctx context.Context, m *relay.Message, r Route, timeout time.Duration) error {
	if err := ctx.Err(); err != nil {
		return msgError(m, r, err)
	}
	return msgError(m, r, fmt.Errorf("%w after %v (%w)", ErrConfirmTimeout, timeout, context.DeadlineExceeded))
}

// fill records err for every message whose outcome is still unknown (nil).
func fill(errs []error, err error) {
	for i := range errs {
		if errs[i] == nil {
			errs[i] = err
		}
	}
}
