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
// A claim is one call of the <table>_claim function: it locks the 'claim'
// row of <table>_locks (SELECT ... FOR UPDATE), applies the per-aggregate
// hold-back to the first 2 x limit pending rows in one pass, and leases the
// picks with UPDATE ... FROM (SELECT ... FOR UPDATE SKIP LOCKED) RETURNING,
// scanning on past that look only when it leased too few. Marks and deletes
// are one call of <table>_mark. Both are prepared once per connection and
// commit without waiting for the WAL flush (a lease or mark lost in a server
// crash only means a later, duplicate publish).
//
// Schema: Dialect.Schema returns the DDL (statements separated by ";\n") for
// your own migration tool; Dialect.Migrate applies the same text idempotently
// in one transaction under an advisory lock. The SQL lives in the package's
// sql/*.sql files. Table names may be schema-qualified ("app.outbox") and are
// used unquoted (folded to lower case).
package postgres
