package inbox

import (
	"embed"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/jitoutbox/jitoutbox/internal/migrate"
)

//go:embed sql
var sqlFiles embed.FS

// Dialect names the database an Inbox writes to.
type Dialect string

// The supported databases.
const (
	// Postgres is PostgreSQL (drivers lib/pq and pgx's stdlib).
	Postgres Dialect = "postgres"
	// MySQL is MySQL 8 or MariaDB 10.6+ (go-sql-driver/mysql).
	MySQL Dialect = "mysql"
	// SQLite is SQLite (modernc.org/sqlite). Open it with _txlock=immediate
	// and a busy timeout, as for the outbox, so that concurrent Handle calls
	// queue for the write lock instead of failing with SQLITE_BUSY.
	SQLite Dialect = "sqlite"
)

// statements are one dialect's SQL, rendered for one table prefix.
type statements struct {
	record, storedHash                   string
	orderEnsure, orderRead, orderAdvance string
	cleanupProcessed, cleanupAggregates  string
	migrateLock, migrateUnlock           string
	// migrator applies sql/<dialect>/migrations, the inbox's own line of
	// migrations, recorded in <prefix>_migrations.
	migrator migrate.Migrator
	// maxText is the longest aggregate type, aggregate id and event type
	// in characters the table holds (0: no limit).
	maxText int
	// time converts a time into the value the dialect stores.
	time func(time.Time) any
}

// loadStatements reads d's SQL files, with {{prefix}} replaced by the
// table prefix and {{name}} by its last part (for index names, which
// PostgreSQL does not let you qualify with a schema).
func loadStatements(d Dialect, prefix string) (*statements, error) {
	name := prefix[strings.LastIndexByte(prefix, '.')+1:]
	render := func(s string) string {
		return strings.NewReplacer("{{prefix}}", prefix, "{{name}}", name).Replace(s)
	}
	dir := path.Join("sql", string(d))
	var err error
	load := func(file string) string {
		b, rerr := sqlFiles.ReadFile(path.Join(dir, file))
		if rerr != nil {
			if err == nil {
				err = rerr
			}
			return ""
		}
		return stripComments(render(string(b)))
	}
	optional := func(file string) string {
		if _, serr := sqlFiles.Open(path.Join(dir, file)); serr != nil {
			return ""
		}
		return load(file)
	}
	st := &statements{
		record:            load("record.sql"),
		storedHash:        load("stored_hash.sql"),
		orderEnsure:       load("order_ensure.sql"),
		orderRead:         load("order_read.sql"),
		orderAdvance:      load("order_advance.sql"),
		cleanupProcessed:  load("cleanup_processed.sql"),
		cleanupAggregates: load("cleanup_aggregates.sql"),
		migrateLock:       optional("migrate_lock.sql"),
		migrateUnlock:     optional("migrate_unlock.sql"),
		time:              func(t time.Time) any { return t.UTC().Truncate(time.Microsecond) },
	}
	st.migrator = migrate.Migrator{
		CreateVersions: load("versions_create.sql"),
		ReadVersions:   load("versions_read.sql"),
		InsertVersion:  load("versions_insert.sql"),
		Name:           "inbox",
	}
	if err != nil {
		return nil, fmt.Errorf("inbox: %s: %w", d, err)
	}
	switch d {
	case MySQL:
		st.maxText = 255
	case SQLite:
		st.time = func(t time.Time) any { return t.UnixMicro() }
	}
	st.migrator.Time = st.time
	stripped := func(s string) string { return stripComments(render(s)) }
	if st.migrator.Migrations, err = migrate.Load(sqlFiles, path.Join(dir, "migrations"), stripped); err != nil {
		return nil, fmt.Errorf("inbox: %s: %w", d, err)
	}
	return st, nil
}

// stripComments drops the lines of s that are only an SQL comment, and
// surrounding space.
func stripComments(s string) string {
	var b strings.Builder
	for line := range strings.Lines(s) {
		if strings.HasPrefix(strings.TrimSpace(line), "--") {
			continue
		}
		b.WriteString(line)
	}
	return strings.TrimSpace(b.String())
}
