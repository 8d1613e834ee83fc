package sqlkit

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/jitoutbox/jitoutbox/dialects"
)

// ReadStats runs a dialect's stats.sql (one statement, its only argument
// @cap: the cap of the exact published count, dialects.StatsExactPublished + 1)
// and fills dialects.Stats. The statement returns, in order: pending
// count, oldest pending created_at, dead count, published count up to the
// cap, seq and published_at of the oldest published row, the highest seq,
// the aggregates blocked behind a dead row and behind a retry, and the
// pending and dead rows whose partition is outside [0, P), the pending
// rows scheduled after the database's now and the earliest of their due
// times. extra are more arguments (SQLite's @now, its clock being the
// process's). prefix starts the error: the calling dialect's package name
// ("postgres").
func ReadStats(ctx context.Context, db *sql.DB, q *Query, prefix string, extra ...sql.NamedArg) (dialects.Stats, error) {
	var (
		s                            dialects.Stats
		oldest, oldestPubAt, nextDue lenientTime
		oldestPubSeq, maxSeq         sql.NullInt64
	)
	args := append([]sql.NamedArg{sql.Named("cap", dialects.StatsExactPublished+1)}, extra...)
	err := QueryRow(ctx, db, q, args...).Scan(
		&s.Pending, &oldest, &s.Dead, &s.Published, &oldestPubSeq, &oldestPubAt, &maxSeq, &s.BlockedDead, &s.BlockedRetry,
		&s.BadPartition, &s.Scheduled, &nextDue)
	if err != nil {
		return dialects.Stats{}, fmt.Errorf("%s: stats: %w", prefix, err)
	}
	s.OldestPending, s.OldestPublished, s.NextDue = oldest.Time, oldestPubAt.Time, nextDue.Time
	if s.Published > dialects.StatsExactPublished {
		s.Published = estimatePublished(s, oldestPubSeq.Int64, maxSeq.Int64)
		s.PublishedEstimated = true
	}
	return s, nil
}

// estimatePublished estimates the published rows from the seqs between the
// oldest kept published row and the newest row (cleanup deletes the oldest
// published rows first, so the rows before it are gone), less the pending
// and dead rows; never below the exact count's cap.
func estimatePublished(s dialects.Stats, oldestSeq, maxSeq int64) int64 {
	return max(maxSeq-oldestSeq+1-s.Pending-s.Dead, dialects.StatsExactPublished+1)
}

// lenientTime scans a time as NullTime does, but leaves it zero instead of
// failing when the stored value does not parse (a bad row, see
// dialects.RowError): one such row must not make Stats fail. The
// Inspector reports the row itself.
type lenientTime struct{ NullTime }

// Scan implements sql.Scanner.
func (l *lenientTime) Scan(src any) error {
	if err := l.NullTime.Scan(src); err != nil {
		l.NullTime = NullTime{}
	}
	return nil
}
