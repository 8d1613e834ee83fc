package rabbitpub

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jitoutbox/jitoutbox/relay/cloudevents"
)

// Defaults of the options.
const (
	// DefaultConfirmTimeout bounds the wait for the confirms of one batch,
	// counted from the batch's first publish.
	DefaultConfirmTimeout = 10 * time.Second
	// DefaultDialTimeout bounds the TCP connect and the AMQP handshake of
	// the connections New opens.
	DefaultDialTimeout = 10 * time.Second
	// DefaultHeartbeat is the heartbeat interval the connections New opens
	// ask for.
	DefaultHeartbeat = 10 * time.Second
	// DefaultReturnBuffer is the capacity of the channel that receives
	// returned messages (basic.return) from the client library.
	DefaultReturnBuffer = 1024
)

// ErrInvalidOption reports an invalid option value or constructor argument.
var ErrInvalidOption = errors.New("rabbitpub: invalid option")

// Option configures a publisher. Options check their values and make New
// and NewDial fail on a bad one.
type Option func(*options) error

type options struct {
	router         Router
	exchange       string
	exchangeSet    bool
	mandatory      bool
	confirmTimeout time.Duration
	dialTimeout    time.Duration
	heartbeat      time.Duration
	logger         *slog.Logger
	// ce is set by CloudEvents.
	ce *cloudevents.Encoder
	// urlOnly: an option that applies to New alone was given.
	urlOnly bool
}

func buildOptions(opts []Option) (*options, error) {
	o := &options{mandatory: true, confirmTimeout: DefaultConfirmTimeout,
		dialTimeout: DefaultDialTimeout, heartbeat: DefaultHeartbeat, logger: slog.Default()}
	for _, opt := range opts {
		if opt == nil {
			continue
		}
		if err := opt(o); err != nil {
			return nil, err
		}
	}
	switch {
	case o.router != nil && o.exchangeSet:
		return nil, fmt.Errorf("%w: WithRouter and WithExchange exclude each other", ErrInvalidOption)
	case o.router == nil && !o.exchangeSet:
		return nil, fmt.Errorf("%w: no destination: give WithExchange (the exchange of the default router) or WithRouter", ErrInvalidOption)
	case o.router == nil:
		r, err := DefaultRouter(o.exchange)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInvalidOption, err)
		}
		o.router = r
	}
	return o, nil
}

// WithExchange sets the exchange of the default router, which publishes
// every event on it with the routing key "<aggregate_type>.<event_type>"
// (see [DefaultRouter]); a topic exchange suits it. The exchange must exist:
// the publisher does not declare it. One of WithExchange and WithRouter is
// required; they exclude each other. The default exchange ("") is refused
// here: it routes by queue name, which a custom Router can target on
// purpose.
func WithExchange(name string) Option {
	return func(o *options) error {
		if name == "" {
			return fmt.Errorf("%w: empty exchange name (the default exchange routes by queue name: use WithRouter for it)", ErrInvalidOption)
		}
		if err := ValidateName(name); err != nil {
			return fmt.Errorf("%w: exchange: %w", ErrInvalidOption, err)
		}
		o.exchange, o.exchangeSet = name, true
		return nil
	}
}

// WithRouter sets the function that chooses each message's exchange and
// routing key. It excludes WithExchange.
func WithRouter(r Router) Option {
	return func(o *options) error {
		if r == nil {
			return fmt.Errorf("%w: nil Router", ErrInvalidOption)
		}
		o.router = r
		return nil
	}
}

// WithoutMandatory publishes without the mandatory flag: a message that no
// queue receives is dropped by the broker and counts as delivered. By
// default messages are mandatory and an unroutable one fails with a
// permanent error wrapping [ErrUnroutable].
func WithoutMandatory() Option {
	return func(o *options) error {
		o.mandatory = false
		return nil
	}
}

// WithConfirmTimeout bounds the wait for a batch's publisher confirms,
// counted from the batch's first publish (default 10s). A message not
// confirmed in time gets a retryable error wrapping [ErrConfirmTimeout]
// (which also matches context.DeadlineExceeded). The context given to
// Publish can end the wait sooner.
func WithConfirmTimeout(d time.Duration) Option {
	return func(o *options) error {
		if d <= 0 {
			return fmt.Errorf("%w: confirm timeout %v <= 0", ErrInvalidOption, d)
		}
		o.confirmTimeout = d
		return nil
	}
}

// WithDialTimeout bounds the TCP connect and AMQP handshake of each
// connection New opens (default 10s); the context given to Publish can end
// the connect sooner. NewDial rejects it: its dial function bounds its own
// connects.
func WithDialTimeout(d time.Duration) Option {
	return func(o *options) error {
		if d <= 0 {
			return fmt.Errorf("%w: dial timeout %v <= 0", ErrInvalidOption, d)
		}
		o.dialTimeout, o.urlOnly = d, true
		return nil
	}
}

// WithHeartbeat sets the heartbeat interval the connections New opens ask
// the broker for (default 10s); a lost peer is detected after about three
// intervals without traffic. NewDial rejects it.
func WithHeartbeat(d time.Duration) Option {
	return func(o *options) error {
		if d < time.Second {
			return fmt.Errorf("%w: heartbeat %v < 1s", ErrInvalidOption, d)
		}
		o.heartbeat, o.urlOnly = d, true
		return nil
	}
}

// WithLogger sets the logger of connection events: a connection lost and
// opened again (default slog.Default()). The broker URL is never logged.
func WithLogger(l *slog.Logger) Option {
	return func(o *options) error {
		if l == nil {
			return fmt.Errorf("%w: nil logger", ErrInvalidOption)
		}
		o.logger = l
		return nil
	}
}

// CloudEvents makes every message a CloudEvents 1.0 event with the given
// source, which must be a URI-reference (an error wrapping
// cloudevents.ErrInvalidSource otherwise), for example
// "https://orders.example.com" or "/orders". The attributes are mapped as
// package relay/cloudevents describes. RabbitMQ speaks AMQP 0-9-1, which has
// no CloudEvents binding of its own; the AMQP (1.0) binding's names are
// used, its application properties being the headers table: in
// cloudevents.Binary mode the attributes travel as "cloudEvents:" headers
// (cloudEvents:id, cloudEvents:source, cloudEvents:specversion,
// cloudEvents:type, cloudEvents:subject, cloudEvents:time,
// cloudEvents:traceparent, cloudEvents:tracestate,
// cloudEvents:partitionkey), the datacontenttype as the content-type
// property (left empty when the event has none) and the payload as the
// body. In cloudevents.Structured mode the body is the JSON event format
// and the content type "application/cloudevents+json". jitoutbox's headers
// and the message id and type properties are sent as well, but in binary
// mode no value is sent twice: [HeaderEventID], [HeaderEventType],
// [HeaderAggregateID] and [HeaderCreatedAt] are left out (the cloudEvents:
// headers carry them; [EventID] falls back on the message id).
func CloudEvents(source string, mode cloudevents.Mode) Option {
	return func(o *options) error {
		e, err := cloudevents.NewEncoder(source, mode, cloudevents.PrefixAMQP)
		if err != nil {
			return fmt.Errorf("%w: %w", ErrInvalidOption, err)
		}
		o.ce = e
		return nil
	}
}
