package jitotel_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects/sqlite"
	"github.com/jitoutbox/jitoutbox/internal/testdb"
)

// ctxTimeout returns a context cancelled after d or at the end of the test.
func ctxTimeout(t *testing.T, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// sqliteOutbox opens a migrated SQLite database in t.TempDir().
func sqliteOutbox(t *testing.T, ctx context.Context) (*sql.DB, *sqlite.Dialect) {
	t.Helper()
	db, _ := testdb.SQLite(t)
	d, err := sqlite.New()
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Migrate(ctx, db); err != nil {
		t.Fatal(err)
	}
	return db, d
}

// runRelay runs r until the test ends (or stop is called), failing the test
// if Run returns an error.
func runRelay(t *testing.T, ctx context.Context, run func(context.Context) error) (stop func()) {
	t.Helper()
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- run(rctx) }()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil {
			t.Errorf("relay Run: %v", err)
		}
	}
	t.Cleanup(stop)
	return stop
}
