package postgres

import (
	"context"
	"database/sql"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/internal/migrate"
)

// MemberNamespace exposes the relay sessions' advisory lock namespace of
// d's table to the package's external tests (KillSession finds a session's
// backend by its member lock).
func MemberNamespace(ctx context.Context, d *Dialect, q dialects.Querier) (int32, error) {
	_, member, err := d.lockNamespaces(ctx, q)
	return member, err
}

// LockNamespaces exposes the advisory lock namespaces of d's table (its
// partitions', its relay sessions') to the package's external tests.
func LockNamespaces(ctx context.Context, d *Dialect, q dialects.Querier) (part, member int32, err error) {
	return d.lockNamespaces(ctx, q)
}

// MigrateTo applies d's migrations up to version, as Migrate does: the
// schema of an earlier release, for upgrade tests with data in the table.
func MigrateTo(ctx context.Context, d *Dialect, db *sql.DB, version int) error {
	return migrateWith(ctx, d, db, d.migrator.Upto(version))
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

// InstallFunctions installs the functions relays of this version call, as
// Migrate does after the migrations, whatever the table's version.
func InstallFunctions(ctx context.Context, d *Dialect, db *sql.DB) error {
	for _, f := range d.migrator.Functions {
		if _, err := db.ExecContext(ctx, f); err != nil {
			return err
		}
	}
	return nil
}
