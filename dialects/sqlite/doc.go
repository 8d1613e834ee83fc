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
// Times are stored as INTEGER unix microseconds (UTC) so that they sort and
// compare as numbers; read them with datetime(col / 1000000, 'unixepoch').
// Claims are one UPDATE ... RETURNING statement (SQLite 3.35+); SQLite's single
// writer serialises them. Schema-qualified table names are not supported.
//
// Schema: Dialect.Schema returns the DDL (statements separated by ";\n") for
// your own migration tool; Dialect.Migrate applies the same text idempotently.
// The SQL lives in the package's sql/*.sql files.
package sqlite
