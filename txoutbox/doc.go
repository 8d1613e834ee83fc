// Package txoutbox captures domain events inside the caller's database
// transaction, so that a business change and the events describing it are
// committed together or not at all (the transactional outbox pattern).
//
// Setup, once, where the service opens its database:
//
//	ob, err := txoutbox.New(db, dialect, txoutbox.WithNotifier(sig))
//
// The one-line swap — where the code said db.BeginTx(ctx, opts):
//
//	tx, err := ob.Begin(ctx, opts)
//	if err != nil { ... }
//	defer tx.Rollback()
//	if _, err := tx.ExecContext(ctx, "UPDATE orders SET ..."); err != nil { ... }
//	if _, err := tx.Add(txoutbox.Event{AggregateType: "order", AggregateID: "42",
//		EventType: "order.placed", Payload: body}); err != nil { ... }
//	return tx.Commit()
//
// A *Tx offers the method set of *sql.Tx (by delegation; the underlying
// *sql.Tx of a Begin is never exposed, so it cannot be committed behind the
// outbox's back). Add validates the event (names, headers, the payload's and
// the headers' size: a refused event returns a *ValidationError, nothing is
// buffered and the transaction stays usable), assigns its id (a UUIDv7) and
// creation time and buffers it in memory; nothing is sent to the database until Commit,
// which writes all buffered events with the dialect's multi-row INSERT right
// before COMMIT. A transaction without events costs no extra statement. If
// writing the events fails, the whole transaction is rolled back and Commit
// returns an error matching both ErrFlush and the cause.
//
// Code deeper in the call stack can register events without a *Tx parameter:
// put the transaction into the context with NewContext (or use Tx.Context) and
// call the package-level Add.
//
// A transaction is time-critical when it was begun with TimeCritical() or
// when any of its events has Event.TimeCritical set. After such a transaction
// commits successfully, the relay wired with WithRelay is handed the rows of
// the partitions it owns, in memory, and the Notifier of WithNotifier is
// told exactly once for the other partitions' relays, so a relay can publish
// at once instead of at its next poll. Nothing is handed over or notified
// after a rollback, a failed flush or a failed commit.
//
// The sqlx flavour (NewX, OutboxX, TxX) offers the same over *sqlx.DB and the
// sqlx.Tx method set.
//
// # Idempotency keys
//
// Event.IdempotencyKey is unique per outbox table where it is set (schema
// migration 003). A Commit whose event has a key already in the table fails
// with a *FlushError matching ErrDuplicateIdempotencyKey: the transaction is
// rolled back and neither the business change nor the event commits. An
// error, rather than dropping the event and committing the rest, because a
// business change committed without its event breaks the outbox's one
// promise, and because a key that is already there says the operation was
// done before: the caller should answer "already done", not do it twice.
// Concurrent transactions with one key are ordered by the database: the
// second waits, and fails only if the first commits.
//
// # Transactions begun elsewhere
//
// Adopt (AdoptX for sqlx) wraps a *sql.Tx begun by other code; events are
// written when Commit is called through the returned *Tx, which is the only
// path that writes them (a *sql.Tx committed directly loses them; see Adopt
// for what is detected). For a transaction manager that calls the raw COMMIT
// itself, NewCapture returns a Capture: WriteTo writes the events inside the
// manager's transaction, Committed wakes the relay after its COMMIT. *Tx
// satisfies the DBTX interface of sqlc-generated code (ExecContext,
// PrepareContext, QueryContext, QueryRowContext). The package-level Add
// works with all of them through their Context.
//
// # Wakes of ordinary commits
//
// By default an ordinary commit gives the relay a lazy wake; WithoutLazyWake
// leaves such rows to the relays' poll, so that only time-critical commits
// cause reads.
package txoutbox
