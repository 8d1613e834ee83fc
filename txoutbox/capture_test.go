package txoutbox_test

import (
	"context"
	"database/sql"
	"errors"
	"testing"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/internal/testdb"
	"github.com/jitoutbox/jitoutbox/txoutbox"
)

// openSQLite opens a fresh SQLite database (closed at cleanup).
func openSQLite(t testing.TB) (*sql.DB, string) { return testdb.SQLite(t) }

// sqliteDialect migrates db with the SQLite dialect and returns it.
func sqliteDialect(t testing.TB, db *sql.DB) dialects.Dialect {
	t.Helper()
	d := testdb.NewDialect(t, "sqlite")
	if err := d.Migrate(context.Background(), db); err != nil {
		t.Fatal(err)
	}
	return d
}

// txManager is a transaction manager that commits the raw transaction
// itself: the kind Capture is for.
func txManager(ctx context.Context, db *sql.DB, fn func(ctx context.Context, tx *sql.Tx) error) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(ctx, tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

var errBusiness = errors.New("business rule refused the order")

// TestCaptureWithTransactionManager: events written inside a manager's
// transaction commit with it and Committed wakes the relay; a rollback
// after WriteTo leaves no event and, without Committed, no wake.
func TestCaptureWithTransactionManager(t *testing.T) {
	forEachTarget(t, func(t *testing.T, e *env) {
		r := ownAll(e)
		n := &countingNotifier{}
		ob := e.outbox(t, txoutbox.WithRelay(r), txoutbox.WithNotifier(n))
		run := func(order string, fail error, opts ...txoutbox.TxOption) (*txoutbox.Capture, error) {
			c, err := ob.NewCapture(context.Background(), opts...)
			if err != nil {
				t.Fatal(err)
			}
			err = txManager(c.Context(), e.db, func(ctx context.Context, tx *sql.Tx) error {
				if _, err := tx.ExecContext(ctx, e.q("INSERT INTO orders (id, state) VALUES (?, ?)"), order, "paid"); err != nil {
					return err
				}
				if err := domainPay(ctx, order); err != nil { // the package-level Add
					return err
				}
				if err := c.WriteTo(ctx, tx); err != nil {
					return err
				}
				return fail // a failure after the events were written
			})
			if err == nil {
				c.Committed()
			}
			return c, err
		}

		// Commit: the event is in the table, the relay is told to read.
		if _, err := run("c1", nil, txoutbox.TimeCritical()); err != nil {
			t.Fatal(err)
		}
		if len(e.outboxIDs(t)) != 1 || e.orderCount(t) != 1 {
			t.Fatal("captured event or order missing after commit")
		}
		c := r.snapshot()
		if len(c) != 1 || !c[0].Critical || !c[0].Read || len(c[0].Records) != 0 {
			t.Fatalf("relay got %+v, want one critical read and no hand-over", c)
		}

		// Flush, then rollback: no event, no wake.
		cap2, err := run("c2", errBusiness, txoutbox.TimeCritical())
		if !errors.Is(err, errBusiness) {
			t.Fatalf("manager: %v", err)
		}
		if len(e.outboxIDs(t)) != 1 || e.orderCount(t) != 1 || len(r.snapshot()) != 1 || n.n.Load() != 0 {
			t.Fatalf("after a rollback: %d events, %d orders, %d relay calls, %d notifies; want 1, 1, 1, 0",
				len(e.outboxIDs(t)), e.orderCount(t), len(r.snapshot()), n.n.Load())
		}
		// Committed called by mistake after the rollback: one read, no
		// records handed over, so nothing uncommitted can be published.
		cap2.Committed()
		if c := r.snapshot(); len(c) != 2 || len(c[1].Records) != 0 {
			t.Fatalf("mistaken Committed: relay got %+v, want a read without records", c)
		}
		cap2.Committed()
		if len(r.snapshot()) != 2 {
			t.Fatal("second Committed woke again")
		}

		// An ordinary commit gets the lazy wake.
		if _, err := run("c3", nil); err != nil {
			t.Fatal(err)
		}
		if c := r.snapshot(); len(c) != 3 || c[2].Critical {
			t.Fatalf("ordinary capture: relay got %+v", c)
		}
	})
}

// TestCaptureBadInput: every misuse gets a typed error and loses nothing.
func TestCaptureBadInput(t *testing.T) {
	db, _ := openSQLite(t)
	d := sqliteDialect(t, db)
	r := &fakeRelay{db: db, d: d, owned: map[int]bool{}}
	ob, err := txoutbox.New(db, d, txoutbox.WithRelay(r))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	//nolint:staticcheck // a nil context is the bad input under test
	if _, err := ob.NewCapture(nil); !errors.Is(err, txoutbox.ErrInvalidOption) {
		t.Fatalf("NewCapture(nil): %v", err)
	}
	c, err := ob.NewCapture(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c.Committed() // before WriteTo: nothing
	if _, err := c.Add(validEvent()); err != nil {
		t.Fatal(err)
	}
	if err := c.WriteTo(ctx, nil); !errors.Is(err, txoutbox.ErrInvalidOption) {
		t.Fatalf("WriteTo(nil): %v", err)
	}
	if len(c.Events()) != 1 {
		t.Fatal("a refused WriteTo lost the events")
	}
	// A key already in the table: a FlushError matching the duplicate.
	ev := validEvent()
	ev.IdempotencyKey = "k"
	if _, err := c.Add(ev); err != nil {
		t.Fatal(err)
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.WriteTo(ctx, tx); err != nil {
		t.Fatal(err)
	}
	if err := c.WriteTo(ctx, tx); !errors.Is(err, sql.ErrTxDone) {
		t.Fatalf("second WriteTo: %v", err)
	}
	if _, err := c.Add(validEvent()); !errors.Is(err, sql.ErrTxDone) {
		t.Fatalf("Add after WriteTo: %v", err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	c.Committed()
	if len(r.snapshot()) != 1 {
		t.Fatalf("relay calls: %d, want 1", len(r.snapshot()))
	}
	c2, _ := ob.NewCapture(ctx)
	if _, err := c2.Add(ev); err != nil {
		t.Fatal(err)
	}
	tx, _ = db.BeginTx(ctx, nil)
	defer tx.Rollback() //nolint:errcheck // test clean-up
	if err := c2.WriteTo(ctx, tx); !errors.Is(err, txoutbox.ErrDuplicateIdempotencyKey) || !errors.Is(err, txoutbox.ErrFlush) {
		t.Fatalf("WriteTo with a key already in the table: %v", err)
	}
	if _, err := txoutbox.Add(ctx, validEvent()); !errors.Is(err, txoutbox.ErrNoTransaction) {
		t.Fatalf("Add without a transaction: %v", err)
	}
	if _, ok := txoutbox.FromContext(c2.Context()); ok {
		t.Fatal("FromContext returned a *Tx for a Capture's context")
	}
}
