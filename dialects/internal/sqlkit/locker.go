package sqlkit

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/jitoutbox/jitoutbox/dialects"
)

// OwnLocker opens a Locker on db for one session (Dialect.OpenSession)
// and the session on it with open; the session closes the Locker with
// itself, and OwnLocker closes it when open fails. dialect ("postgres")
// starts the errors of OpenLocker.
func OwnLocker(ctx context.Context, db *sql.DB, dialect string, open func(*dialects.Locker) (dialects.Session, error)) (dialects.Session, error) {
	l, err := dialects.OpenLocker(ctx, db)
	if err != nil {
		return nil, fmt.Errorf("%s: open session: %w", dialect, err)
	}
	s, err := open(l)
	if err != nil {
		_ = l.Close()
		return nil, err
	}
	return s, nil
}
