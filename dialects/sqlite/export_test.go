package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"slices"

	"github.com/jitoutbox/jitoutbox/internal/migrate"
)

// MigrateTo applies d's migrations up to version, as Migrate does: the
// schema of an earlier release, for upgrade tests with data in the table.
func MigrateTo(ctx context.Context, d *Dialect, db *sql.DB, version int) error {
	saved := d.migrator
	defer func() { d.migrator = saved }()
	d.migrator.Migrations = saved.Migrations[:version]
	d.migrator.Functions = nil // those of this version, installed after its migrations
	return d.Migrate(ctx, db)
}

// MigrateNamed applies d's migrations named names, in that order, recorded
// as versions 1, 2, 3...: a table migrated by code of an earlier numbering.
func MigrateNamed(ctx context.Context, d *Dialect, db *sql.DB, names ...string) error {
	saved := d.migrator
	defer func() { d.migrator = saved }()
	d.migrator.Migrations = nil
	d.migrator.Functions = nil
	for i, name := range names {
		j := slices.IndexFunc(saved.Migrations, func(m migrate.Migration) bool { return m.Name == name })
		if j < 0 {
			return fmt.Errorf("no migration named %q", name)
		}
		m := saved.Migrations[j]
		m.Version = i + 1
		d.migrator.Migrations = append(d.migrator.Migrations, m)
	}
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
