package inbox

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync/atomic"
)

// ApplyFunc applies an event's side effect through tx, the transaction in
// which Handle records the event id. It must not commit or roll back tx.
// An error makes Handle roll the side effect and the record back.
type ApplyFunc func(ctx context.Context, tx *sql.Tx) error

// Inbox records the ids of processed events in the consumer's database, in
// the transaction that applies them, so that each event is applied once.
// It is safe for concurrent use.
type Inbox struct {
	cfg Config
	st  *statements
	// savepoints numbers HandleTx's savepoints, so nested calls on one
	// transaction do not share a name.
	savepoints atomic.Uint64
}

// New returns an Inbox for cfg. It fails with ErrInvalidConfig when cfg
// cannot work. It does not touch the database; call Migrate before use.
func New(cfg Config) (*Inbox, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	st, err := loadStatements(cfg.Dialect, cfg.Table)
	if err != nil {
		return nil, err
	}
	return &Inbox{cfg: cfg, st: st}, nil
}

// Handle processes msg once: in one transaction on db it records the event
// id and runs apply, then commits. A message whose id was recorded before
// is not applied again: Handle returns Duplicate without running apply.
//
// Bad input never reaches apply: a missing id (ErrNoEventID), an id that
// is not a UUID (ErrBadEventID), another malformed part (ErrBadMessage) and
// an id recorded with a different payload (ErrPayloadMismatch) are
// returned as errors with Result Failed, and nothing is committed. So is
// apply's own error, wrapped. Two concurrent deliveries of one event are
// serialised by the id's primary key: one applies, the other waits for it
// and returns Duplicate (or applies, if the first rolled back).
//
// The caller acknowledges the message on Applied, Duplicate and Skipped,
// and on an error decides between redelivery (a database error, apply's
// error) and dropping it (a MessageError, ErrPayloadMismatch).
func (in *Inbox) Handle(ctx context.Context, db *sql.DB, msg Message, apply ApplyFunc) (Result, error) {
	ev, err := check(msg, in.st)
	if err != nil {
		return Failed, err
	}
	tx, err := db.BeginTx(ctx, in.cfg.TxOptions)
	if err != nil {
		return Failed, fmt.Errorf("inbox: event %s: begin: %w", ev.id, err)
	}
	defer func() { _ = tx.Rollback() }()
	res, err := in.handle(ctx, tx, ev, apply)
	if err != nil || res == Duplicate {
		return res, err // rolled back by the deferred call; a Duplicate wrote nothing
	}
	if err := tx.Commit(); err != nil {
		return Failed, fmt.Errorf("inbox: event %s: commit: %w", ev.id, err)
	}
	return res, nil
}

// HandleTx is Handle inside a transaction the caller owns (begun with a
// transaction manager, or holding other work). It records the event id and
// runs apply in tx, under a savepoint: when it returns an error or
// Duplicate, it has rolled tx back to that savepoint, so what it and apply
// wrote is undone even if the caller then commits tx. It neither commits
// nor rolls back tx. Costs two round trips more than Handle (SAVEPOINT,
// RELEASE).
//
// If the savepoint itself cannot be rolled back (the connection broke), the
// error says so and tx must be rolled back.
func (in *Inbox) HandleTx(ctx context.Context, tx *sql.Tx, msg Message, apply ApplyFunc) (res Result, err error) {
	ev, err := check(msg, in.st)
	if err != nil {
		return Failed, err
	}
	sp := fmt.Sprintf("jitoutbox_inbox_%d", in.savepoints.Add(1))
	if _, err := tx.ExecContext(ctx, "SAVEPOINT "+sp); err != nil {
		return Failed, fmt.Errorf("inbox: event %s: savepoint: %w", ev.id, err)
	}
	res, err = in.handle(ctx, tx, ev, apply)
	if err != nil || res == Duplicate {
		bg := context.WithoutCancel(ctx)
		if _, rerr := tx.ExecContext(bg, "ROLLBACK TO SAVEPOINT "+sp); rerr != nil {
			return Failed, errors.Join(err, fmt.Errorf("inbox: event %s: roll back to savepoint: %w; roll the transaction back", ev.id, rerr))
		}
		if _, rerr := tx.ExecContext(bg, "RELEASE SAVEPOINT "+sp); rerr != nil {
			return Failed, errors.Join(err, fmt.Errorf("inbox: event %s: release savepoint: %w; roll the transaction back", ev.id, rerr))
		}
		return res, err
	}
	if _, err := tx.ExecContext(ctx, "RELEASE SAVEPOINT "+sp); err != nil {
		return Failed, fmt.Errorf("inbox: event %s: release savepoint: %w; roll the transaction back", ev.id, err)
	}
	return res, nil
}

// handle records ev in tx, checks its order, and applies it.
func (in *Inbox) handle(ctx context.Context, tx *sql.Tx, ev event, apply ApplyFunc) (Result, error) {
	first, err := in.record(ctx, tx, ev)
	if err != nil || !first {
		if err == nil {
			return Duplicate, nil
		}
		return Failed, err
	}
	if in.cfg.OnOutOfOrder != nil && ev.msg.Seq > 0 {
		d, err := in.checkOrder(ctx, tx, ev)
		if err != nil {
			return Failed, err // with Reject, an *OutOfOrderError
		}
		if d == Skip {
			return Skipped, nil
		}
	}
	if err := apply(ctx, tx); err != nil {
		return Failed, fmt.Errorf("inbox: event %s: apply: %w", ev.id, err)
	}
	return Applied, nil
}

// record inserts ev's id; first reports whether it was new. For an id seen
// before, it compares the payload hashes.
func (in *Inbox) record(ctx context.Context, tx *sql.Tx, ev event) (first bool, err error) {
	var seq sql.NullInt64
	if ev.msg.Seq > 0 {
		seq = sql.NullInt64{Int64: ev.msg.Seq, Valid: true}
	}
	res, err := tx.ExecContext(ctx, in.st.record, ev.id, ev.msg.AggregateType, ev.msg.AggregateID, ev.msg.EventType,
		seq, ev.hash, in.st.time(in.cfg.Now()))
	if err != nil {
		return false, fmt.Errorf("inbox: event %s: record: %w", ev.id, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("inbox: event %s: record: %w", ev.id, err)
	}
	if n == 1 {
		return true, nil
	}
	var stored []byte
	switch err := tx.QueryRowContext(ctx, in.st.storedHash, ev.id).Scan(&stored); {
	case errors.Is(err, sql.ErrNoRows):
		return false, nil // deleted by Cleanup since the conflict: it was there, so a duplicate
	case err != nil:
		return false, fmt.Errorf("inbox: event %s: read recorded payload hash: %w", ev.id, err)
	}
	if !bytes.Equal(stored, ev.hash) {
		return false, &MismatchError{EventID: ev.id, Stored: stored, Got: ev.hash}
	}
	return false, nil
}
