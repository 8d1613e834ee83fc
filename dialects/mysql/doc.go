// Package mysql is the MySQL 8 / MariaDB 10.6+ dialect of jitoutbox
// (dialects.Dialect), tested with github.com/go-sql-driver/mysql, which it
// does not import: open the *sql.DB yourself.
//
// DSN: use parseTime=true and loc=UTC (the default loc), e.g.
//
//	user:pass@tcp(host:3306)/app?parseTime=true
//
// Times are DATETIME(6) written in the driver's loc; without parseTime=true
// the dialect still reads DATETIME text correctly (as UTC), but other code
// sharing the pool usually expects time.Time. Aggregate ids, event types and
// idempotency keys are VARCHAR(255); payloads LONGBLOB (large payloads are
// bounded by the server's max_allowed_packet).
//
// Partitions: every row carries the partition of its aggregate. A relay's
// session (OpenSession) holds a dedicated connection with a GET_LOCK lock
// per owned partition and one member lock for the session itself; the locks
// die with the connection, so a killed relay's partitions are free as soon
// as the server sees its connection close, and an idle relay writes
// nothing. A second connection per relay waits (Session.WaitChange) in
// GET_LOCK on the member lock of the next relay, or of its own session
// when alone; a session that opens interrupts those waits (KILL QUERY), so
// relays see a joiner at once. Lock names are server-wide: they hash the database and table
// name ("jitoutbox.<namespace>.p<partition>"). Run relays against the server
// directly or through a proxy that keeps one server connection per client
// connection. A relay reads its partitions' pending rows with a plain
// SELECT in seq order; marks and failures are fenced by joining the
// partitions table on the session's token.
//
// The in-memory hand-over (InsertHandoff) reads, before its INSERT, which
// of the events' aggregates have a pending row or a block; on MariaDB the
// INSERT returns the seqs (INSERT ... RETURNING), on MySQL 8 they are read
// back by id in the same transaction. Which server it is, the dialect
// learns from Partitions (which Migrate calls); until then it takes the
// MySQL path, which is correct on both.
//
// Schema: Dialect.Schema returns the DDL of every numbered migration
// (sql/migrations), statements separated by ";\n", for your own migration
// tool; run it on one connection (migration 002 keeps conditional DDL in
// session variables, MySQL 8 lacking ADD COLUMN IF NOT EXISTS).
// Dialect.Migrate applies the missing migrations on one connection under a
// GET_LOCK lock and records them in <table>_migrations; every statement is
// idempotent, as MySQL commits DDL at once and a migration cut short runs
// again. Upgrade a table that has rows with Migrate: migration 002 sets the
// partition of pending and dead rows in Go. The SQL lives in the package's
// sql/*.sql files. The table's own name has at most MaxTableName (44)
// characters, so that every index, constraint and side-table name derived
// from it fits the 64-character identifier limit.
//
// Headers are LONGTEXT since migration 006 (TEXT before: a server not in
// strict mode cut headers past 65,535 bytes into invalid JSON, which reads
// report as a bad row, dialects.RowError). Migration 006 copies the table
// once (ALGORITHM=COPY: writes wait for it) and adds a CHECK that the
// partition is in [0, P); on MySQL 8 it stops on an existing row outside
// it (MariaDB keeps such rows unchecked; Stats counts them).
package mysql
