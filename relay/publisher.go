package relay

import (
	"context"
	"errors"
	"time"
)

// Message is one outbox event handed to a Publisher.
type Message struct {
	// ID is the event id (UUIDv7 text). Brokers that deduplicate should use it
	// as the message id (JetStream: Nats-Msg-Id).
	ID string
	// Seq is the outbox row's sequence number: it grows with registration
	// order within an aggregate, so a consumer can tell an event older than
	// the last one it applied for its aggregate. Publishers send it as a
	// header (Jitoutbox-Seq).
	Seq int64
	// AggregateType, AggregateID and EventType describe the event.
	AggregateType string
	AggregateID   string
	EventType     string
	// Payload is the event body (may be empty).
	Payload []byte
	// ContentType is the payload's media type.
	ContentType string
	// Headers are the user's headers.
	Headers map[string]string
	// IdempotencyKey is the caller-given key, "" if none.
	IdempotencyKey string
	// CreatedAt is when the event was registered.
	CreatedAt time.Time
	// Attempt counts delivery attempts, starting at 1.
	Attempt int
	// Critical reports whether the event came from a time-critical transaction.
	Critical bool
	// Dead is set only on messages handed to Config.DeadLetter: why and when
	// the event was dead-lettered. Publishers send it as headers so that a
	// dead-letter destination carries the error text, attempts and time.
	Dead *DeadInfo
}

// DeadInfo describes why an event was dead-lettered.
type DeadInfo struct {
	// Error is the last publish error's text (truncated to 1000 bytes).
	Error string
	// Attempts is the number of failed publish attempts, the last included.
	Attempts int
	// At is when the relay dead-lettered the event.
	At time.Time
}

// Publisher delivers messages to a broker.
//
// The relay never puts two events of the same aggregate into one call, nor
// into two calls at once, so a publisher may send the messages of a batch
// concurrently or pipelined, in any order. A relay calls Publish from two
// goroutines (its read lane and its hand-over lane), so Publish must be safe
// for concurrent use; a publisher that cannot overlap calls serialises them.
// Publish records the outcome of batch[i] in errs[i]: nil when the
// broker has accepted the message (acknowledged, where the broker offers
// acknowledgements). errs has the length of batch and arrives zeroed.
// Publish must return when ctx ends, recording ctx's error for every message
// it could not confirm.
//
// Errors are classified by behaviour: an error for which IsPermanent reports
// true dead-letters the event at once; an error for which IsUnavailable
// reports true (the broker cannot take messages now) leaves the event
// pending without spending an attempt; any other error is retried with
// backoff.
// Implementations for RabbitMQ, Kafka and others fit the same shape.
type Publisher interface {
	Publish(ctx context.Context, batch []Message, errs []error)
}

// PublisherFunc adapts a function to Publisher.
type PublisherFunc func(ctx context.Context, batch []Message, errs []error)

// Publish calls f.
func (f PublisherFunc) Publish(ctx context.Context, batch []Message, errs []error) {
	f(ctx, batch, errs)
}

// ErrPermanent marks a publish error that retrying cannot fix (a message the
// broker will never accept). Wrap it, or return an error implementing
// interface{ Permanent() bool }.
var ErrPermanent = errors.New("relay: permanent publish error")

// Permanent wraps err so that IsPermanent reports true.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &permanentError{err: err}
}

type permanentError struct{ err error }

func (e *permanentError) Error() string   { return e.err.Error() }
func (e *permanentError) Unwrap() []error { return []error{e.err, ErrPermanent} }
func (e *permanentError) Permanent() bool { return true }

// IsPermanent reports whether err, or any error it wraps, is permanent: it is
// ErrPermanent or implements interface{ Permanent() bool } returning true.
func IsPermanent(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, ErrPermanent) {
		return true
	}
	var p interface{ Permanent() bool }
	return errors.As(err, &p) && p.Permanent()
}

// ErrUnavailable marks a publish error that says the broker cannot take
// messages now (not connected, connection refused or lost, no stream
// leader, a broker restarting, an acknowledgement that never came): not a
// fault of the message. The relay spends no attempt on it: the event stays
// pending, and a wave whose every failure is ErrUnavailable is a broker
// outage (see the package documentation). Wrap it, or return an error
// implementing interface{ Unavailable() bool }.
var ErrUnavailable = errors.New("relay: broker unavailable")

// Unavailable wraps err so that IsUnavailable reports true.
func Unavailable(err error) error {
	if err == nil {
		return nil
	}
	return &unavailableError{err: err}
}

type unavailableError struct{ err error }

func (e *unavailableError) Error() string     { return e.err.Error() }
func (e *unavailableError) Unwrap() []error   { return []error{e.err, ErrUnavailable} }
func (e *unavailableError) Unavailable() bool { return true }

// IsUnavailable reports whether err, or any error it wraps, says the broker
// is unavailable: it is ErrUnavailable or implements
// interface{ Unavailable() bool } returning true. An error that is also
// permanent (IsPermanent) is permanent: the relay checks that first.
func IsUnavailable(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, ErrUnavailable) {
		return true
	}
	var u interface{ Unavailable() bool }
	return errors.As(err, &u) && u.Unavailable()
}
