// Package mysql is the MySQL 8 / MariaDB 10.6+ dialect of jitoutbox
// (dialects.Dialect): it owns the outbox's SQL there (one statement per file
// in sql/), its numbered migrations and the relays' ownership sessions
// (GET_LOCK). It is tested with github.com/go-sql-driver/mysql, which it
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
// Prepared statements: the driver runs a statement with arguments as a
// prepare, an execute and a close unless the DSN sets interpolateParams.
// The relay's reads and marks (a mark's list padded to a power of two),
// and the inserts of transactions begun by txoutbox's Begin (passed as a
// dialects.PooledTx) of at most 4 events, run through statements kept
// prepared on each connection instead: one round trip each. Per table, a
// pool connection keeps up to 12 insert and 15 mark statements besides the
// reads; count them against the server's max_prepared_stmt_count.
//
// Clock: due times are the server's. Insert computes next_attempt_at (and a
// scheduled row's deliver_at) from UTC_TIMESTAMP(6), never from the
// writer's clock, which is why loc must be UTC; Dialect.Now reads it.
//
// Partitions: every row carries the partition of its aggregate. A relay's
// session holds a dedicated connection with a GET_LOCK lock per owned
// partition and a member lock for itself; the locks die with the
// connection, so a killed relay's partitions are free once the server sees
// it close, and an idle relay writes nothing. Session.WaitChange waits in
// GET_LOCK on a second connection for the next relay's member lock; an
// opening session interrupts those waits (KILL QUERY), so relays see a
// joiner at once. Lock names are server-wide, so they hash the database and
// table name. Run relays against the server directly or through a proxy
// that keeps one server connection per client connection. Marks and
// failures are fenced by the session's token in the partitions table.
// Sessions of many tables of one database may share one connection for
// their locks (a dialects.Locker, Dialect.OpenSessionOn).
//
// The in-memory hand-over (InsertHandoff) reads first which aggregates have
// a pending row or block; the seq of a single event is the INSERT's last
// insert id, and of several MariaDB returns them with INSERT ... RETURNING,
// MySQL 8 reads them back by id. Until Partitions (which Migrate calls)
// tells the server apart, the dialect takes the MySQL path, correct on
// both.
//
// Schema: Dialect.Schema returns the DDL of every numbered migration
// (sql/migrations), statements separated by ";\n"; run it on one
// connection (migration 002 keeps conditional DDL in session variables).
// Dialect.Migrate applies the missing migrations on one connection under a
// GET_LOCK lock; every statement is idempotent, as MySQL commits DDL at once
// and a migration cut short runs again. Upgrade a table that has rows with
// Migrate: migration 002 sets the partition of pending and dead rows in Go.
// The table's own name has at most MaxTableName (44) characters, so derived
// names fit the 64-character identifier limit.
//
// Migration 006 makes headers LONGTEXT (a server not in strict mode cut
// TEXT headers into invalid JSON, which reads report as dialects.RowError)
// and adds a CHECK that the partition is in [0, P), copying the table once
// (writes wait). MySQL 8 stops on an existing row outside [0, P): fix or
// delete it and run Migrate again; MariaDB keeps such rows and Stats counts
// them.
package mysql
