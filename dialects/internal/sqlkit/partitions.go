package sqlkit

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/jitoutbox/jitoutbox/dialects"
)

// FillPartitions sets the partition of every pending and dead row (those a
// relay or an operator still acts on) whose partition is not yet set, for
// a table of n partitions: selectRows returns (seq, aggregate_type,
// aggregate_id) of those rows; update(part, seqs) sets one partition on a
// set of rows. Published rows keep the column's default; nothing reads
// their partition.
func FillPartitions(ctx context.Context, q dialects.Querier, n int, selectRows string,
	update func(ctx context.Context, part int, seqs []int64) error) error {
	rows, err := q.QueryContext(ctx, selectRows)
	if err != nil {
		return err
	}
	byPart := make(map[int][]int64)
	for rows.Next() {
		var seq int64
		var at, id string
		if err := rows.Scan(&seq, &at, &id); err != nil {
			rows.Close()
			return err
		}
		p := dialects.PartitionOf(at, id, n)
		byPart[p] = append(byPart[p], seq)
	}
	if err := rows.Err(); err != nil {
		rows.Close()
		return err
	}
	rows.Close()
	for p, seqs := range byPart {
		for len(seqs) > 0 {
			k := min(len(seqs), 1000)
			if err := update(ctx, p, seqs[:k]); err != nil {
				return err
			}
			seqs = seqs[k:]
		}
	}
	return nil
}

// LockNamespace returns a 31-bit number identifying table in advisory lock
// keys (PostgreSQL) and lock names (MySQL): FNV-1a of "jitoutbox:" + table.
func LockNamespace(table string) int32 {
	return int32(dialects.PartitionOf("jitoutbox", table, 1<<31-1))
}

// PartitionsReadError is the error of Dialect.Partitions when its read of
// table failed: dialects.ErrSchemaVersion when the table has no meta row
// or missing says a table, column or function of this version is missing
// (the dialect's reading of its driver's error), else err wrapped as
// dialect's, which the relay retries (the server is down or restarting).
func PartitionsReadError(ctx context.Context, dialect, table string, err error, missing bool) error {
	if ctx.Err() == nil && (errors.Is(err, sql.ErrNoRows) || missing) {
		return fmt.Errorf("%w: table %s: %w", dialects.ErrSchemaVersion, table, err)
	}
	return fmt.Errorf("%s: read partition count: %w", dialect, err)
}

// CheckPartitions applies Dialect.Partitions' rules to what a dialect's
// partitions.sql read for table: the schema version (NULL before versioned
// migrations) must be at least required (the migrator's Required), and a
// configured count (0: any) must equal the table's n. It returns n.
func CheckPartitions(table string, n int, version sql.NullInt64, required, configured int) (int, error) {
	if err := CheckVersion(table, version, required); err != nil {
		return 0, err
	}
	if configured != 0 && configured != n {
		return 0, fmt.Errorf("%w: table %s has %d partitions, the dialect was given %d (WithPartitions)",
			dialects.ErrPartitionMismatch, table, n, configured)
	}
	return n, nil
}
