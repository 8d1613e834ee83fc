package txoutbox_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/DATA-DOG/go-sqlmock"
	"github.com/jitoutbox/jitoutbox/txoutbox"
)

// TestDuplicateIdempotencyKeyAtCommit: a key already in the table makes
// Commit fail with ErrDuplicateIdempotencyKey; the business change is
// rolled back with it.
func TestDuplicateIdempotencyKeyAtCommit(t *testing.T) {
	forEachTarget(t, func(t *testing.T, e *env) {
		ob := e.outbox(t)
		place := func(order, key string) error {
			tx, err := ob.Begin(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback() //nolint:errcheck // harmless after Commit
			if _, err := tx.ExecContext(tx.Context(), e.q("INSERT INTO orders (id, state) VALUES (?, ?)"), order, "paid"); err != nil {
				t.Fatal(err)
			}
			ev := validEvent()
			ev.IdempotencyKey = key
			if _, err := tx.Add(ev); err != nil {
				t.Fatal(err)
			}
			return tx.Commit()
		}
		if err := place("o1", "payment-1"); err != nil {
			t.Fatalf("first commit: %v", err)
		}
		err := place("o2", "payment-1")
		var ferr *txoutbox.FlushError
		if !errors.Is(err, txoutbox.ErrDuplicateIdempotencyKey) || !errors.Is(err, txoutbox.ErrFlush) || !errors.As(err, &ferr) {
			t.Fatalf("second commit: %v, want a *FlushError matching ErrDuplicateIdempotencyKey", err)
		}
		if ferr.RollbackErr != nil {
			t.Fatalf("rollback after the duplicate: %v", ferr.RollbackErr)
		}
		if n := e.orderCount(t); n != 1 {
			t.Fatalf("orders = %d, want 1: the duplicate's business change must roll back", n)
		}
		if ids := e.outboxIDs(t); len(ids) != 1 {
			t.Fatalf("outbox rows = %d, want 1", len(ids))
		}
		// Events without a key never collide.
		for i := range 3 {
			if err := place(fmt.Sprint("n", i), ""); err != nil {
				t.Fatalf("commit without key: %v", err)
			}
		}
	})
}

// TestIdempotencyKeyRace: two transactions with the same key commit at
// once; exactly one commits its order and event, the other gets
// ErrDuplicateIdempotencyKey and commits nothing.
func TestIdempotencyKeyRace(t *testing.T) {
	forEachTarget(t, func(t *testing.T, e *env) {
		ob := e.outbox(t)
		for round := range 5 {
			key := fmt.Sprint("race-", round)
			// Both start at once. SQLite (BEGIN IMMEDIATE here) runs the
			// second after the first; the servers run them together, the
			// second's INSERT waiting on the first's key until it commits.
			var wg sync.WaitGroup
			start := make(chan struct{})
			errs := make([]error, 2)
			for i := range errs {
				wg.Go(func() {
					<-start
					errs[i] = func() error {
						tx, err := ob.Begin(context.Background(), nil)
						if err != nil {
							return err
						}
						defer tx.Rollback() //nolint:errcheck // harmless after Commit
						ev := validEvent()
						ev.IdempotencyKey = key
						if _, err := tx.Add(ev); err != nil {
							return err
						}
						if _, err := tx.ExecContext(tx.Context(), e.q("INSERT INTO orders (id, state) VALUES (?, ?)"),
							fmt.Sprintf("%s-%d", key, i), "paid"); err != nil {
							return err
						}
						return tx.Commit()
					}()
				})
			}
			close(start)
			wg.Wait()
			ok, dup := 0, 0
			for _, err := range errs {
				switch {
				case err == nil:
					ok++
				case errors.Is(err, txoutbox.ErrDuplicateIdempotencyKey):
					dup++
				default:
					t.Fatalf("round %d: unexpected error: %v", round, err)
				}
			}
			if ok != 1 || dup != 1 {
				t.Fatalf("round %d: %d commits, %d duplicates, want 1 and 1 (%v)", round, ok, dup, errs)
			}
			if n := e.count(t, "SELECT COUNT(*) FROM orders WHERE id LIKE ?", key+"-%"); n != 1 {
				t.Fatalf("round %d: orders = %d, want 1", round, n)
			}
			if n := e.count(t, "SELECT COUNT(*) FROM "+e.dialect.Table()+" WHERE idempotency_key = ?", key); n != 1 {
				t.Fatalf("round %d: events = %d, want 1", round, n)
			}
		}
	})
}

// TestIdempotencyKeyBadInput: a key used twice in one transaction, and a
// key longer than the column (MaxNameLen, the VARCHAR(255) of MySQL), are
// refused by Add; nothing is buffered and the transaction goes on.
func TestIdempotencyKeyBadInput(t *testing.T) {
	d := &fakeDialect{}
	ob, mock, _ := newMock(t, d)
	mock.ExpectBegin()
	mock.ExpectExec(`^INSERT INTO outbox `).WillReturnResult(sqlmock.NewResult(0, 1))
	mock.ExpectCommit()
	tx, err := ob.Begin(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	ev := validEvent()
	ev.IdempotencyKey = "k"
	first, err := tx.Add(ev)
	if err != nil {
		t.Fatal(err)
	}
	_, err = txoutbox.Add(tx.Context(), ev)
	var verr *txoutbox.ValidationError
	if !errors.As(err, &verr) || !errors.Is(err, txoutbox.ErrDuplicateIdempotencyKey) || !errors.Is(err, txoutbox.ErrInvalidEvent) ||
		verr.Field != "IdempotencyKey" || !strings.Contains(err.Error(), first) {
		t.Fatalf("key twice in a transaction: %v", err)
	}
	ev.IdempotencyKey = strings.Repeat("k", txoutbox.MaxNameLen+1)
	if _, err := tx.Add(ev); !errors.Is(err, txoutbox.ErrInvalidEvent) || errors.Is(err, txoutbox.ErrDuplicateIdempotencyKey) {
		t.Fatalf("key longer than the column: %v", err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if b := d.Batches(); len(b) != 1 || len(b[0]) != 1 || b[0][0].ID != first {
		t.Fatalf("written: %+v, want only the first event", b)
	}
}
