package inbox

import (
	"context"
	"database/sql"
	"fmt"
	"hash/fnv"

	"github.com/jitoutbox/jitoutbox/internal/migrate"
)

// migrateWait is how long, in seconds, a MySQL Migrate waits for another
// Migrate's lock.
const migrateWait = 30

// Schema returns the DDL of every migration in order, statements separated
// by ";\n", for a migration tool of your own. Migrate applies the same
// statements and records them in <Table>_migrations.
func (in *Inbox) Schema() string { return in.st.migrator.Schema() }

// Migrate creates or upgrades the inbox's tables: it applies the numbered
// migrations the database lacks, in order, and records each in
// <Table>_migrations (the migrator of the outbox dialects, with the
// inbox's own line of migrations). Concurrent Migrate calls are
// serialised (PostgreSQL: an advisory lock, in one transaction with the
// DDL; MySQL: GET_LOCK on one connection, the DDL not being transactional
// there; SQLite: BEGIN IMMEDIATE). It is safe to call at every start.
func (in *Inbox) Migrate(ctx context.Context, db *sql.DB) error {
	m := &in.st.migrator
	switch in.cfg.Dialect {
	case Postgres:
		return m.RunInTx(ctx, db, in.st.migrateLock, int64(in.lockKey()))
	case MySQL:
		conn, err := db.Conn(ctx)
		if err != nil {
			return fmt.Errorf("inbox: migrate: %w", err)
		}
		defer conn.Close()
		lock := fmt.Sprintf("jitoutbox.inbox.%08x", in.lockKey())
		return m.RunNamedLock(ctx, conn, migrate.Stmt{SQL: in.st.migrateLock, Args: []any{lock, migrateWait}},
			migrate.Stmt{SQL: in.st.migrateUnlock, Args: []any{lock}}, migrateWait)
	default: // SQLite
		return m.RunImmediate(ctx, db)
	}
}

// lockKey identifies the table prefix in Migrate's lock: 31 bits of
// FNV-1a of "jitoutbox.inbox:" + prefix.
func (in *Inbox) lockKey() int32 {
	h := fnv.New32a()
	_, _ = h.Write([]byte("jitoutbox.inbox:" + in.cfg.Table))
	return int32(h.Sum32() & 0x7fffffff)
}
