package inbox

import (
	"context"
	"database/sql"
	"fmt"
)

// Cleanup deletes the processed event ids older than Config.Retention, and
// the aggregates' last seqs not updated for as long, in statements of at
// most Config.CleanupBatch rows (each its own transaction), oldest first by
// the processed_at and updated_at indexes. It returns how many rows it
// deleted. Run it periodically (for instance hourly): the processed table
// then holds the ids of about Retention plus one interval of traffic.
//
// What bounds what: the duplicate check is one primary-key probe, O(log n)
// in the table's rows whatever Retention is; Retention bounds n (rows ≈
// event rate × (Retention + cleanup interval)); CleanupBatch bounds the
// locks and the work of one DELETE, and the processed_at index makes each
// batch find its rows without scanning the table.
func (in *Inbox) Cleanup(ctx context.Context, db *sql.DB) (int64, error) {
	before := in.st.time(in.cfg.Now().Add(-in.cfg.Retention))
	var total int64
	for _, q := range [...]struct{ what, query string }{
		{"processed ids", in.st.cleanupProcessed}, {"aggregates", in.st.cleanupAggregates},
	} {
		for {
			res, err := db.ExecContext(ctx, q.query, before, in.cfg.CleanupBatch)
			if err != nil {
				return total, fmt.Errorf("inbox: cleanup %s: %w", q.what, err)
			}
			n, err := res.RowsAffected()
			if err != nil {
				return total, fmt.Errorf("inbox: cleanup %s: %w", q.what, err)
			}
			total += n
			if n < int64(in.cfg.CleanupBatch) {
				break
			}
		}
	}
	return total, nil
}
