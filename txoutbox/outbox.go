package txoutbox

import (
	"context"
	"database/sql"
	"fmt"
	"sync/atomic"

	"github.com/google/uuid"

	"github.com/jitoutbox/jitoutbox/dialects"
)

// Outbox begins transactions that capture events. It is safe for concurrent
// use; create one per database, where the *sql.DB is opened.
type Outbox struct {
	db      *sql.DB
	dialect dialects.Dialect
	cfg     config
	parts   atomic.Int64 // the table's partition count, once read
}

// New returns an Outbox writing into dialect's table through db. The table
// must exist (see the dialect's Migrate or Schema).
func New(db *sql.DB, dialect dialects.Dialect, opts ...Option) (*Outbox, error) {
	if db == nil {
		return nil, fmt.Errorf("%w: nil *sql.DB", ErrInvalidOption)
	}
	if dialect == nil {
		return nil, fmt.Errorf("%w: nil dialect", ErrInvalidOption)
	}
	cfg := defaultConfig()
	for _, o := range opts {
		if o == nil {
			return nil, fmt.Errorf("%w: nil Option", ErrInvalidOption)
		}
		if err := o(&cfg); err != nil {
			return nil, err
		}
	}
	if r := cfg.relay; r != nil {
		if r.DB() != db {
			return nil, fmt.Errorf("%w: WithRelay: the relay reads another *sql.DB than the Outbox writes", ErrInvalidOption)
		}
		if r.Dialect().Name() != dialect.Name() || r.Dialect().Table() != dialect.Table() {
			return nil, fmt.Errorf("%w: WithRelay: the relay reads %s table %q, the Outbox writes %s table %q",
				ErrInvalidOption, r.Dialect().Name(), r.Dialect().Table(), dialect.Name(), dialect.Table())
		}
	}
	return &Outbox{db: db, dialect: dialect, cfg: cfg}, nil
}

// Dialect returns the dialect the Outbox writes with.
func (o *Outbox) Dialect() dialects.Dialect { return o.dialect }

// Begin starts a transaction, exactly like (*sql.DB).BeginTx(ctx, opts), that
// can also capture events. As with BeginTx, ctx governs the whole
// transaction: if it is cancelled before Commit, database/sql rolls the
// transaction back (Add and Commit then fail). Commit writes the buffered
// events using ctx.
func (o *Outbox) Begin(ctx context.Context, opts *sql.TxOptions, txOpts ...TxOption) (*Tx, error) {
	raw, err := o.db.BeginTx(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("txoutbox: begin: %w", err)
	}
	return o.wrap(ctx, raw, o.db, txOpts), nil
}

// wrap builds a Tx around a freshly begun raw transaction, begun on pool
// (nil when adopted: its pool is unknown).
func (o *Outbox) wrap(ctx context.Context, raw *sql.Tx, pool *sql.DB, txOpts []TxOption) *Tx {
	t := &Tx{raw: raw, pool: pool}
	t.buf.init(o, ctx, t, txOpts)
	return t
}

// Cancel cancels scheduled events (Event.NotBefore, Event.Delay) that are
// not yet due by the database's clock: their rows are deleted and nothing
// of them is published. It returns the ids it cancelled; an id left out
// was unknown, already due (the relay may be publishing it), published,
// dead or never scheduled. When no other scheduled event of the aggregate
// remains to be due, the later events of the aggregate that waited for the
// cancelled one are published at once; otherwise they keep waiting for the
// latest of those (docs/capture.md, "Scheduled events"). An id that is not
// an event id fails with an error matching ErrInvalidEventID and cancels
// nothing.
func (o *Outbox) Cancel(ctx context.Context, ids ...string) ([]string, error) {
	return cancelIn(ctx, o.dialect, o.db, ids)
}

// Cancel is Outbox.Cancel inside the transaction: the cancellation commits
// or rolls back with it, so an order cancelled in this transaction can
// cancel its reminder atomically.
func (t *Tx) Cancel(ids ...string) ([]string, error) {
	return cancelIn(t.buf.ctx, t.buf.ob.dialect, t.raw, ids)
}

func cancelIn(ctx context.Context, d dialects.Dialect, q dialects.Querier, ids []string) ([]string, error) {
	for _, id := range ids {
		if _, err := uuid.Parse(id); err != nil || len(id) != 36 {
			return nil, fmt.Errorf("%w: %q", ErrInvalidEventID, id)
		}
	}
	if len(ids) == 0 {
		return nil, nil
	}
	got, err := d.Cancel(ctx, q, ids)
	if err != nil {
		return nil, fmt.Errorf("txoutbox: cancel: %w", err)
	}
	return got, nil
}
