package outboxtest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/relay"
)

// DefaultTimeout bounds a wait whose context has no deadline.
const DefaultTimeout = 30 * time.Second

// drainPoll is how often AwaitDrained re-reads the table when it has no relay
// signal to wait on.
const drainPoll = 10 * time.Millisecond

// ErrNotPublished is returned (wrapped) by AwaitPublished when ctx ends before
// every event was published.
var ErrNotPublished = errors.New("outboxtest: events not published")

// ErrNotDrained is returned (wrapped) by AwaitDrained when ctx ends while
// rows are still pending.
var ErrNotDrained = errors.New("outboxtest: outbox not drained")

// withDefaultTimeout gives ctx DefaultTimeout when it has no deadline.
func withDefaultTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, DefaultTimeout)
}

// AwaitPublished blocks until rec has accepted every one of ids and returns
// their messages in the order of ids. It wakes on rec's Changed signal, not
// on a timer. When ctx ends first (DefaultTimeout if it has no deadline) it
// returns an error wrapping ErrNotPublished that lists the missing ids.
func AwaitPublished(ctx context.Context, rec *Recorder, ids ...string) ([]relay.Message, error) {
	ctx, cancel := withDefaultTimeout(ctx)
	defer cancel()
	for {
		changed := rec.Changed()
		missing := rec.missing(ids)
		if len(missing) == 0 {
			break
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, fmt.Errorf("%w: %d of %d missing (%w): %q", ErrNotPublished, len(missing), len(ids), ctx.Err(), missing)
		}
	}
	out := make([]relay.Message, len(ids))
	for i, id := range ids {
		out[i], _ = rec.Message(id)
	}
	return out, nil
}

// WaitPublished is AwaitPublished that fails the test instead of returning
// an error.
func WaitPublished(ctx context.Context, t testing.TB, rec *Recorder, ids ...string) []relay.Message {
	t.Helper()
	msgs, err := AwaitPublished(ctx, rec, ids...)
	if err != nil {
		t.Fatalf("%v", err)
	}
	return msgs
}

// AwaitDrained blocks until no row of d's table is pending (Stats().Pending
// == 0): everything committed before the call has been published or
// dead-lettered. Without a relay signal to wait on it re-reads the table
// every 10ms; Harness.WaitDrained wakes on the relay's batches instead. When
// ctx ends first (DefaultTimeout if it has no deadline) it returns an error
// wrapping ErrNotDrained.
func AwaitDrained(ctx context.Context, db *sql.DB, d dialects.Dialect) error {
	tick := time.NewTicker(drainPoll)
	defer tick.Stop()
	return awaitDrained(ctx, db, d, nil, tick.C)
}

// WaitDrained is AwaitDrained that fails the test instead of returning an
// error.
func WaitDrained(ctx context.Context, t testing.TB, db *sql.DB, d dialects.Dialect) {
	t.Helper()
	if err := AwaitDrained(ctx, db, d); err != nil {
		t.Fatalf("%v", err)
	}
}

// awaitDrained checks Stats, waiting between checks for the channel batch()
// returns (taken before each check; nil batch: none) or a tick.
func awaitDrained(ctx context.Context, db *sql.DB, d dialects.Dialect, batch func() <-chan struct{}, tick <-chan time.Time) error {
	ctx, cancel := withDefaultTimeout(ctx)
	defer cancel()
	for {
		var wake <-chan struct{}
		if batch != nil {
			wake = batch()
		}
		s, err := d.Stats(ctx, db)
		if err == nil && s.Pending == 0 {
			return nil
		}
		if err != nil && ctx.Err() == nil {
			return fmt.Errorf("outboxtest: read outbox stats: %w", err)
		}
		select {
		case <-wake:
		case <-tick:
		case <-ctx.Done():
			return fmt.Errorf("%w (%w): %d pending, %d dead, oldest pending from %v",
				ErrNotDrained, ctx.Err(), s.Pending, s.Dead, s.OldestPending)
		}
	}
}
