package relay

import (
	"context"
	"time"
)

// Hooks observes a relay's batches, in the style of pgx's tracers: a metrics
// or tracing package implements it without the relay importing that package.
//
// A relay calls its hooks from several goroutines, so an implementation must
// be safe for concurrent use, and no method may block for long (each holds
// up the goroutine that calls it):
//   - BatchStart, PublishedHook.Published and DeadLetterHook.DeadLettered
//     run on the lane that publishes the batch: the read lane for rows it
//     read, the hand-over lane for rows handed over after a time-critical
//     commit. The two lanes publish at the same time.
//   - BatchEnd runs on the mark goroutine, after the mark of the batch's
//     published rows is written (one statement may mark several batches),
//     while the lanes already publish the next batches; for a batch of
//     which nothing was published, it runs on the lane, before the lane
//     moves on.
//
// So BatchEnd of one batch can run at the same time as BatchStart of a
// later one; one batch's BatchStart always returns before its BatchEnd is
// called.
//
// An implementation may also implement PublishedHook and DeadLetterHook to
// see single events; the relay finds them by type assertion.
type Hooks interface {
	// BatchStart is called once a batch of rows is in hand (read from the
	// owned partitions, or handed over in memory), before anything is
	// published. The context it returns is passed to the Publisher and to
	// BatchEnd (e.g. carrying a span).
	BatchStart(ctx context.Context, info BatchStartInfo) context.Context
	// BatchEnd is called once the batch's outcome has been written: the
	// mark of its published rows and the failures of the others.
	BatchEnd(ctx context.Context, info BatchEndInfo)
}

// BatchStartInfo describes a batch about to be published.
type BatchStartInfo struct {
	// Owner is the relay's owner id.
	Owner string
	// Size is the number of rows in the batch.
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
	// Size is the number of rows in the batch.
	Size int
	// Published counts events the broker accepted.
	Published int
	// Retried counts failed events scheduled for another attempt.
	Retried int
	// Dead counts dead-lettered events.
	Dead int
	// Released counts events left pending without an attempt (held behind a
	// failed event of their aggregate, a broker outage, or shutdown).
	Released int
	// Outage reports that the batch met a broker outage.
	Outage bool
	// Err is a database error that ended the batch, if any.
	Err error
	// Duration is the time from BatchStart to BatchEnd, the wait for the
	// mark included.
	Duration time.Duration
}

// PublishedHook is an optional Hooks extension called, on the lane that
// publishes the batch, for each event the broker accepted (before its mark
// is written), with the commit-to-ack latency (ack time minus the event's
// CreatedAt).
type PublishedHook interface {
	Published(ctx context.Context, msg Message, latency time.Duration)
}

// DeadLetterHook is an optional Hooks extension called, on the lane that
// publishes the batch, for each event moved to the dead state, with the error that killed it.
type DeadLetterHook interface {
	DeadLettered(ctx context.Context, msg Message, err error)
}
