package txoutbox

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/jitoutbox/jitoutbox/dialects"
)

// adder is what the package-level Add finds in a context: a *Tx or a
// *Capture.
type adder interface {
	add(ctx context.Context, ev Event) (string, error)
}

// buffer holds the events registered for one transaction until they are
// written: the part that Tx and Capture share.
type buffer struct {
	ob       *Outbox
	ctx      context.Context // the Begin/Adopt/NewCapture context, carrying the owner
	critical bool            // set by TimeCritical(); read-only after creation

	mu     sync.Mutex
	done   bool
	crit   bool // some event is TimeCritical
	events []dialects.Event
	keys   map[string]string // idempotency key -> id of the event that has it
}

// init sets the buffer up for owner (a *Tx or a *Capture) under ctx.
func (b *buffer) init(o *Outbox, ctx context.Context, owner adder, txOpts []TxOption) {
	var tc txConfig
	for _, opt := range txOpts {
		if opt != nil {
			opt(&tc)
		}
	}
	b.ob, b.critical = o, tc.critical
	b.ctx = context.WithValue(ctx, ctxKey{}, owner)
}

// add validates ev, assigns its id and creation time, and buffers a copy
// (see Tx.Add). ctx is the registering context, passed to the header
// injectors.
func (b *buffer) add(ctx context.Context, ev Event) (string, error) {
	if verr := validate(&ev, b.ob.cfg.maxPayload); verr != nil {
		return "", verr
	}
	if verr := checkSchedule(&ev, b.ob.cfg.clock()); verr != nil {
		return "", verr
	}
	stored := ev.toDialect()
	if verr := b.ob.injectHeaders(ctx, &stored); verr != nil {
		return "", verr
	}

	b.mu.Lock()
	defer b.mu.Unlock()
	if b.done {
		return "", errTxDone("add")
	}
	if err := b.ctx.Err(); err != nil {
		return "", fmt.Errorf("txoutbox: add: %w (%w)", sql.ErrTxDone, context.Cause(b.ctx))
	}
	if k := stored.IdempotencyKey; k != "" {
		if first, ok := b.keys[k]; ok {
			verr := invalid("IdempotencyKey", "%q is already the key of event %s in this transaction", k, first)
			verr.duplicate = true
			return "", verr
		}
	}
	// Id and time are taken under the lock so that registration order,
	// buffer order and id order agree (NewV7's ids increase within the
	// process, also within one millisecond).
	id, err := uuid.NewV7()
	if err != nil {
		return "", fmt.Errorf("txoutbox: add: event id: %w", err)
	}
	now := b.ob.cfg.clock()
	stored.ID = id.String()
	stored.CreatedAt = now.UTC().Truncate(time.Microsecond)
	if b.ob.cfg.encoder != nil {
		// Here, under the lock, because the encoder binds the payload to
		// the id, and the id is taken under the lock (above).
		if err := b.ob.encodePayload(&stored); err != nil {
			return "", err
		}
	}
	b.events = append(b.events, stored)
	if k := stored.IdempotencyKey; k != "" {
		if b.keys == nil {
			b.keys = make(map[string]string)
		}
		b.keys[k] = stored.ID
	}
	if ev.TimeCritical {
		b.crit = true
	}
	return stored.ID, nil
}

// snapshot returns a copy of the buffered events.
func (b *buffer) snapshot() []dialects.Event {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]dialects.Event, len(b.events))
	copy(out, b.events)
	return out
}

// finish ends registration and returns the buffered events (Critical set
// on each of a time-critical transaction) and whether the transaction is
// time-critical; ok is false when it had already ended.
func (b *buffer) finish() (events []dialects.Event, critical, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.done {
		return nil, false, false
	}
	b.done = true
	events, b.events, b.keys = b.events, nil, nil
	critical = b.critical || b.crit
	if critical {
		for i := range events {
			events[i].Critical = true
		}
	}
	return events, critical, true
}

// pending reports whether registration is still open with events buffered.
func (b *buffer) pending() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.done {
		return 0
	}
	return len(b.events)
}
