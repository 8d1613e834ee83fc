package relay

import (
	"context"
	"time"
)

// Hooks observes a relay's batches, in the style of pgx's tracers: a metrics
// or tracing package implements it without the relay importing that package.
// Methods are called from the relay's goroutine and must not block for long.
//
// An implementation may also implement PublishedHook and DeadLetterHook to
// see single events; the relay finds them by type assertion.
type Hooks interface {
	// BatchStart is called after a batch has been claimed, before anything is
	// published. The context it returns is passed to the Publisher and to
	// BatchEnd (e.g. carrying a span).
	BatchStart(ctx context.Context, info BatchStartInfo) context.Context
	// BatchEnd is called once the batch's outcome has been written.
	BatchEnd(ctx context.Context, info BatchEndInfo)
}

// BatchStartInfo describes a claimed batch.
type BatchStartInfo struct {
	// Owner is the relay's owner id.
	Owner string
	// Size is the number of claimed rows.
	Size int
	// FastPath reports a batch of the hand-over lane: rows handed over by
	// a time-critical commit of this process, or found by a critical read
	// after a wake from another process.
	FastPath bool
}

// BatchEndInfo describes how a batch ended.
type BatchEndInfo struct {
	// Owner is the relay's owner id.
	Owner string
	// Size is the number of claimed rows.
	Size int
	// Published counts events the broker accepted.
	Published int
	// Retried counts failed events scheduled for another attempt.
	Retried int
	// Dead counts dead-lettered events.
	Dead int
	// Released counts events given back without an attempt (held behind a
	// failed event of their aggregate, a broker outage, or shutdown).
	Released int
	// Outage reports that the batch met a broker outage.
	Outage bool
	// Err is a database error that ended the batch, if any.
	Err error
	// Duration is the time from BatchStart to BatchEnd.
	Duration time.Duration
}

// PublishedHook is an optional Hooks extension called for each event the
// broker accepted, with the commit-to-ack latency (ack time minus the event's
// CreatedAt).
type PublishedHook interface {
	Published(ctx context.Context, msg Message, latency time.Duration)
}

// DeadLetterHook is an optional Hooks extension called for each event moved to
// the dead state, with the error that killed it.
type DeadLetterHook interface {
	DeadLettered(ctx context.Context, msg Message, err error)
}
