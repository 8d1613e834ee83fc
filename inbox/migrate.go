package inbox

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"hash/fnv"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"
)

// migrateWait is how long, in seconds, a MySQL Migrate waits for another
// Migrate's lock.
const migrateWait = 30

// migration is one numbered file, NNN_name.sql, of sql/<dialect>/migrations.
type migration struct {
	version int
	name    string
	text    string // rendered, comments kept (for Schema)
}

// statements splits the migration into statements separated by ";\n",
// comment-only lines dropped.
func (m migration) statements() []string {
	var out []string
	for s := range strings.SplitSeq(m.text, ";\n") {
		if s = stripComments(s); s != "" {
			out = append(out, strings.TrimSuffix(s, ";"))
		}
	}
	return out
}

// loadMigrations reads dir/migrations in version order; versions must run
// 1, 2, 3... without gaps.
func loadMigrations(dir string, render func(string) string) ([]migration, error) {
	mdir := path.Join(dir, "migrations")
	entries, err := fs.ReadDir(sqlFiles, mdir)
	if err != nil {
		return nil, err
	}
	var out []migration
	for _, e := range entries {
		num, rest, ok := strings.Cut(e.Name(), "_")
		if !ok || !strings.HasSuffix(rest, ".sql") {
			continue
		}
		v, err := strconv.Atoi(num)
		if err != nil {
			return nil, fmt.Errorf("migration %s: version %q is not a number", e.Name(), num)
		}
		b, err := fs.ReadFile(sqlFiles, path.Join(mdir, e.Name()))
		if err != nil {
			return nil, err
		}
		out = append(out, migration{version: v, name: strings.TrimSuffix(rest, ".sql"), text: render(string(b))})
	}
	slices.SortFunc(out, func(a, b migration) int { return a.version - b.version })
	for i, m := range out {
		if m.version != i+1 {
			return nil, fmt.Errorf("migration versions must run 1, 2, 3...: found %d at position %d", m.version, i+1)
		}
	}
	return out, nil
}

// Schema returns the DDL of every migration in order, statements separated
// by ";\n", for a migration tool of your own. Migrate applies the same
// statements and records them in <Table>_migrations.
func (in *Inbox) Schema() string {
	var parts []string
	for _, m := range in.st.migrations {
		parts = append(parts, strings.TrimRight(strings.TrimSpace(m.text), ";"))
	}
	return strings.Join(parts, ";\n") + ";\n"
}

// querier is what the migrator runs statements on: a *sql.Tx or *sql.Conn.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// Migrate creates or upgrades the inbox's tables: it applies the numbered
// migrations the database lacks, in order, and records each in
// <Table>_migrations. Concurrent Migrate calls are serialised (PostgreSQL:
// an advisory lock, in one transaction with the DDL; MySQL: GET_LOCK on
// one connection, the DDL not being transactional there; SQLite: BEGIN
// IMMEDIATE). It is safe to call at every start.
func (in *Inbox) Migrate(ctx context.Context, db *sql.DB) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("inbox: migrate: %w", err)
	}
	defer conn.Close()
	switch in.cfg.Dialect {
	case Postgres:
		tx, err := conn.BeginTx(ctx, nil)
		if err != nil {
			return fmt.Errorf("inbox: migrate: begin: %w", err)
		}
		defer func() { _ = tx.Rollback() }()
		if _, err := tx.ExecContext(ctx, in.st.migrateLock, int64(in.lockKey())); err != nil {
			return fmt.Errorf("inbox: migrate: lock: %w", err)
		}
		if err := in.runMigrations(ctx, tx); err != nil {
			return err
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("inbox: migrate: commit: %w", err)
		}
		return nil
	case MySQL:
		lock := fmt.Sprintf("jitoutbox.inbox.%08x", in.lockKey())
		var got sql.NullInt64
		if err := conn.QueryRowContext(ctx, in.st.migrateLock, lock, migrateWait).Scan(&got); err != nil {
			discard(conn) // the lock may have been granted before the error
			return fmt.Errorf("inbox: migrate: lock: %w", err)
		}
		if got.Int64 != 1 {
			return fmt.Errorf("inbox: migrate: another Migrate held the lock for %d s", migrateWait)
		}
		defer func() {
			var ok sql.NullInt64
			if err := conn.QueryRowContext(context.WithoutCancel(ctx), in.st.migrateUnlock, lock).Scan(&ok); err != nil {
				discard(conn)
			}
		}()
		return in.runMigrations(ctx, conn)
	default: // SQLite
		if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
			return fmt.Errorf("inbox: migrate: begin: %w", err)
		}
		if err := in.runMigrations(ctx, conn); err != nil {
			if _, rerr := conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK"); rerr != nil {
				discard(conn)
			}
			return err
		}
		if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
			discard(conn)
			return fmt.Errorf("inbox: migrate: commit: %w", err)
		}
		return nil
	}
}

// discard drops conn from the pool instead of returning it in an unknown
// state (a lock held, a transaction open).
func discard(conn *sql.Conn) { _ = conn.Raw(func(any) error { return driver.ErrBadConn }) }

// lockKey identifies the table prefix in Migrate's lock: 31 bits of
// FNV-1a of "jitoutbox.inbox:" + prefix.
func (in *Inbox) lockKey() int32 {
	h := fnv.New32a()
	_, _ = h.Write([]byte("jitoutbox.inbox:" + in.cfg.Table))
	return int32(h.Sum32() & 0x7fffffff)
}

// runMigrations applies the migrations q's database lacks.
func (in *Inbox) runMigrations(ctx context.Context, q querier) error {
	if _, err := q.ExecContext(ctx, in.st.versionsCreate); err != nil {
		return fmt.Errorf("inbox: migrate: create version table: %w", err)
	}
	applied, err := readVersions(ctx, q, in.st.versionsRead)
	if err != nil {
		return fmt.Errorf("inbox: migrate: read versions: %w", err)
	}
	for _, m := range in.st.migrations {
		if applied[m.version] {
			continue
		}
		for _, stmt := range m.statements() {
			if _, err := q.ExecContext(ctx, stmt); err != nil {
				return fmt.Errorf("inbox: migrate %03d_%s: %w", m.version, m.name, err)
			}
		}
		if _, err := q.ExecContext(ctx, in.st.versionsInsert, m.version, m.name, in.st.time(time.Now())); err != nil {
			return fmt.Errorf("inbox: migrate: record version %d: %w", m.version, err)
		}
	}
	return nil
}

func readVersions(ctx context.Context, q querier, query string) (map[int]bool, error) {
	rows, err := q.QueryContext(ctx, query)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make(map[int]bool)
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out[v] = true
	}
	return out, rows.Err()
}
