package txoutbox

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"

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
	buf buffer
	raw *sql.Tx
	// pool is the *sql.DB raw was begun on (Begin), nil for an adopted
	// transaction: the flush then lets the dialect run its statements
	// through statements prepared on the pool (dialects.PooledTx).
	pool *sql.DB
	// stop ends the watch of an adopted transaction's context (Adopt);
	// nil for a transaction begun by Begin.
	stop func() bool
}

var _ adder = (*Tx)(nil)

// Context returns the context given to Begin (or Adopt) with this
// transaction attached (see NewContext), for passing down to code that
// calls the package-level Add. It is done when that context is.
func (t *Tx) Context() context.Context { return t.buf.ctx }

// Add validates ev, assigns its id (a UUIDv7, canonical text form, returned)
// and creation time, and buffers a copy of it to be written on Commit. The
// header injectors (WithHeaderInjector) see the Begin context; use the
// package-level Add to register under a context derived from it.
//
// An invalid event yields a *ValidationError (matching ErrInvalidEvent);
// nothing is buffered and the transaction stays usable. An idempotency key
// already given to another event of this transaction is refused the same
// way, and the error also matches ErrDuplicateIdempotencyKey. After Commit
// or Rollback, Add returns an error matching sql.ErrTxDone; after the Begin
// context is done, one matching both sql.ErrTxDone and the context's error.
func (t *Tx) Add(ev Event) (string, error) {
	return t.buf.add(t.buf.ctx, ev)
}

// add is Add with the registering context ctx, passed to the header
// injectors (the Begin context for Tx.Add, the caller's for the
// package-level Add).
func (t *Tx) add(ctx context.Context, ev Event) (string, error) {
	return t.buf.add(ctx, ev)
}

// Events returns a copy of the events buffered so far, in registration
// order (for tests and debugging). Critical is reported as given on each
// event; Commit sets it on every event of a time-critical transaction.
// With WithPayloadEncoder, payloads, content types and headers are as they
// will be stored (encoded).
func (t *Tx) Events() []dialects.Event {
	return t.buf.snapshot()
}

// Commit writes the buffered events (one multi-row INSERT, none when no
// event was added) and commits the transaction.
//
// If writing the events fails, the transaction is rolled back and a
// *FlushError is returned, matching both ErrFlush and the cause: an event
// whose idempotency key is already in the table makes it match
// ErrDuplicateIdempotencyKey, and nothing of the transaction is committed.
// Errors from the driver's COMMIT are returned wrapped. If the Begin
// context is already done, the transaction is rolled back and the error
// matches both sql.ErrTxDone and the context's error. After a successful
// commit that wrote events, the relay of this process and the Notifier are
// told (see WithRelay, WithNotifier, WithoutLazyWake).
func (t *Tx) Commit() error {
	events, critical, ok := t.buf.finish()
	if !ok {
		return sql.ErrTxDone
	}
	if t.stop != nil {
		t.stop()
	}
	ctx := t.buf.ctx
	if ctx.Err() != nil {
		// database/sql rolls back on cancellation (possibly not yet, so
		// make sure); the events are dropped with the transaction.
		_ = t.raw.Rollback()
		return fmt.Errorf("txoutbox: commit: %w (%w)", sql.ErrTxDone, context.Cause(ctx))
	}
	var ho handover
	if len(events) > 0 {
		var err error
		var q dialects.Querier = t.raw
		if t.pool != nil {
			q = dialects.PooledTx{Tx: t.raw, DB: t.pool}
		}
		ho, err = t.buf.ob.flush(ctx, q, events, critical, true)
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
		t.buf.ob.committed(critical, ho)
	}
	return nil
}

// Rollback aborts the transaction and drops the buffered events. Like
// (*sql.Tx).Rollback it returns sql.ErrTxDone when the transaction is
// already finished, so a deferred Rollback after Commit is harmless.
func (t *Tx) Rollback() error {
	if _, _, ok := t.buf.finish(); !ok {
		return sql.ErrTxDone
	}
	if t.stop != nil {
		t.stop()
	}
	return t.raw.Rollback()
}

// handover is what a flush leaves for after the COMMIT.
type handover struct {
	recs   []dialects.Record // for the relay in this process
	read   bool              // the relay must read: owned rows not handed over
	remote bool              // rows of partitions no relay in this process owns
	// wake names the partitions of those rows for the Notifier, each once
	// (nil: any partition, when they are more than a wake names).
	wake  []int
	sched bool // scheduled events: the relay looks for the next due time
}

// flush writes a transaction's events inside it: each event gets its
// partition; a time-critical transaction with the relay of this process
// (WithRelay) running writes with the dialect's hand-over insert so that
// the relay gets the rows of its partitions in memory after COMMIT; rows of
// other partitions are announced to their owners through the Notifier,
// inside the transaction when it speaks there (PostgreSQL NOTIFY, delivered
// only on commit).
//
// With handoff false (Capture: nothing proves the COMMIT happened), rows
// are never handed over in memory; the relay is asked to read instead.
func (o *Outbox) flush(ctx context.Context, q dialects.Querier, events []dialects.Event, critical, handoff bool) (handover, error) {
	var ho handover
	n, err := o.partitionCount(ctx, q)
	if err != nil {
		return ho, err
	}
	owned := 0
	for i := range events {
		e := &events[i]
		e.Partition = dialects.PartitionOf(e.AggregateType, e.AggregateID, n)
		switch {
		case !critical:
		case o.cfg.relay != nil && o.cfg.relay.Owns(e.Partition):
			owned++
		default:
			ho.remote = true
			ho.wake = append(ho.wake, e.Partition)
		}
		if e.Scheduled() {
			ho.sched = true
		}
	}
	slices.Sort(ho.wake)
	if ho.wake = slices.Compact(ho.wake); len(ho.wake) > notify.MaxPayloadPartitions {
		ho.wake = nil // a wake for any partition
	}
	if owned == 0 || !handoff {
		err = o.dialect.Insert(ctx, q, events)
		ho.read = owned > 0
	} else {
		var recs []dialects.Record
		recs, err = o.dialect.InsertHandoff(ctx, q, events)
		for _, rec := range recs {
			if o.cfg.relay.Owns(rec.Partition) {
				ho.recs = append(ho.recs, rec)
			}
		}
		ho.read = len(ho.recs) < owned
	}
	if err != nil {
		return ho, err
	}
	if ho.remote {
		if tn, ok := o.cfg.notifier.(notify.TxNotifier); ok {
			err = tn.NotifyInTx(ctx, q, ho.wake)
		}
	}
	return ho, err
}

// partitionCount returns the table's partition count, read once per Outbox
// (inside the first transaction that writes events).
func (o *Outbox) partitionCount(ctx context.Context, q dialects.Querier) (int, error) {
	if n := o.parts.Load(); n > 0 {
		return int(n), nil
	}
	n, err := o.dialect.Partitions(ctx, q)
	if err != nil {
		return 0, err
	}
	o.parts.Store(int64(n))
	return n, nil
}

// committed tells the relay of this process and the Notifier about a
// committed transaction with events. With WithoutLazyWake, an ordinary
// commit tells nobody: its rows wait for the relays' poll.
func (o *Outbox) committed(critical bool, ho handover) {
	if !critical && o.cfg.noLazyWake {
		return
	}
	if r := o.cfg.relay; r != nil {
		r.Committed(Commit{Critical: critical, Records: ho.recs, Read: ho.read, Scheduled: ho.sched})
	}
	n := o.cfg.notifier
	switch {
	case n == nil:
	case critical && ho.remote:
		n.Notify(ho.wake)
	case !critical:
		if ln, ok := n.(notify.LazyNotifier); ok {
			ln.NotifyLazy()
		}
	}
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
