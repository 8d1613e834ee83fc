package kafkapub

import (
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/jitoutbox/jitoutbox/relay/cloudevents"
)

// Defaults of the options.
const (
	// DefaultAckTimeout bounds the wait for the acknowledgements of one
	// Publish call.
	DefaultAckTimeout = 10 * time.Second
)

// ErrInvalidOption reports an invalid option value or a client whose
// configuration the publisher cannot keep its promises with.
var ErrInvalidOption = errors.New("kafkapub: invalid option")

// Option configures a publisher. Options check their values and make New
// and Open fail on a bad one.
type Option func(*options) error

type options struct {
	router Router
	// defaultRouter: router is DefaultRouter's, whose topic depends on the
	// aggregate type alone (see topicCache).
	defaultRouter bool
	prefix        string
	prefixSet     bool
	ackTimeout    time.Duration
	debezium      bool
	// ce is set by CloudEvents.
	ce         *cloudevents.Encoder
	clientOpts []kgo.Opt
	// preflightTopics are the topics Preflight checks.
	preflightTopics []string
}

func buildOptions(opts []Option) (*options, error) {
	o := &options{prefix: DefaultTopicPrefix, ackTimeout: DefaultAckTimeout}
	for _, opt := range opts {
		if opt == nil {
			continue
		}
		if err := opt(o); err != nil {
			return nil, err
		}
	}
	if o.router != nil && o.prefixSet {
		return nil, fmt.Errorf("%w: WithRouter and WithTopicPrefix exclude each other", ErrInvalidOption)
	}
	if o.ce != nil && o.debezium {
		return nil, fmt.Errorf("%w: CloudEvents and Debezium exclude each other", ErrInvalidOption)
	}
	if o.router == nil {
		prefix := o.prefix
		if o.debezium && !o.prefixSet {
			prefix = DebeziumTopicPrefix
		}
		r, err := DefaultRouter(prefix)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInvalidOption, err)
		}
		o.router, o.defaultRouter = r, true
	}
	return o, nil
}

// WithRouter sets the function that chooses each record's topic (default:
// DefaultRouter(DefaultTopicPrefix), or DefaultRouter(DebeziumTopicPrefix)
// with Debezium). It excludes WithTopicPrefix.
func WithRouter(r Router) Option {
	return func(o *options) error {
		if r == nil {
			return fmt.Errorf("%w: nil Router", ErrInvalidOption)
		}
		o.router = r
		return nil
	}
}

// WithTopicPrefix sets the prefix of the default router (default "outbox",
// or "outbox.event" with Debezium). It must be a valid topic name
// ([ValidateTopic]) of at most 200 bytes, leaving room for the aggregate type.
func WithTopicPrefix(prefix string) Option {
	return func(o *options) error {
		if err := validatePrefix(prefix); err != nil {
			return fmt.Errorf("%w: topic prefix: %w", ErrInvalidOption, err)
		}
		o.prefix, o.prefixSet = prefix, true
		return nil
	}
}

// WithAckTimeout bounds the wait for the acknowledgements of one Publish
// call, counted from its start (default 10s). A record not acknowledged in
// time gets a retryable error wrapping [ErrAckTimeout]. The context given to
// Publish can end the wait sooner.
func WithAckTimeout(d time.Duration) Option {
	return func(o *options) error {
		if d <= 0 {
			return fmt.Errorf("%w: ack timeout %v <= 0", ErrInvalidOption, d)
		}
		o.ackTimeout = d
		return nil
	}
}

// Debezium makes records look like those of Debezium's outbox event router
// with its defaults, so that consumers written for Debezium read them
// unchanged: the topic is "outbox.event.<aggregate_type>" (unless
// WithTopicPrefix or WithRouter says otherwise), the key is the aggregate
// id, the value is the payload, the header [DebeziumHeaderID] ("id") holds
// the event id and [DebeziumHeaderEventType] ("eventType") the event type,
// as Debezium places it with
// table.fields.additional.placement=type:header:eventType. jitoutbox's own
// headers are sent as well.
func Debezium() Option {
	return func(o *options) error {
		o.debezium = true
		return nil
	}
}

// CloudEvents makes every record a CloudEvents 1.0 event with the given
// source, which must be a URI-reference (an error wrapping
// cloudevents.ErrInvalidSource otherwise), for example
// "https://orders.example.com" or "/orders". The attributes are mapped as
// package relay/cloudevents describes. In cloudevents.Binary mode they
// travel as "ce_" headers (ce_id, ce_source, ce_specversion, ce_type,
// ce_subject, ce_time, ce_traceparent, ce_tracestate, ce_partitionkey), the
// datacontenttype as the "content-type" header (in place of
// [HeaderContentType]) and the payload as the value, as the Kafka protocol
// binding says. In cloudevents.Structured mode the value is the JSON event
// format and "content-type" is "application/cloudevents+json". The key
// stays the aggregate id (the binding maps partitionkey to the key), and
// jitoutbox's other headers are sent as well, but in binary mode no value
// is sent twice: [HeaderEventID], [HeaderEventType], [HeaderAggregateID]
// and [HeaderCreatedAt] are left out (the ce_ headers carry them; [EventID]
// reads ce_id). It excludes Debezium.
func CloudEvents(source string, mode cloudevents.Mode) Option {
	return func(o *options) error {
		e, err := cloudevents.NewEncoder(source, mode, cloudevents.PrefixKafka)
		if err != nil {
			return fmt.Errorf("%w: %w", ErrInvalidOption, err)
		}
		o.ce = e
		return nil
	}
}

// WithClientOptions passes options to the client that Open builds (for
// example kgo.SASL, kgo.DialTLSConfig, kgo.ProducerLinger). Open adds
// kgo.RequiredAcks(kgo.AllISRAcks()) after them; options that disable
// idempotent writes or set a transactional id make Open fail. New rejects
// WithClientOptions.
func WithClientOptions(opts ...kgo.Opt) Option {
	return func(o *options) error {
		for _, opt := range opts {
			if opt == nil {
				return fmt.Errorf("%w: nil kgo.Opt", ErrInvalidOption)
			}
		}
		o.clientOpts = append(o.clientOpts, opts...)
		return nil
	}
}

// WithPreflightTopics names topics that Preflight checks at the relay's
// start (see [Publisher.Preflight]). The default and Debezium routers name a
// topic per aggregate type, and a custom Router may name any topic: the
// publisher cannot know them in advance, so without this option the check
// is skipped. Give the topics your aggregate types publish to.
func WithPreflightTopics(topics ...string) Option {
	return func(o *options) error {
		for _, t := range topics {
			if err := ValidateTopic(t); err != nil {
				return fmt.Errorf("%w: preflight topic: %w", ErrInvalidOption, err)
			}
		}
		o.preflightTopics = append(o.preflightTopics, topics...)
		return nil
	}
}
