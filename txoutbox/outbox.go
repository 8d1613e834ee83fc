package txoutbox

import (
	"context"
	"database/sql"
	"fmt"
	"sync/atomic"

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
	return o.wrap(ctx, raw, txOpts), nil
}

// wrap builds a Tx around a freshly begun raw transaction.
func (o *Outbox) wrap(ctx context.Context, raw *sql.Tx, txOpts []TxOption) *Tx {
	t := &Tx{raw: raw}
	t.buf.init(o, ctx, t, txOpts)
	return t
}
