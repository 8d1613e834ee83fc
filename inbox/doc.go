// Package inbox is the consuming end of jitoutbox: it applies each event
// once. At-least-once delivery means a consumer sees an event again after a
// redelivery (a lost ack, a consumer restart) or a republish (the relay
// crashed between publishing and marking). An Inbox records the event id
// in the consumer's own database, in the same transaction as the event's
// side effect, so that the second delivery finds the id and is skipped:
//
//	in, err := inbox.New(inbox.Config{Dialect: inbox.Postgres})
//	...
//	err = in.Migrate(ctx, db) // creates inbox_processed, inbox_aggregates, inbox_migrations
//	...
//	res, err := in.Handle(ctx, db, natssub.JetStream(msg), func(ctx context.Context, tx *sql.Tx) error {
//		_, err := tx.ExecContext(ctx, "UPDATE ...") // the side effect
//		return err
//	})
//	switch {
//	case err == nil: // Applied, Duplicate or Skipped: ack
//	case errors.Is(err, inbox.ErrNoEventID), errors.Is(err, inbox.ErrBadEventID),
//		errors.Is(err, inbox.ErrBadMessage), errors.Is(err, inbox.ErrPayloadMismatch):
//		// redelivery cannot help: dead-letter or terminate
//	default: // the database or the side effect failed: nak, retry later
//	}
//
// Handle begins and commits the transaction itself, so a refused message
// can never be committed half-applied. HandleTx runs in a transaction the
// caller owns, under a savepoint it rolls back on every failure and on a
// duplicate.
//
// # Messages
//
// Message is broker-neutral: event id, aggregate type and id, event type,
// seq, payload, headers. The adapters build it from what jitoutbox's
// publishers send: inbox/natssub (NATS core and JetStream),
// inbox/rabbitsub (RabbitMQ) and inbox/kafkasub (Kafka). They read the
// Jitoutbox-* headers and, when those are missing or when asked to, the
// shape of Debezium's outbox event router (the "id" and "eventType"
// headers, the subject or topic outbox.event.<aggregate type>, the Kafka
// key as aggregate id). A payload the producer encrypted or compressed
// (package codec) is decoded with Message.Decode before Handle.
//
// # Duplicates
//
// The processed table's primary key is the event id. An INSERT that does
// nothing on conflict (PostgreSQL, SQLite: ON CONFLICT DO NOTHING; MySQL:
// INSERT IGNORE, after Handle has refused what IGNORE would otherwise
// truncate) decides first delivery against duplicate inside the
// transaction: a concurrent delivery of the same id waits for the first
// transaction and is a Duplicate if it committed. The payload's SHA-256 is
// recorded with the id; a later delivery with the same id and another
// payload is refused with ErrPayloadMismatch rather than skipped.
//
// # Retention
//
// Cleanup deletes ids older than Config.Retention (default 7 days) in
// batches. The check is one primary-key probe whatever the table's size;
// Retention bounds the size. An event delivered again after its id was
// deleted is applied again, so Retention must exceed the redelivery
// horizon of the broker.
//
// # Order
//
// With Config.OnOutOfOrder set, Handle keeps the last applied seq (the
// outbox row's seq, sent by the relay in the Jitoutbox-Seq header) per
// aggregate, and an event with a lower seq is handed to the callback,
// which decides: Reject (the default: an *OutOfOrderError, nothing
// recorded), Skip (recorded, not applied) or Apply.
//
// # Databases
//
// PostgreSQL, MySQL 8 / MariaDB 10.6+ and SQLite, each with its SQL in
// sql/<dialect>/*.sql and its numbered migrations in
// sql/<dialect>/migrations, recorded in <Table>_migrations: a second line
// of migrations, applied by the outbox dialects' migrator (one numbering
// across the databases, as theirs). Schema returns the DDL for a
// migration tool of your own.
package inbox
