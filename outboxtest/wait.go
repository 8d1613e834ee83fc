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
// rows that could still be published are pending.
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

// AwaitDrained blocks until d's table is drained: no pending row could
// still be published. A pending row held behind a dead event of its
// aggregate does not count: by default a dead event blocks the later events
// of its aggregate until an operator requeues or skips it, so they would
// wait for ever (a test that expects them published calls Requeue or Skip,
// then waits again). Rows backing off after a retryable failure do count:
// their next attempt may succeed. Everything committed before the call has
// then been published, dead-lettered, or is blocked behind a dead event.
//
// Without a relay signal to wait on it re-reads the table every 10ms;
// Harness.WaitDrained wakes on the relay's batches instead. When ctx ends
// first (DefaultTimeout if it has no deadline) it returns an error wrapping
// ErrNotDrained.
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

// maxBlockers is the most blocked aggregates awaitDrained reads; with more,
// it counts only the first ones as blocked, so it waits (for the relay or
// ctx) rather than report a drain it cannot prove.
const maxBlockers = 10000

// drainState is one look at the table.
type drainState struct {
	stats   dialects.Stats
	blocked int64 // pending rows behind a dead event
}

// publishable is the number of pending rows that could still be published.
func (s drainState) publishable() int64 { return s.stats.Pending - s.blocked }

// readDrain reads Stats, then the pending rows held behind dead events.
// That order never reports a drain that is not one: a requeue or skip
// between the reads only lowers the blocked count, and a row dying between
// them leaves itself counted as pending but not as blocked.
func readDrain(ctx context.Context, db *sql.DB, d dialects.Dialect) (drainState, error) {
	var st drainState
	s, err := d.Stats(ctx, db)
	if err != nil {
		return st, fmt.Errorf("outboxtest: read outbox stats: %w", err)
	}
	st.stats = s
	if s.Pending == 0 || s.Dead == 0 {
		return st, nil
	}
	bl, err := d.Blockers(ctx, db, time.Now(), maxBlockers)
	if err != nil {
		return st, fmt.Errorf("outboxtest: read blocked aggregates: %w", err)
	}
	for _, b := range bl {
		if b.Reason == dialects.BlockDead {
			st.blocked += b.Pending
		}
	}
	return st, nil
}

// awaitDrained checks the table, waiting between checks for the channel
// batch() returns (taken before each check; nil batch: none) or a tick.
func awaitDrained(ctx context.Context, db *sql.DB, d dialects.Dialect, batch func() <-chan struct{}, tick <-chan time.Time) error {
	ctx, cancel := withDefaultTimeout(ctx)
	defer cancel()
	for {
		var wake <-chan struct{}
		if batch != nil {
			wake = batch()
		}
		st, err := readDrain(ctx, db, d)
		if err == nil && st.publishable() <= 0 {
			return nil
		}
		if err != nil && ctx.Err() == nil {
			return err
		}
		select {
		case <-wake:
		case <-tick:
		case <-ctx.Done():
			return fmt.Errorf("%w (%w): %d pending (%d of them behind dead events), %d dead, oldest pending from %v",
				ErrNotDrained, ctx.Err(), st.stats.Pending, st.blocked, st.stats.Dead, st.stats.OldestPending)
		}
	}
}
