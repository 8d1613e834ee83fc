package sqlite

import (
	"context"
	"database/sql"
)

// MigrateTo applies d's migrations up to version, as Migrate does: the
// schema of an earlier release, for upgrade tests with data in the table.
func MigrateTo(ctx context.Context, d *Dialect, db *sql.DB, version int) error {
	saved := d.migrator
	defer func() { d.migrator = saved }()
	d.migrator.Migrations = saved.Migrations[:version]
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
