package txoutbox

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/jmoiron/sqlx"
)

// Adopt wraps raw, a transaction begun elsewhere (by an ORM, a framework, a
// helper that takes a callback), so that events can be registered with it:
// Tx.Add, or the package-level Add with Tx.Context. The returned *Tx is used
// exactly like one from Begin, and Commit through it is the only path that
// writes the events: it flushes them into raw, commits raw and wakes the
// relay. ctx governs the flush as the Begin context does (if it is done
// before Commit, Commit rolls raw back) and is what Tx.Context carries.
//
// From then on raw must not be committed or rolled back directly: the
// *sql.Tx gives no hook, so a direct COMMIT commits the business change
// without the events. Where that cannot be avoided (a transaction manager
// that always commits itself), use NewCapture instead. Two misuses are
// detected: a Commit through the *Tx after raw was committed fails (the
// flush, or the COMMIT, reports sql.ErrTxDone); and when ctx ends while
// events are still buffered (the *Tx never committed nor rolled back), the
// loss is logged at error level on the Outbox's logger.
//
// raw and ctx must not be nil (ErrInvalidOption). Adopt sends no statement.
func (o *Outbox) Adopt(ctx context.Context, raw *sql.Tx, txOpts ...TxOption) (*Tx, error) {
	if ctx == nil {
		return nil, fmt.Errorf("%w: Adopt: nil context", ErrInvalidOption)
	}
	if raw == nil {
		return nil, fmt.Errorf("%w: Adopt: nil *sql.Tx", ErrInvalidOption)
	}
	t := o.wrap(ctx, raw, nil, txOpts)
	t.stop = context.AfterFunc(ctx, t.abandoned)
	return t, nil
}

// abandoned runs when an adopted transaction's context ends: events still
// buffered then will never be written by this *Tx.
func (t *Tx) abandoned() {
	if n := t.buf.pending(); n > 0 {
		t.buf.ob.cfg.logger.Error("txoutbox: the context of an adopted transaction ended before Commit or Rollback "+
			"through the *txoutbox.Tx; its events are not written (was the *sql.Tx committed directly?)",
			"events", n, "table", t.buf.ob.dialect.Table())
	}
}

// AdoptX is Adopt for a *sqlx.Tx begun elsewhere: the returned *TxX offers
// the sqlx.Tx method set on the same transaction. As with Adopt, raw must
// from then on be committed only through the *TxX.
func (o *OutboxX) AdoptX(ctx context.Context, raw *sqlx.Tx, txOpts ...TxOption) (*TxX, error) {
	if raw == nil || raw.Tx == nil {
		return nil, fmt.Errorf("%w: AdoptX: nil *sqlx.Tx", ErrInvalidOption)
	}
	t, err := o.Adopt(ctx, raw.Tx, txOpts...)
	if err != nil {
		return nil, err
	}
	return &TxX{Tx: t, x: raw}, nil
}
