package txoutbox

import (
	"context"
	"fmt"
	"sync"

	"github.com/jitoutbox/jitoutbox/dialects"
)

// Capture collects the events of a transaction that someone else commits:
// a transaction manager that runs the service's code in a callback and
// calls the raw COMMIT itself. The protocol has three steps:
//
//	c, err := ob.NewCapture(ctx)                // before or inside the transaction
//	err = manager.InTx(c.Context(), func(ctx context.Context, tx *sql.Tx) error {
//		... business statements on tx; txoutbox.Add(ctx, ev) or c.Add(ev) ...
//		return c.WriteTo(ctx, tx)             // last: the events, inside tx
//	})
//	if err == nil {
//		c.Committed()                         // after the COMMIT succeeded: the wake
//	}
//
// WriteTo writes the events in the caller's transaction, so they commit or
// roll back with it. Committed tells the relay of this process and the
// Notifier, as Tx.Commit does after its COMMIT. If the transaction rolls
// back, do not call Committed: nothing is written and nobody is woken.
// Because nothing proves to the Capture that the COMMIT happened, rows are
// never handed to the relay in memory (as Tx.Commit does for time-critical
// commits); the relay is asked to read instead, so a Committed called by
// mistake after a rollback costs one read and publishes nothing.
//
// A Capture is for one transaction and safe for concurrent use.
type Capture struct {
	buf buffer

	mu       sync.Mutex
	written  bool // WriteTo wrote events
	notified bool // Committed has run
	crit     bool
	handover handover
}

var _ adder = (*Capture)(nil)

// NewCapture returns a Capture for one transaction. ctx is what
// Capture.Context carries (for the package-level Add) and what header
// injectors see for Capture.Add; the TimeCritical option marks the
// transaction time-critical. ctx must not be nil (ErrInvalidOption).
func (o *Outbox) NewCapture(ctx context.Context, txOpts ...TxOption) (*Capture, error) {
	if ctx == nil {
		return nil, fmt.Errorf("%w: NewCapture: nil context", ErrInvalidOption)
	}
	c := &Capture{}
	c.buf.init(o, ctx, c, txOpts)
	return c, nil
}

// Context returns the context given to NewCapture with the Capture
// attached, for code that calls the package-level Add.
func (c *Capture) Context() context.Context { return c.buf.ctx }

// Add registers ev like Tx.Add. After WriteTo it returns an error matching
// sql.ErrTxDone: the events are already written.
func (c *Capture) Add(ev Event) (string, error) { return c.buf.add(c.buf.ctx, ev) }

func (c *Capture) add(ctx context.Context, ev Event) (string, error) { return c.buf.add(ctx, ev) }

// Events returns a copy of the events registered and not yet written.
func (c *Capture) Events() []dialects.Event { return c.buf.snapshot() }

// WriteTo writes the registered events with the dialect's multi-row INSERT
// through q, which must be the transaction that commits the business
// change (the *sql.Tx or *sqlx.Tx the manager hands out), right before its
// COMMIT. It writes nothing when no event
// was registered. It may be called once; later calls, and Add after it,
// return an error matching sql.ErrTxDone.
//
// If writing fails, a *FlushError is returned (matching ErrFlush, the
// cause, and ErrDuplicateIdempotencyKey for a key already in the table):
// the caller must roll the transaction back (return the error from the
// manager's callback). A nil q or ctx returns ErrInvalidOption and changes
// nothing.
func (c *Capture) WriteTo(ctx context.Context, q dialects.Querier) error {
	if ctx == nil || q == nil {
		return fmt.Errorf("%w: Capture.WriteTo: nil context or querier", ErrInvalidOption)
	}
	events, critical, ok := c.buf.finish()
	if !ok {
		return errTxDone("capture: write")
	}
	if len(events) == 0 {
		return nil
	}
	ho, err := c.buf.ob.flush(ctx, q, events, critical, false)
	if err != nil {
		return &FlushError{Events: len(events), Err: err}
	}
	c.mu.Lock()
	c.written, c.crit, c.handover = true, critical, ho
	c.mu.Unlock()
	return nil
}

// Committed tells the relay of this process and the Notifier that the
// transaction WriteTo wrote into has committed, as Tx.Commit does after
// its COMMIT (a time-critical transaction wakes at once; an ordinary one
// gets the lazy wake unless WithoutLazyWake). Call it only after a
// successful COMMIT. It does nothing when WriteTo wrote no event, and
// nothing the second time.
func (c *Capture) Committed() {
	c.mu.Lock()
	if !c.written || c.notified {
		c.mu.Unlock()
		return
	}
	c.notified = true
	critical, ho := c.crit, c.handover
	c.mu.Unlock()
	c.buf.ob.committed(critical, ho)
}
