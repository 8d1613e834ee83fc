package sqlkit

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jitoutbox/jitoutbox/dialects"
)

// IdempotencyIndex is the name of the unique index on idempotency_key that
// migration 003 creates for the table whose unqualified name is name.
func IdempotencyIndex(name string) string { return name + "_idempotency_key_idx" }

// DuplicateKey wraps err with dialects.ErrDuplicateIdempotencyKey when
// isDup reports that the unique index on idempotency_key refused a row;
// any other error (and nil) is returned as it is.
func DuplicateKey(err error, isDup func(error) bool) error {
	if err == nil || errors.Is(err, dialects.ErrDuplicateIdempotencyKey) || !isDup(err) {
		return err
	}
	return fmt.Errorf("%w: %w", dialects.ErrDuplicateIdempotencyKey, err)
}

// sqlStater is the method lib/pq's and pgx's errors share.
type sqlStater interface{ SQLState() string }

// SQLState returns the SQLSTATE of a driver error that reports one
// (lib/pq, pgx), or "".
func SQLState(err error) string {
	var s sqlStater
	if errors.As(err, &s) {
		return s.SQLState()
	}
	return ""
}

// CheckIdempotencyKeys is migration 003's Go step: it fails, wrapping
// dialects.ErrDuplicateIdempotencyKey, when rows of table share an
// idempotency key, before the unique index is built (its error would not
// say which keys, nor what to do). dupQuery returns (key, count) of shared
// keys, most shared first.
func CheckIdempotencyKeys(ctx context.Context, q dialects.Querier, table, dupQuery string) error {
	rows, err := q.QueryContext(ctx, dupQuery)
	if err != nil {
		return fmt.Errorf("look for shared idempotency keys: %w", err)
	}
	defer rows.Close()
	var keys []string
	n := 0
	for rows.Next() {
		var key string
		var count int64
		if err := rows.Scan(&key, &count); err != nil {
			return fmt.Errorf("look for shared idempotency keys: %w", err)
		}
		n++
		if len(keys) < 3 {
			keys = append(keys, fmt.Sprintf("%q (%d rows)", key, count))
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("look for shared idempotency keys: %w", err)
	}
	if n == 0 {
		return nil
	}
	return fmt.Errorf("%w: %d keys are shared by several rows of %s, e.g. %s; "+
		"the unique index on idempotency_key cannot be built: keep the key on the first row of each "+
		"(lowest seq) and set it to NULL on the others, e.g. UPDATE %s SET idempotency_key = NULL WHERE seq IN "+
		"(SELECT seq FROM (SELECT seq, ROW_NUMBER() OVER (PARTITION BY idempotency_key ORDER BY seq) AS n "+
		"FROM %s WHERE idempotency_key IS NOT NULL) d WHERE d.n > 1), then run Migrate again",
		dialects.ErrDuplicateIdempotencyKey, n, table, strings.Join(keys, ", "), table, table)
}
