// Package sqlite is the SQLite dialect of jitoutbox (dialects.Dialect),
// tested with modernc.org/sqlite (driver name "sqlite"). It imports no
// driver: open the *sql.DB yourself.
//
// DSN: use WAL, a busy timeout and immediate write transactions, e.g.
//
//	file:/path/app.db?_pragma=journal_mode(WAL)&_pragma=busy_timeout(10000)&_pragma=synchronous(NORMAL)&_txlock=immediate
//
// Without _txlock=immediate a transaction that reads before it writes can
// fail with SQLITE_BUSY under concurrency; without busy_timeout concurrent
// writers fail at once instead of waiting.
//
// Pool: give the *sql.DB at most MaxOpenConns connections
// (db.SetMaxOpenConns(sqlite.MaxOpenConns)). SQLite runs one write
// transaction at a time, and a writer that finds the database locked
// sleeps in its busy handler (1 ms, growing to 100 ms a try) while writers
// on other connections take the lock again; with many connections under
// load some writers starve, the relay's marks among them, and time-critical
// events wait for seconds instead of milliseconds (bench/README.md).
//
// Times are stored as INTEGER unix microseconds (UTC) so that they sort and
// compare as numbers; read them with datetime(col / 1000000, 'unixepoch').
// Schema-qualified table names are not supported.
//
// Partitions: every row carries the partition of its aggregate, and relays
// own partitions. SQLite has no session-scoped locks, so ownership is a
// lease: a session (OpenSession) registers in <table>_relays and takes
// partitions in <table>_partitions for the lease it was opened with, and
// Session.Check renews them all. A relay that stops renewing (killed, or
// starved) loses its partitions when the lease runs out, and the relay
// must stop publishing past the time Check returns. Session.WaitChange
// looks four times a second at the database file's size and modification
// time (and its WAL's) and reads the live relays after another connection
// wrote (at most once a second): relays see a joiner or a relay that
// closed within a second, and an idle relay sends no statement to watch
// (an in-memory database, which has no file, reads the relays every
// second). Marks and failures are fenced by the partition's
// owner. The relay's read is one plain SELECT that walks the pending rows
// in seq order; blocked aggregates are kept in <table>_blocked.
//
// Schema: Dialect.Schema returns the DDL of every numbered migration
// (sql/migrations, statements separated by ";\n") for your own migration
// tool on a new database; Dialect.Migrate applies the migrations a database
// lacks in one BEGIN IMMEDIATE transaction and records them in
// <table>_migrations. Migration 002 rebuilds the outbox table (SQLite
// cannot drop a column default): upgrade a table that has rows with
// Migrate, which also sets the partition of its pending and dead rows. The
// SQL lives in the package's sql/*.sql files.
package sqlite
