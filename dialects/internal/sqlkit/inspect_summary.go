package sqlkit

import (
	"context"
	"database/sql"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
)

// summarySQL are the statements of ListSummaries and BlockerSummaries:
// inspect_list_sizes.sql, inspect_list_aggregate_sizes.sql and
// inspect_blockers_sizes.sql select what their payload-carrying twins
// select, with NULL for payload and payload_json and the payload's length
// in bytes as one more, last, column.
type summarySQL struct {
	list, listAgg, blockers *Query
}

// scanRow scans the current row of a list or blockers statement (lead as
// for scan); sizes: of a *_sizes.sql statement, whose last column is the
// payload's size (Payload nil, PayloadSize set).
func (s *rowScan) scanRow(rows *sql.Rows, lead []any, sizes bool) (dialects.Row, error) {
	if !sizes {
		return s.scan(rows, lead, nil)
	}
	var size sql.NullInt64
	r, err := s.scan(rows, lead, []any{&size})
	r.Payload, r.PayloadSize = nil, int(size.Int64)
	return r, err
}

// ListSummaries implements dialects.Inspector.
func (in *Inspector) ListSummaries(ctx context.Context, db *sql.DB, f dialects.ListFilter) ([]dialects.Row, error) {
	return in.listRows(ctx, db, f, in.sizes.list, in.sizes.listAgg, true)
}

// BlockerSummaries implements dialects.Inspector.
func (in *Inspector) BlockerSummaries(ctx context.Context, db *sql.DB, now time.Time, limit int) ([]dialects.Blocker, error) {
	return in.blockerRows(ctx, db, now, limit, in.sizes.blockers, true)
}
