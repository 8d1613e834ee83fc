package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
)

// errNotYet: scheduled delivery is not implemented on this dialect yet.
var errNotYet = fmt.Errorf("mysql: scheduled delivery: %w", errors.ErrUnsupported)

// Now is not implemented yet on this dialect.
func (d *Dialect) Now(ctx context.Context, q dialects.Querier) (time.Time, error) {
	return time.Time{}, errNotYet
}

// NextDue is not implemented yet on this dialect.
func (d *Dialect) NextDue(ctx context.Context, db *sql.DB, parts []int, now time.Time) (time.Time, bool, error) {
	return time.Time{}, false, errNotYet
}

// Cancel is not implemented yet on this dialect.
func (d *Dialect) Cancel(ctx context.Context, q dialects.Querier, ids []string) ([]string, error) {
	return nil, errNotYet
}

// ReleaseHolds is not implemented yet on this dialect.
func (d *Dialect) ReleaseHolds(ctx context.Context, db *sql.DB, now time.Time, limit int) (int64, error) {
	return 0, errNotYet
}
