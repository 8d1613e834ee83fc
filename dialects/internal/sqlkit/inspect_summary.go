package sqlkit

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
)

// summarySQL are the statements of ListSummaries and BlockerSummaries:
// inspect_list_sizes.sql, inspect_list_aggregate_sizes.sql and
// inspect_blockers_sizes.sql select what their payload-carrying twins
// select, with NULL for payload and payload_json and the payload's length
// in bytes as one more, last, column.
type summarySQL struct {
	list, listAgg, blockers string
}

// loadSummaries loads summarySQL with load.
func loadSummaries(load func(string) (string, error)) (summarySQL, error) {
	var s summarySQL
	for _, f := range []struct {
		dst  *string
		name string
	}{
		{&s.list, "inspect_list_sizes.sql"}, {&s.listAgg, "inspect_list_aggregate_sizes.sql"},
		{&s.blockers, "inspect_blockers_sizes.sql"},
	} {
		q, err := load(f.name)
		if err != nil {
			return s, err
		}
		*f.dst = q
	}
	return s, nil
}

// summary scans the current row of a *_sizes.sql statement (lead as for
// scan) and returns it with Payload nil and PayloadSize set.
func (s *rowScan) summary(rows *sql.Rows, lead []any) (dialects.Row, error) {
	var size sql.NullInt64
	r, err := s.scan(rows, lead, []any{&size})
	r.Payload, r.PayloadSize = nil, int(size.Int64)
	return r, err
}

// ListSummaries implements dialects.Inspector.
func (in *Inspector) ListSummaries(ctx context.Context, db *sql.DB, f dialects.ListFilter) ([]dialects.Row, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	var rows *sql.Rows
	var err error
	if f.AggregateType != "" {
		rows, err = db.QueryContext(ctx, in.sizes.listAgg, f.AggregateType, f.AggregateID, int(f.State), f.AfterSeq, f.Limit)
	} else {
		rows, err = db.QueryContext(ctx, in.sizes.list, int(f.State), f.AfterSeq, f.Limit)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: list: %w", in.op, err)
	}
	defer rows.Close()
	var out []dialects.Row
	for rows.Next() {
		var s rowScan
		r, err := s.summary(rows, nil)
		if err != nil {
			return nil, fmt.Errorf("%s: list: scan: %w", in.op, err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: list: %w", in.op, err)
	}
	return out, nil
}

// BlockerSummaries implements dialects.Inspector.
func (in *Inspector) BlockerSummaries(ctx context.Context, db *sql.DB, now time.Time, limit int) ([]dialects.Blocker, error) {
	if limit <= 0 {
		return nil, nil
	}
	args := make([]any, 0, in.nowArgs+1)
	for range in.nowArgs {
		args = append(args, in.timeArg(UTC(now)))
	}
	args = append(args, limit)
	rows, err := db.QueryContext(ctx, in.sizes.blockers, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: blockers: %w", in.op, err)
	}
	defer rows.Close()
	var out []dialects.Blocker
	for rows.Next() {
		var b dialects.Blocker
		var s rowScan
		r, err := s.summary(rows, []any{&b.AggregateType, &b.AggregateID, &b.Pending, &b.Dead})
		if err != nil {
			return nil, fmt.Errorf("%s: blockers: scan: %w", in.op, err)
		}
		b.Head = &r
		b.Reason = dialects.BlockBackingOff
		if r.State == dialects.StateDead {
			b.Reason = dialects.BlockDead
		}
		out = append(out, b)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: blockers: %w", in.op, err)
	}
	return out, nil
}
