package dialects

import "errors"

// ErrDuplicateIdempotencyKey is returned (wrapped, together with the
// driver's unique-violation error) by Insert and InsertHandoff when an
// event's IdempotencyKey is already in the table, or twice in one batch:
// migration 003 makes idempotency_key unique per table wherever it is not
// NULL. Nothing of the batch is written; the caller's transaction must be
// rolled back (on PostgreSQL it is aborted anyway).
//
// Migrate returns it too (wrapped) when migration 003 finds rows of an
// existing table that share a key: the unique index cannot be built until
// they are resolved (see the error text), and the table stays at the
// previous version.
var ErrDuplicateIdempotencyKey = errors.New("dialects: duplicate idempotency key")
