package sqlite

import (
	"context"
	"database/sql"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/dialects/internal/sqlkit"
)

var _ dialects.Inspector = (*Dialect)(nil)

// newInspector renders the inspection statements for d's table; New calls
// it once.
func (d *Dialect) newInspector() (*sqlkit.Inspector, error) {
	return sqlkit.NewInspector(sqlkit.InspectorConfig{
		Op:         "sqlite",
		Statements: d.st,
		Time:       func(t time.Time) any { return t.UnixMicro() },
		ValidID:    nil,
		OwnershipArgs: func(_ context.Context, _ *sql.DB, now time.Time) ([]sql.NamedArg, error) {
			return []sql.NamedArg{sql.Named("now", micros(now))}, nil
		},
	})
}

// List returns rows in one state (optionally of one aggregate) in Seq order;
// see dialects.Inspector.
func (d *Dialect) List(ctx context.Context, db *sql.DB, f dialects.ListFilter) ([]dialects.Row, error) {
	return d.insp.List(ctx, db, f)
}

// Get returns one event's row; see dialects.Inspector.
func (d *Dialect) Get(ctx context.Context, db *sql.DB, id string) (dialects.Row, error) {
	return d.insp.Get(ctx, db, id)
}

// Blockers returns aggregates held back or holding dead rows; see
// dialects.Inspector.
func (d *Dialect) Blockers(ctx context.Context, db *sql.DB, now time.Time, limit int) ([]dialects.Blocker, error) {
	return d.insp.Blockers(ctx, db, now, limit)
}

// Ownership reads the live relay sessions and every partition's owner
// without opening a session; see dialects.Inspector.
func (d *Dialect) Ownership(ctx context.Context, db *sql.DB, now time.Time) (dialects.Ownership, error) {
	return d.insp.Ownership(ctx, db, now)
}

// PastRetention counts, up to dialects.PastRetentionCap + 1, the published
// rows older than retention at now; see dialects.Inspector.
func (d *Dialect) PastRetention(ctx context.Context, db *sql.DB, now time.Time, retention time.Duration) (int64, error) {
	return d.insp.PastRetention(ctx, db, now, retention)
}

// ListSummaries is List without the payloads (their sizes only); see
// dialects.Inspector.
func (d *Dialect) ListSummaries(ctx context.Context, db *sql.DB, f dialects.ListFilter) ([]dialects.Row, error) {
	return d.insp.ListSummaries(ctx, db, f)
}

// BlockerSummaries is Blockers without the head rows' payloads; see
// dialects.Inspector.
func (d *Dialect) BlockerSummaries(ctx context.Context, db *sql.DB, now time.Time, limit int) ([]dialects.Blocker, error) {
	return d.insp.BlockerSummaries(ctx, db, now, limit)
}

// PendingMigrations returns the migrations Migrate would apply, without
// writing; see dialects.Inspector.
func (d *Dialect) PendingMigrations(ctx context.Context, db *sql.DB) ([]dialects.Migration, error) {
	return d.migrator.Pending(ctx, db)
}
