// Package postgres is the PostgreSQL dialect of jitoutbox (dialects.Dialect):
// it owns the outbox's SQL on PostgreSQL (one statement per file in sql/),
// its numbered migrations and versioned functions, and the relays'
// ownership sessions (session advisory locks). It works with lib/pq (driver "postgres") and pgx's stdlib (driver "pgx")
// and imports neither: open the *sql.DB yourself. Arrays are bound as text
// literals cast in SQL, so no driver-specific array type is needed.
//
// JSON events (application/json, valid UTF-8) are stored in payload_json
// (type json: exact text, readable with plain SQL), all other payloads in
// payload (bytea). Event ids must be UUIDs. Text columns cannot hold NUL
// bytes or invalid UTF-8.
//
// Ownership: a relay session holds, on a connection of its own, an advisory
// lock per owned partition and a member lock for its row in <table>_relays;
// ownership lasts exactly as long as that connection, so use a pooler only
// in session mode, never transaction mode. The owner's token in
// <table>_partitions fences every mark and failure. Session.WaitChange waits
// on a second connection for the next relay's member lock; an opening
// session cancels those waits, so relays see a joiner at once and an idle
// relay sends no statement to watch. Sessions of many tables of one
// database may share one connection for their locks (a dialects.Locker,
// Dialect.OpenSessionOn): each table's locks are in its own namespaces.
//
// The relay reads and marks through the <table>_read_v5 and <table>_mark_v3
// functions, prepared once per connection: the read is planned to walk the
// pending rows in seq order even before statistics catch up, and marks
// commit without waiting for the WAL flush (a mark lost in a crash only
// means a duplicate publish).
//
// Clock: due times are the server's. Insert computes next_attempt_at (and a
// scheduled row's deliver_at) from now(), the transaction's start, never
// from the writer's clock; Dialect.Now reads clock_timestamp().
//
// Schema: numbered migrations in sql/migrations/ and versioned functions in
// sql/functions/; Dialect.Migrate applies both in one transaction under an
// advisory lock, and Dialect.Schema returns them (statements separated by
// ";\n") for your own migration tool. Table names may be schema-qualified
// ("app.outbox") and are used unquoted; the table's own name has at most
// MaxTableName (43) characters, so names derived from it fit PostgreSQL's
// 63-byte identifiers instead of being cut.
package postgres
