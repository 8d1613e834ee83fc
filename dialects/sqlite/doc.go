// Package sqlite is the SQLite dialect of jitoutbox (dialects.Dialect): it
// owns the outbox's SQL there (one statement per file in sql/), its numbered
// migrations and the relays' ownership leases. It is tested with modernc.org/sqlite (driver name "sqlite"). It imports no
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
// transaction at a time, and a writer that finds the database locked sleeps
// in its busy handler while others take the lock again: with many
// connections under load some writers starve, the relay's marks among them,
// and time-critical events wait for seconds (bench/README.md).
//
// Times are stored as INTEGER unix microseconds (UTC); read them with
// datetime(col / 1000000, 'unixepoch'). Schema-qualified table names are
// not supported.
//
// Partitions: SQLite has no session-scoped locks, so a relay's ownership of
// a partition is a lease in <table>_partitions that Session.Check renews; a
// relay that stops renewing loses its partitions when the lease runs out,
// and must stop publishing past the time Check returns. Marks and failures
// are fenced by the partition's owner. Session.WaitChange stats the
// database file (and its WAL) four times a second and reads the live
// relays only after another connection wrote, so relays see a change
// within a second and an idle relay sends no statement to watch.
//
// Schema: Dialect.Schema returns the DDL of every numbered migration
// (sql/migrations, statements separated by ";\n"); Dialect.Migrate applies
// the missing ones in one BEGIN IMMEDIATE transaction. Migration 002
// rebuilds the outbox table (SQLite cannot drop a column default): upgrade
// a table that has rows with Migrate, which also sets the partition of its
// pending and dead rows.
//
// Clock: SQLite is embedded, so the database's clock is the process's.
// Insert computes due times (next_attempt_at, and deliver_at = the later
// of NotBefore and now + Delay for a scheduled event) in Go from it, and
// Dialect.Now returns it; Stats counts the scheduled rows not yet due by it.
package sqlite
