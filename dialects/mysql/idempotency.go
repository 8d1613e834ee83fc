package mysql

import (
	"context"
	"strings"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/dialects/internal/sqlkit"
)

// Insert writes events with as few multi-row INSERTs as the parameter
// limit allows, in slice order. An event whose idempotency key is already
// in the table fails the statement with an error matching
// dialects.ErrDuplicateIdempotencyKey (and the driver's error).
func (d *Dialect) Insert(ctx context.Context, q dialects.Execer, events []dialects.Event) error {
	return sqlkit.DuplicateKey(d.insertEvents(ctx, q, events), d.isDuplicateKey)
}

// InsertHandoff writes events like Insert and returns those that may be
// handed over; see dialects.Dialect. A duplicate idempotency key fails it
// as it fails Insert.
func (d *Dialect) InsertHandoff(ctx context.Context, q dialects.Querier, events []dialects.Event) ([]dialects.Record, error) {
	recs, err := d.insertHandoff(ctx, q, events)
	return recs, sqlkit.DuplicateKey(err, d.isDuplicateKey)
}

// isDuplicateKey reports error 1062 (duplicate entry) on the idempotency key
// index, which the message names (MySQL 8 as table.index, MariaDB as
// index).
func (d *Dialect) isDuplicateKey(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "Error 1062") && strings.Contains(msg, sqlkit.IdempotencyIndex(d.name()))
}

// name is the table name without its schema.
func (d *Dialect) name() string {
	if i := strings.LastIndexByte(d.table, '.'); i >= 0 {
		return d.table[i+1:]
	}
	return d.table
}

// checkIdempotencyKeys is migration 003's Go step (see
// sqlkit.CheckIdempotencyKeys).
func (d *Dialect) checkIdempotencyKeys(ctx context.Context, q dialects.Querier) error {
	return sqlkit.CheckIdempotencyKeys(ctx, q, d.table, d.dupKeys)
}
