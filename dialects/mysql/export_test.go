package mysql

import (
	"context"
	"database/sql"

	"github.com/jitoutbox/jitoutbox/dialects"

	"github.com/jitoutbox/jitoutbox/internal/migrate"
)

// LockPrefix exposes the GET_LOCK name prefix of d's table in q's
// database to the package's external tests.
func LockPrefix(ctx context.Context, d *Dialect, q dialects.Querier) (string, error) {
	return d.lockPrefix(ctx, q)
}

// MigrateTo applies d's migrations up to version, as Migrate does: the
// schema of an earlier release, for upgrade tests with data in the table.
func MigrateTo(ctx context.Context, d *Dialect, db *sql.DB, version int) error {
	return migrateWith(ctx, d, db, d.migrator.Upto(version))
}

// MigrateNamed applies d's migrations named names, in that order, recorded
// as versions 1, 2, 3...: a table migrated by code of an earlier numbering.
func MigrateNamed(ctx context.Context, d *Dialect, db *sql.DB, names ...string) error {
	m, err := d.migrator.Renumbered(names...)
	if err != nil {
		return err
	}
	return migrateWith(ctx, d, db, m)
}

// migrateWith runs d's Migrate with m as its migrator.
func migrateWith(ctx context.Context, d *Dialect, db *sql.DB, m migrate.Migrator) error {
	saved := d.migrator
	defer func() { d.migrator = saved }()
	d.migrator = m
	return d.Migrate(ctx, db)
}

// Bind returns d's statement file (sql/<file>) as it runs, its arguments
// bound by name.
func Bind(d *Dialect, file string, args ...sql.NamedArg) (string, []any, error) {
	q, err := d.st.Query(file)
	if err != nil {
		return "", nil, err
	}
	return q.Bind(args...)
}
