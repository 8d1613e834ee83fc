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
