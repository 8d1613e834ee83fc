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
// Claims lock the 'claim' row of <table>_locks (SELECT ... FOR UPDATE) in a
// READ COMMITTED transaction, then lease rows with one UPDATE ... FROM
// (SELECT ... FOR UPDATE SKIP LOCKED) RETURNING statement.
//
// Schema: Dialect.Schema returns the DDL (statements separated by ";\n") for
// your own migration tool; Dialect.Migrate applies the same text idempotently
// in one transaction under an advisory lock. The SQL lives in the package's
// sql/*.sql files. Table names may be schema-qualified ("app.outbox") and are
// used unquoted (folded to lower case).
package postgres
