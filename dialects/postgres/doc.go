// Package postgres is the PostgreSQL dialect of jitoutbox (dialects.Dialect).
// It works with lib/pq (driver "postgres") and pgx's stdlib (driver "pgx")
// and imports neither: open the *sql.DB yourself. Arrays are bound as text
// literals cast in SQL, so no driver-specific array type is needed.
//
// JSON events (content type application/json whose payload is valid UTF-8
// JSON) are stored in the payload_json column (type json, exact text kept,
// readable with plain SQL); all other payloads, including empty ones, in
// payload (bytea). Event ids must be UUIDs (column type uuid). Text columns
// cannot hold NUL bytes or invalid UTF-8 (a PostgreSQL rule).
//
// Ownership: a relay session holds, on a connection of its own, an
// advisory lock per owned partition (namespace: a hash of the table name)
// and a member lock naming its row in <table>_relays; ownership lasts
// exactly as long as that connection, so run relays directly against
// PostgreSQL or through a pooler in session mode, never transaction mode.
// The owner's token in <table>_partitions fences every mark and failure.
// A second connection per relay waits (Session.WaitChange) on the member
// lock of the next relay, or of its own session when alone; a session that
// opens cancels those waits (pg_cancel_backend), so relays see a joiner at
// once, and an idle relay sends no statement to watch.
//
// A read is one call of the <table>_read_v2 function: a plain SELECT that
// walks the pending rows in seq order (claim_idx) keeping the relay's
// partitions and leaving out blocked aggregates, planned that way even
// before statistics catch up with a fresh backlog. Marks and deletes are one
// call of <table>_mark_v2. Both are prepared once per connection; marks commit
// without waiting for the WAL flush (a mark lost in a server crash only
// means a later, duplicate publish).
//
// Schema: numbered migrations in sql/migrations/, recorded in
// <table>_migrations, and the functions relays call in sql/functions/,
// under versioned names (<table>_read_v2); Dialect.Migrate applies the
// missing migrations and installs the functions in one transaction under
// an advisory lock, and Dialect.Schema returns both (statements separated
// by ";\n") for your own migration tool. The other
// SQL lives in the package's sql/*.sql files, one statement each. Table names may be schema-qualified ("app.outbox") and are
// used unquoted (folded to lower case); the table's own name has at most
// MaxTableName (43) characters, so that every index and side-table name
// derived from it fits PostgreSQL's 63-byte identifiers instead of being cut.
package postgres
