package postgres

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/dialects/internal/sqlkit"
)

// Now reads the database's clock (now.sql: clock_timestamp(), the time as
// the statement runs, also inside a transaction).
func (d *Dialect) Now(ctx context.Context, q dialects.Querier) (time.Time, error) {
	var now sqlkit.NullTime
	if err := sqlkit.QueryRow(ctx, q, d.now).Scan(&now); err != nil {
		return time.Time{}, fmt.Errorf("postgres: now: %w", err)
	}
	return now.Time, nil
}

// holdAggregates writes the holds of events' ordered scheduled events
// (hold.sql) in the insert's transaction; no statement when there is none.
func (d *Dialect) holdAggregates(ctx context.Context, q dialects.Execer, events []dialects.Event) error {
	ids := sqlkit.HeldIDs(events)
	if len(ids) == 0 {
		return nil
	}
	if _, err := sqlkit.Exec(ctx, q, d.hold, sql.Named("ids", textArray(ids))); err != nil {
		return fmt.Errorf("postgres: hold %d scheduled events: %w", len(ids), err)
	}
	return nil
}

// NextDue returns the earliest distinct due times after `after` of the
// scheduled pending rows of parts, up to limit (next_due.sql: one walk of
// deliver_idx).
func (d *Dialect) NextDue(ctx context.Context, db *sql.DB, parts []int, after time.Time, limit int) ([]time.Time, error) {
	if len(parts) == 0 || limit <= 0 {
		return nil, nil
	}
	due, err := sqlkit.QueryTimes(ctx, db, d.nextDue, sql.Named("after", sqlkit.UTC(after)),
		sql.Named("parts", partArray(parts)), sql.Named("limit", limit))
	if err != nil {
		return nil, fmt.Errorf("postgres: next due: %w", err)
	}
	return due, nil
}

// Cancel deletes the rows ids that are scheduled, pending, never attempted
// and not yet due, and ends the holds no other scheduled row not yet due
// keeps, in one statement (cancel.sql) on q: in the caller's transaction
// when q is one. Ids that are not UUIDs match no row.
func (d *Dialect) Cancel(ctx context.Context, q dialects.Querier, ids []string) ([]string, error) {
	valid := make([]string, 0, len(ids))
	for _, id := range ids {
		if isUUIDText(id) {
			valid = append(valid, id)
		}
	}
	if len(valid) == 0 {
		return nil, nil
	}
	rows, err := sqlkit.QueryRows(ctx, q, d.cancel, sql.Named("ids", textArray(valid)))
	if err != nil {
		return nil, fmt.Errorf("postgres: cancel: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("postgres: cancel: scan: %w", err)
		}
		out = append(out, id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: cancel: %w", err)
	}
	return out, nil
}

// ReleaseHolds deletes up to limit holds that ended before now and whose
// aggregate has no pending row left (release_holds.sql).
func (d *Dialect) ReleaseHolds(ctx context.Context, db *sql.DB, now time.Time, limit int) (int64, error) {
	if limit <= 0 {
		return 0, nil
	}
	res, err := sqlkit.Exec(ctx, db, d.releaseHolds, sql.Named("now", sqlkit.UTC(now)), sql.Named("limit", limit))
	if err != nil {
		return 0, fmt.Errorf("postgres: release holds: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("postgres: release holds: rows affected: %w", err)
	}
	return n, nil
}
