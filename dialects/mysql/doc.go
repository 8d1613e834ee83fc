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
// Claims run in a READ COMMITTED transaction: lock the 'claim' row of
// <table>_locks (SELECT ... FOR UPDATE), select candidate seqs from the
// latest committed data, UPDATE ... WHERE seq IN (...) for those still
// claimable, and read them back (MySQL cannot update a table it selects from
// in a subquery, error 1093). A scan claim picks its candidates from the
// keys of the first 2 x limit pending rows, applying the per-aggregate
// hold-back in one pass in Go (a correlated NOT EXISTS per candidate costs
// MariaDB a scan of the candidate's whole aggregate); only when that window
// is full and yields nothing does it run the full candidate query, so a
// scan claim may return a short batch while more rows are claimable.
//
// Schema: Dialect.Schema returns the DDL (statements separated by ";\n") for
// your own migration tool; Dialect.Migrate applies the same text. Indexes are
// declared inside CREATE TABLE IF NOT EXISTS, so the schema is idempotent on
// MySQL 8 (which lacks CREATE INDEX IF NOT EXISTS) and MariaDB alike. The SQL
// lives in the package's sql/*.sql files.
package mysql
