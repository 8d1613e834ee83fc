package mysql

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/dialects/internal/sqlkit"
)

// Now reads the server's clock in UTC (now.sql), as DATETIMEs are stored.
func (d *Dialect) Now(ctx context.Context, q dialects.Querier) (time.Time, error) {
	var now sqlkit.NullTime
	if err := sqlkit.QueryRow(ctx, q, d.now).Scan(&now); err != nil {
		return time.Time{}, fmt.Errorf("mysql: now: %w", err)
	}
	return now.Time, nil
}

// holdAggregates writes the holds of events' ordered scheduled events
// (hold.sql, per maxList ids) in the insert's transaction; no statement
// when there is none.
func (d *Dialect) holdAggregates(ctx context.Context, q dialects.Execer, events []dialects.Event) error {
	ids := sqlkit.HeldIDs(events)
	if len(ids) == 0 {
		return nil
	}
	_, err := inBatches(ctx, q, "hold scheduled events", d.hold, "ids", ids)
	return err
}

// NextDue returns the earliest distinct due times after `after` of the
// scheduled pending rows of parts, up to limit (next_due.sql: one walk of
// deliver_idx).
func (d *Dialect) NextDue(ctx context.Context, db *sql.DB, parts []int, after time.Time, limit int) ([]time.Time, error) {
	if len(parts) == 0 || limit <= 0 {
		return nil, nil
	}
	due, err := sqlkit.QueryTimes(ctx, db, d.nextDue, sql.Named("after", sqlkit.UTC(after)),
		sql.Named("parts", parts), sql.Named("limit", limit))
	if err != nil {
		return nil, fmt.Errorf("mysql: next due: %w", err)
	}
	return due, nil
}

// Cancel locks the rows ids that are scheduled, pending, never attempted
// and not yet due (cancel_select.sql), deletes them (cancel_delete.sql) and
// ends the holds no other scheduled row not yet due keeps
// (cancel_holds.sql), in one transaction: q's when q is one, its own when
// q is a *sql.DB.
func (d *Dialect) Cancel(ctx context.Context, q dialects.Querier, ids []string) ([]string, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	db, ok := q.(*sql.DB)
	if !ok {
		return d.cancel(ctx, q, ids)
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("mysql: cancel: begin: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // no-op after Commit
	out, err := d.cancel(ctx, tx, ids)
	if err != nil {
		return nil, err
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("mysql: cancel: commit: %w", err)
	}
	return out, nil
}

// cancel runs Cancel's statements on q, a transaction, per maxList ids.
func (d *Dialect) cancel(ctx context.Context, q dialects.Querier, ids []string) ([]string, error) {
	var out []string
	for len(ids) > 0 {
		n := min(len(ids), maxList)
		got, aggs, err := d.cancelLock(ctx, q, ids[:n])
		if err != nil {
			return nil, err
		}
		ids = ids[n:]
		if len(got) == 0 {
			continue
		}
		if _, err := sqlkit.Exec(ctx, q, d.cancelDelete, sql.Named("ids", got)); err != nil {
			return nil, fmt.Errorf("mysql: cancel: %w", err)
		}
		if _, err := sqlkit.Exec(ctx, q, d.cancelHolds, sql.Named("aggs", aggs)); err != nil {
			return nil, fmt.Errorf("mysql: cancel: end holds: %w", err)
		}
		out = append(out, got...)
	}
	return out, nil
}

// cancelLock locks the cancellable rows among ids and returns their ids
// and aggregates (part, type, id).
func (d *Dialect) cancelLock(ctx context.Context, q dialects.Querier, ids []string) ([]string, [][]any, error) {
	rows, err := sqlkit.QueryRows(ctx, q, d.cancelSelect, sql.Named("ids", ids))
	if err != nil {
		return nil, nil, fmt.Errorf("mysql: cancel: %w", err)
	}
	defer rows.Close()
	var (
		got  []string
		aggs [][]any
		seen = map[aggKey]bool{}
	)
	for rows.Next() {
		var (
			id string
			k  aggKey
		)
		if err := rows.Scan(&id, &k.part, &k.typ, &k.id); err != nil {
			return nil, nil, fmt.Errorf("mysql: cancel: scan: %w", err)
		}
		got = append(got, id)
		if !seen[k] {
			seen[k] = true
			aggs = append(aggs, []any{k.part, k.typ, k.id})
		}
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("mysql: cancel: %w", err)
	}
	return got, aggs, nil
}

// ReleaseHolds deletes up to limit holds that ended before now and whose
// aggregate has no pending row left (release_holds.sql).
func (d *Dialect) ReleaseHolds(ctx context.Context, db *sql.DB, now time.Time, limit int) (int64, error) {
	if limit <= 0 {
		return 0, nil
	}
	return affected("release holds")(sqlkit.Exec(ctx, db, d.releaseHolds, sql.Named("now", sqlkit.UTC(now)),
		sql.Named("limit", limit)))
}
