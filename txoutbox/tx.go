package txoutbox

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/notify"
)

// Tx is a database transaction that also captures events. It offers the
// method set of *sql.Tx with the same semantics, plus Add. Like *sql.Tx it
// is safe for concurrent use, and after Commit or Rollback every method
// returns sql.ErrTxDone (QueryRow: a *sql.Row whose Scan returns it).
//
// If the context given to Begin is cancelled before Commit, the database
// transaction is rolled back (by database/sql); Add then fails and Commit
// returns the driver's error.
type Tx struct {
	ob       *Outbox
	raw      *sql.Tx
	ctx      context.Context // the Begin context, carrying this Tx
	critical bool            // set by TimeCritical(); read-only after Begin

	mu     sync.Mutex
	done   bool
	crit   bool // some event is TimeCritical
	events []dialects.Event
}

// Context returns the context given to Begin with this transaction attached
// (see NewContext), for passing down to code that calls the package-level
// Add. It is done when the Begin context is.
func (t *Tx) Context() context.Context { return t.ctx }

// Add validates ev, assigns its id (a UUIDv7, canonical text form, returned)
// and creation time, and buffers a copy of it to be written on Commit. The
// header injectors (WithHeaderInjector) see the Begin context; use the
// package-level Add to register under a context derived from it.
//
// An invalid event yields a *ValidationError (matching ErrInvalidEvent);
// nothing is buffered and the transaction stays usable. After Commit or
// Rollback, Add returns an error matching sql.ErrTxDone; after the Begin
// context is done, one matching both sql.ErrTxDone and the context's error.
func (t *Tx) Add(ev Event) (string, error) {
	return t.add(t.ctx, ev)
}

// add is Add with the registering context ctx, passed to the header
// injectors (the Begin context for Tx.Add, the caller's for the
// package-level Add).
func (t *Tx) add(ctx context.Context, ev Event) (string, error) {
	if verr := validate(&ev, t.ob.cfg.maxPayload); verr != nil {
		return "", verr
	}
	stored := ev.toDialect()
	if verr := t.ob.injectHeaders(ctx, &stored); verr != nil {
		return "", verr
	}

	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done {
		return "", errTxDone("add")
	}
	if err := t.ctx.Err(); err != nil {
		return "", fmt.Errorf("txoutbox: add: %w (%w)", sql.ErrTxDone, context.Cause(t.ctx))
	}
	// Id and time are taken under the lock so that registration order,
	// buffer order and id order agree.
	now := t.ob.cfg.clock()
	stored.ID = t.ob.ids.New(now).String()
	stored.CreatedAt = now.UTC().Truncate(time.Microsecond)
	t.events = append(t.events, stored)
	if ev.TimeCritical {
		t.crit = true
	}
	return stored.ID, nil
}

// Events returns a copy of the events buffered so far, in registration
// order (for tests and debugging). Critical is reported as given on each
// event; Commit sets it on every event of a time-critical transaction.
func (t *Tx) Events() []dialects.Event {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]dialects.Event, len(t.events))
	copy(out, t.events)
	return out
}

// Commit writes the buffered events (one multi-row INSERT, none when no
// event was added) and commits the transaction.
//
// If writing the events fails, the transaction is rolled back and a
// *FlushError is returned, matching both ErrFlush and the cause. Errors from
// the driver's COMMIT are returned wrapped. If the Begin context is already
// done, the transaction is rolled back and the error matches both
// sql.ErrTxDone and the context's error. After a successful commit of a
// time-critical transaction that wrote events, the Notifier is told once.
func (t *Tx) Commit() error {
	t.mu.Lock()
	if t.done {
		t.mu.Unlock()
		return sql.ErrTxDone
	}
	t.done = true
	events := t.events
	t.events = nil
	critical := t.critical || t.crit
	t.mu.Unlock()

	if t.ctx.Err() != nil {
		// database/sql rolls back on cancellation (possibly not yet, so
		// make sure); the events are dropped with the transaction.
		_ = t.raw.Rollback()
		return fmt.Errorf("txoutbox: commit: %w (%w)", sql.ErrTxDone, context.Cause(t.ctx))
	}
	var (
		leased     []dialects.Record
		leaseUntil time.Time
	)
	if len(events) > 0 {
		if critical {
			for i := range events {
				events[i].Critical = true
			}
		}
		var err error
		if li, owner, lease, ok := t.ob.leaseTarget(critical); ok {
			// The relay in this process takes the rows as they are
			// written: no claim after the commit (notify.Leaser).
			leaseUntil = time.Now().Add(lease)
			leased, err = li.InsertLeased(t.ctx, t.raw, events, owner, leaseUntil)
		} else {
			err = t.ob.dialect.Insert(t.ctx, t.raw, events)
		}
		if err == nil && critical {
			// A notifier that must speak inside the transaction (PostgreSQL
			// NOTIFY, delivered only on commit) does so now.
			if tn, ok := t.ob.cfg.notifier.(notify.TxNotifier); ok {
				err = tn.NotifyInTx(t.ctx, t.raw)
			}
		}
		if err != nil {
			ferr := &FlushError{Events: len(events), Err: err}
			if rerr := t.raw.Rollback(); rerr != nil && !errors.Is(rerr, sql.ErrTxDone) {
				ferr.RollbackErr = rerr
			}
			return ferr
		}
	}
	if err := t.raw.Commit(); err != nil {
		return fmt.Errorf("txoutbox: commit: %w", err)
	}
	if len(events) > 0 {
		t.ob.notify(events, critical, leased, leaseUntil)
	}
	return nil
}

// Rollback aborts the transaction and drops the buffered events. Like
// (*sql.Tx).Rollback it returns sql.ErrTxDone when the transaction is
// already finished, so a deferred Rollback after Commit is harmless.
func (t *Tx) Rollback() error {
	t.mu.Lock()
	if t.done {
		t.mu.Unlock()
		return sql.ErrTxDone
	}
	t.done = true
	t.events = nil
	t.mu.Unlock()
	return t.raw.Rollback()
}

// leaseTarget reports whether a time-critical transaction's events are to be
// written leased to the relay in this process: the notifier is a
// notify.Leaser with a relay taking leased events, and the dialect is a
// dialects.LeasingInserter.
func (o *Outbox) leaseTarget(critical bool) (dialects.LeasingInserter, string, time.Duration, bool) {
	if !critical {
		return nil, "", 0, false
	}
	l, ok := o.cfg.notifier.(notify.Leaser)
	if !ok {
		return nil, "", 0, false
	}
	li, ok := o.dialect.(dialects.LeasingInserter)
	if !ok {
		return nil, "", 0, false
	}
	owner, lease, ok := l.LeaseFor()
	return li, owner, lease, ok
}

// notify tells the Notifier about a committed transaction with events:
// for a time-critical one, NotifyLeased with the rows leased to the relay in
// this process, then NotifyEvents with the ids of the others (or Notify);
// NotifyLazy otherwise when the notifier offers it.
func (o *Outbox) notify(events []dialects.Event, critical bool, leased []dialects.Record, leaseUntil time.Time) {
	n := o.cfg.notifier
	if n == nil {
		return
	}
	if !critical {
		if ln, ok := n.(notify.LazyNotifier); ok {
			ln.NotifyLazy()
		}
		return
	}
	if len(leased) > 0 {
		n.(notify.Leaser).NotifyLeased(leased, leaseUntil) // leased only via leaseTarget
		if len(leased) == len(events) {
			return
		}
	}
	if en, ok := n.(notify.EventNotifier); ok {
		ids := make([]string, 0, len(events)-len(leased))
		for i := range events {
			if !isLeased(leased, events[i].ID) {
				ids = append(ids, events[i].ID)
			}
		}
		en.NotifyEvents(ids)
		return
	}
	n.Notify()
}

// isLeased reports whether id is among the leased records.
func isLeased(leased []dialects.Record, id string) bool {
	for i := range leased {
		if leased[i].ID == id {
			return true
		}
	}
	return false
}

// Exec is (*sql.Tx).Exec.
func (t *Tx) Exec(query string, args ...any) (sql.Result, error) {
	return t.raw.Exec(query, args...)
}

// ExecContext is (*sql.Tx).ExecContext.
func (t *Tx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return t.raw.ExecContext(ctx, query, args...)
}

// Query is (*sql.Tx).Query.
func (t *Tx) Query(query string, args ...any) (*sql.Rows, error) {
	return t.raw.Query(query, args...)
}

// QueryContext is (*sql.Tx).QueryContext.
func (t *Tx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return t.raw.QueryContext(ctx, query, args...)
}

// QueryRow is (*sql.Tx).QueryRow.
func (t *Tx) QueryRow(query string, args ...any) *sql.Row {
	return t.raw.QueryRow(query, args...)
}

// QueryRowContext is (*sql.Tx).QueryRowContext.
func (t *Tx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return t.raw.QueryRowContext(ctx, query, args...)
}

// Prepare is (*sql.Tx).Prepare.
func (t *Tx) Prepare(query string) (*sql.Stmt, error) {
	return t.raw.Prepare(query)
}

// PrepareContext is (*sql.Tx).PrepareContext.
func (t *Tx) PrepareContext(ctx context.Context, query string) (*sql.Stmt, error) {
	return t.raw.PrepareContext(ctx, query)
}

// Stmt is (*sql.Tx).Stmt.
func (t *Tx) Stmt(stmt *sql.Stmt) *sql.Stmt {
	return t.raw.Stmt(stmt)
}

// StmtContext is (*sql.Tx).StmtContext.
func (t *Tx) StmtContext(ctx context.Context, stmt *sql.Stmt) *sql.Stmt {
	return t.raw.StmtContext(ctx, stmt)
}
