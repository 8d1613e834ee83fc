package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/dialects/internal/sqlkit"
)

// clock is SQLite's clock: the database is embedded, so its now is the
// process's (UTC, to the microsecond, as times are stored). Inserts take
// their due times from it, as Now returns it.
func clock() time.Time { return sqlkit.UTC(time.Now()) }

// Now returns the process's clock, which is SQLite's own (the database is
// embedded): relays on this database measure no offset. q is not used.
func (d *Dialect) Now(ctx context.Context, q dialects.Querier) (time.Time, error) {
	if err := ctx.Err(); err != nil {
		return time.Time{}, fmt.Errorf("sqlite: now: %w", err)
	}
	return clock(), nil
}

// holdAggregates writes the holds of events' ordered scheduled events
// (hold.sql), inserted at now; no statement when there is none.
func (d *Dialect) holdAggregates(ctx context.Context, q dialects.Execer, events []dialects.Event, now time.Time) error {
	ids := sqlkit.HeldIDs(events)
	if len(ids) == 0 {
		return nil
	}
	js, err := sqlkit.JSONStrings(ids)
	if err != nil {
		return fmt.Errorf("sqlite: hold: %w", err)
	}
	if _, err := sqlkit.Exec(ctx, q, d.hold, sql.Named("ids", js), sql.Named("now", micros(now))); err != nil {
		return fmt.Errorf("sqlite: hold %d scheduled events: %w", len(ids), err)
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
	due, err := sqlkit.QueryTimes(ctx, db, d.nextDue, sql.Named("after", micros(sqlkit.UTC(after))),
		sql.Named("parts", jsonParts(parts)), sql.Named("limit", limit))
	if err != nil {
		return nil, fmt.Errorf("sqlite: next due: %w", err)
	}
	return due, nil
}

// Cancel deletes the rows ids that are scheduled, pending, never attempted
// and not yet due (cancel.sql), then ends the holds no other scheduled row
// not yet due keeps (cancel_holds.sql), on q: in the caller's transaction
// when q is one.
func (d *Dialect) Cancel(ctx context.Context, q dialects.Querier, ids []string) ([]string, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	js, err := sqlkit.JSONStrings(ids)
	if err != nil {
		return nil, fmt.Errorf("sqlite: cancel: %w", err)
	}
	now := micros(clock())
	rows, err := sqlkit.QueryRows(ctx, q, d.cancel, sql.Named("ids", js), sql.Named("now", now))
	if err != nil {
		return nil, fmt.Errorf("sqlite: cancel: %w", err)
	}
	var (
		out  []string
		aggs [][]any
	)
	for rows.Next() {
		var (
			id, typ, agg string
			part         int
		)
		if err := rows.Scan(&id, &part, &typ, &agg); err != nil {
			rows.Close()
			return nil, fmt.Errorf("sqlite: cancel: scan: %w", err)
		}
		out = append(out, id)
		aggs = append(aggs, []any{part, typ, agg})
	}
	if err := rows.Close(); err != nil {
		return nil, fmt.Errorf("sqlite: cancel: %w", err)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: cancel: %w", err)
	}
	if len(out) == 0 {
		return nil, nil
	}
	b, err := json.Marshal(aggs)
	if err != nil {
		return nil, fmt.Errorf("sqlite: cancel: %w", err)
	}
	if _, err := sqlkit.Exec(ctx, q, d.cancelHolds, sql.Named("aggs", string(b)), sql.Named("now", now)); err != nil {
		return nil, fmt.Errorf("sqlite: cancel: end holds: %w", err)
	}
	return out, nil
}

// ReleaseHolds deletes up to limit holds that ended before now and whose
// aggregate has no pending row left (release_holds.sql).
func (d *Dialect) ReleaseHolds(ctx context.Context, db *sql.DB, now time.Time, limit int) (int64, error) {
	if limit <= 0 {
		return 0, nil
	}
	return affected("release holds")(sqlkit.Exec(ctx, db, d.releaseHolds, sql.Named("now", micros(sqlkit.UTC(now))),
		sql.Named("limit", limit)))
}
