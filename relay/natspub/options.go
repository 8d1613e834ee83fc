package natspub

import (
	"errors"
	"fmt"
	"time"

	"github.com/jitoutbox/jitoutbox/relay/cloudevents"
)

// Defaults of the options.
const (
	// DefaultMaxPending is how many JetStream publishes await their
	// acknowledgement at once, per Publish call.
	DefaultMaxPending = 256
	// DefaultAckTimeout bounds the wait for one acknowledgement (JetStream)
	// or for the flush of a batch (core NATS).
	DefaultAckTimeout = 10 * time.Second
)

// ErrInvalidOption reports an invalid option value.
var ErrInvalidOption = errors.New("natspub: invalid option")

// Option configures a publisher. Options check their values and make
// NewJetStream and NewCore fail on a bad one.
type Option func(*options) error

type options struct {
	router Router
	// defaultRouter: router is DefaultRouter's (or AggregateTypeRouter's,
	// with Debezium), whose subject depends on the aggregate type and
	// event type alone (see subjectCache).
	defaultRouter bool
	prefix        string
	prefixSet     bool
	maxPending    int
	maxPendSet    bool
	ackTimeout    time.Duration
	expectStream  string
	debezium      bool
	// ce is set by CloudEvents.
	ce *cloudevents.Encoder

	// Durability check (JetStream only).
	syncAlways      bool
	noCheck         bool
	outageAllowance time.Duration
}

func buildOptions(opts []Option) (*options, error) {
	o := &options{prefix: DefaultSubjectPrefix, maxPending: DefaultMaxPending, ackTimeout: DefaultAckTimeout,
		outageAllowance: DefaultOutageAllowance}
	for _, opt := range opts {
		if opt == nil {
			continue
		}
		if err := opt(o); err != nil {
			return nil, err
		}
	}
	if o.router != nil && o.prefixSet {
		return nil, fmt.Errorf("%w: WithRouter and WithSubjectPrefix exclude each other", ErrInvalidOption)
	}
	if o.ce != nil && o.debezium {
		return nil, fmt.Errorf("%w: CloudEvents and Debezium exclude each other", ErrInvalidOption)
	}
	if o.router == nil {
		newRouter, prefix := DefaultRouter, o.prefix
		if o.debezium {
			newRouter = AggregateTypeRouter
			if !o.prefixSet {
				prefix = DebeziumSubjectPrefix
			}
		}
		r, err := newRouter(prefix)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInvalidOption, err)
		}
		o.router, o.defaultRouter = r, true
	}
	return o, nil
}

// WithRouter sets the function that chooses each message's subject
// (default: DefaultRouter(DefaultSubjectPrefix), or
// AggregateTypeRouter(DebeziumSubjectPrefix) with Debezium). It excludes
// WithSubjectPrefix.
func WithRouter(r Router) Option {
	return func(o *options) error {
		if r == nil {
			return fmt.Errorf("%w: nil Router", ErrInvalidOption)
		}
		o.router = r
		return nil
	}
}

// WithSubjectPrefix sets the prefix of the default router (default
// "outbox", or "outbox.event" with Debezium). It must be a valid subject
// ([ValidateSubject]).
func WithSubjectPrefix(prefix string) Option {
	return func(o *options) error {
		if err := ValidateSubject(prefix); err != nil {
			return fmt.Errorf("%w: subject prefix: %w", ErrInvalidOption, err)
		}
		o.prefix, o.prefixSet = prefix, true
		return nil
	}
}

// WithMaxPending sets how many JetStream publishes of one Publish call may
// await their acknowledgement at once (default 256). The jetstream.JetStream
// given to NewJetStream must allow at least as many in flight
// (jetstream.WithPublishAsyncMaxPending), summed over the publishers that
// share it. NewCore rejects it.
func WithMaxPending(n int) Option {
	return func(o *options) error {
		if n < 1 {
			return fmt.Errorf("%w: max pending %d < 1", ErrInvalidOption, n)
		}
		o.maxPending, o.maxPendSet = n, true
		return nil
	}
}

// WithAckTimeout bounds the wait for each JetStream acknowledgement, counted
// from the message's send, and for the flush of a core NATS batch (default
// 10s). A message not confirmed in time gets a retryable error wrapping
// [ErrAckTimeout]. The context given to Publish can end the wait sooner.
func WithAckTimeout(d time.Duration) Option {
	return func(o *options) error {
		if d <= 0 {
			return fmt.Errorf("%w: ack timeout %v <= 0", ErrInvalidOption, d)
		}
		o.ackTimeout = d
		return nil
	}
}

// WithExpectStream makes JetStream publishes require that the subject is
// stored by the named stream (jetstream.WithExpectStream); a message bound
// to another stream fails with a retryable error. NewCore rejects it.
func WithExpectStream(name string) Option {
	return func(o *options) error {
		if name == "" {
			return fmt.Errorf("%w: empty stream name", ErrInvalidOption)
		}
		o.expectStream = name
		return nil
	}
}

// WithServerSyncAlways declares that the JetStream server runs with
// jetstream { sync_interval: always } (nats-server 2.10+), which fsyncs
// every write before acknowledging it. A client cannot read the server's
// sync setting, so without this option the durability check (CheckStream,
// Preflight) warns about streams with fewer than MinSafeReplicas replicas.
func WithServerSyncAlways() Option {
	return func(o *options) error {
		o.syncAlways = true
		return nil
	}
}

// WithOutageAllowance sets how long an outage the stream's duplicate window
// should cover beyond the relay's LeaseDuration (the longest a dead relay's
// partitions wait for a new owner, which republishes what it had not
// marked); the relay's start-up check warns when the window is shorter than
// the LeaseDuration plus this (default DefaultOutageAllowance, 1 minute).
func WithOutageAllowance(d time.Duration) Option {
	return func(o *options) error {
		if d < 0 {
			return fmt.Errorf("%w: outage allowance %v < 0", ErrInvalidOption, d)
		}
		o.outageAllowance = d
		return nil
	}
}

// WithoutDurabilityCheck turns off the stream check the relay runs at
// start-up through Preflight (for example when the client may not read
// stream information). CheckStream still works.
func WithoutDurabilityCheck() Option {
	return func(o *options) error {
		o.noCheck = true
		return nil
	}
}

// Debezium makes messages look like the records of Debezium's outbox event
// router with its defaults, so that consumers written for that shape read
// them unchanged: the subject is "outbox.event.<aggregate_type>"
// ([AggregateTypeRouter] with [DebeziumSubjectPrefix], unless
// WithSubjectPrefix or WithRouter says otherwise), the data is the payload,
// the header [DebeziumHeaderID] ("id") holds the event id and
// [DebeziumHeaderEventType] ("eventType") the event type. Both are set after
// the user's headers, so they win over a user header of the same name.
// jitoutbox's own headers are sent as well.
func Debezium() Option {
	return func(o *options) error {
		o.debezium = true
		return nil
	}
}

// CloudEvents makes every message a CloudEvents 1.0 event with the given
// source, which must be a URI-reference (an error wrapping
// cloudevents.ErrInvalidSource otherwise), for example
// "https://orders.example.com" or "/orders". The attributes are mapped as
// package relay/cloudevents describes. In cloudevents.Binary mode they
// travel as "ce-" headers (ce-id, ce-source, ce-specversion, ce-type,
// ce-subject, ce-time, ce-traceparent, ce-tracestate, ce-partitionkey), the
// datacontenttype as the "content-type" header (in place of
// [HeaderContentType]) and the payload as the data, as the NATS protocol
// binding and the Go SDK's NATS and JetStream bindings read them. In
// cloudevents.Structured mode the data is the JSON event format and
// "content-type" is "application/cloudevents+json". jitoutbox's other
// headers are sent as well (Nats-Msg-Id included), but in binary mode no
// value is sent twice: [HeaderEventID], [HeaderEventType],
// [HeaderAggregateID] and [HeaderCreatedAt] are left out (the ce- headers
// carry them; [EventID] reads ce-id). It excludes Debezium.
func CloudEvents(source string, mode cloudevents.Mode) Option {
	return func(o *options) error {
		e, err := cloudevents.NewEncoder(source, mode, cloudevents.PrefixNATS)
		if err != nil {
			return fmt.Errorf("%w: %w", ErrInvalidOption, err)
		}
		o.ce = e
		return nil
	}
}
