package txoutbox_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/DATA-DOG/go-sqlmock"
	"github.com/jitoutbox/jitoutbox/notify"
	"github.com/jitoutbox/jitoutbox/txoutbox"
)

var errBoom = errors.New("boom")

// insertArgs is the number of bind arguments per event of the fake dialect.
const insertArgs = 9

func anyArgs(n int) []driver.Value {
	out := make([]driver.Value, n)
	for i := range out {
		out[i] = sqlmock.AnyArg()
	}
	return out
}

func TestCommitWritesOneInsertRightBeforeCommit(t *testing.T) {
	d := &fakeDialect{}
	ob, mock, _ := newMock(t, d)
	mock.ExpectBegin()
	mock.ExpectExec(`^UPDATE orders`).WillReturnResult(sqlmock.NewResult(0, 1))
	mock.ExpectExec(`^UPDATE stock`).WillReturnResult(sqlmock.NewResult(0, 1))
	mock.ExpectExec(`^INSERT INTO outbox `).WithArgs(anyArgs(3 * insertArgs)...).WillReturnResult(sqlmock.NewResult(0, 3))
	mock.ExpectCommit()

	type key struct{}
	ctx := context.WithValue(context.Background(), key{}, "begin-ctx")
	tx, err := ob.Begin(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, "UPDATE orders SET state = 'placed'"); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := tx.Add(validEvent()); err != nil {
			t.Fatal(err)
		}
	}
	// A statement after Add still runs before the INSERT: events are only
	// flushed at Commit.
	if _, err := tx.Exec("UPDATE stock SET n = n - 1"); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatalf("Commit: %v", err)
	}
	if err := mock.ExpectationsWereMet(); err != nil {
		t.Fatal(err)
	}
	b := d.Batches()
	if len(b) != 1 || len(b[0]) != 3 {
		t.Fatalf("Insert calls %v, want one call with 3 events", len(b))
	}
	for _, e := range b[0] {
		if e.Critical {
			t.Fatal("event of a non-critical tx stored as critical")
		}
	}
	if got := d.Contexts()[0].Value(key{}); got != "begin-ctx" {
		t.Fatalf("Insert did not get the Begin context (value %v)", got)
	}
	if err := tx.Rollback(); !errors.Is(err, sql.ErrTxDone) {
		t.Fatalf("Rollback after Commit = %v, want sql.ErrTxDone", err)
	}
}

func TestCommitWithoutEventsSendsNoExtraStatement(t *testing.T) {
	d := &fakeDialect{}
	n := &countingNotifier{}
	ob, mock, _ := newMock(t, d, txoutbox.WithNotifier(n))
	mock.ExpectBegin()
	mock.ExpectExec(`^UPDATE orders`).WillReturnResult(sqlmock.NewResult(0, 1))
	mock.ExpectCommit()
	// Time-critical but nothing to publish: no wake either.
	tx, err := ob.Begin(context.Background(), nil, txoutbox.TimeCritical())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec("UPDATE orders SET x = 1"); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if len(d.Batches()) != 0 {
		t.Fatal("Insert called for a transaction without events")
	}
	if got := n.n.Load(); got != 0 {
		t.Fatalf("notified %d times for a tx without events", got)
	}
}

func TestFlushFailureRollsBackAndWrapsCause(t *testing.T) {
	for _, viaDialect := range []bool{false, true} {
		name := "driver error"
		if viaDialect {
			name = "dialect error"
		}
		t.Run(name, func(t *testing.T) {
			d := &fakeDialect{}
			if viaDialect {
				d.fail = errBoom
			}
			n := &countingNotifier{}
			ob, mock, _ := newMock(t, d, txoutbox.WithNotifier(n))
			mock.ExpectBegin()
			if !viaDialect {
				mock.ExpectExec(`^INSERT INTO outbox `).WillReturnError(errBoom)
			}
			mock.ExpectRollback()
			tx, err := ob.Begin(context.Background(), nil, txoutbox.TimeCritical())
			if err != nil {
				t.Fatal(err)
			}
			for range 2 {
				if _, err := tx.Add(validEvent()); err != nil {
					t.Fatal(err)
				}
			}
			err = tx.Commit()
			if !errors.Is(err, errBoom) || !errors.Is(err, txoutbox.ErrFlush) {
				t.Fatalf("Commit = %v, want an error matching the cause and ErrFlush", err)
			}
			var ferr *txoutbox.FlushError
			if !errors.As(err, &ferr) || ferr.Events != 2 || ferr.RollbackErr != nil {
				t.Fatalf("Commit error %#v, want *FlushError{Events: 2}", err)
			}
			if want := "txoutbox: flush 2 events: boom"; err.Error() != want {
				t.Fatalf("message %q, want %q", err.Error(), want)
			}
			if err := mock.ExpectationsWereMet(); err != nil {
				t.Fatal(err)
			}
			if got := n.n.Load(); got != 0 {
				t.Fatalf("notified %d times after a failed flush", got)
			}
			if _, err := tx.Exec("SELECT 1"); !errors.Is(err, sql.ErrTxDone) {
				t.Fatalf("Exec after failed Commit = %v, want sql.ErrTxDone", err)
			}
			if err := tx.Rollback(); !errors.Is(err, sql.ErrTxDone) {
				t.Fatalf("Rollback after failed Commit = %v, want sql.ErrTxDone", err)
			}
		})
	}
}

func TestFlushFailureReportsRollbackFailure(t *testing.T) {
	errRB := errors.New("rollback broke")
	ob, mock, _ := newMock(t, &fakeDialect{fail: errBoom})
	mock.ExpectBegin()
	mock.ExpectRollback().WillReturnError(errRB)
	tx, err := ob.Begin(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Add(validEvent()); err != nil {
		t.Fatal(err)
	}
	err = tx.Commit()
	if !errors.Is(err, errBoom) || !errors.Is(err, txoutbox.ErrFlush) || !errors.Is(err, errRB) {
		t.Fatalf("Commit = %v, want cause, ErrFlush and the rollback error", err)
	}
}

func TestCommitFailureDoesNotNotify(t *testing.T) {
	errCommit := errors.New("serialization failure")
	n := &countingNotifier{}
	ob, mock, _ := newMock(t, &fakeDialect{}, txoutbox.WithNotifier(n))
	mock.ExpectBegin()
	mock.ExpectExec(`^INSERT INTO outbox `).WillReturnResult(sqlmock.NewResult(0, 1))
	mock.ExpectCommit().WillReturnError(errCommit)
	tx, err := ob.Begin(context.Background(), nil, txoutbox.TimeCritical())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Add(validEvent()); err != nil {
		t.Fatal(err)
	}
	err = tx.Commit()
	if !errors.Is(err, errCommit) {
		t.Fatalf("Commit = %v, want it to wrap the driver's error", err)
	}
	if errors.Is(err, txoutbox.ErrFlush) {
		t.Fatal("a COMMIT failure must not be reported as a flush failure")
	}
	if got := n.n.Load(); got != 0 {
		t.Fatalf("notified %d times after a failed commit", got)
	}
}

func TestRollbackWritesNothing(t *testing.T) {
	d := &fakeDialect{}
	n := &countingNotifier{}
	ob, mock, _ := newMock(t, d, txoutbox.WithNotifier(n))
	mock.ExpectBegin()
	mock.ExpectRollback()
	tx, err := ob.Begin(context.Background(), nil, txoutbox.TimeCritical())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Add(validEvent()); err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if len(d.Batches()) != 0 || n.n.Load() != 0 {
		t.Fatalf("rollback: %d inserts, %d notifies; want none", len(d.Batches()), n.n.Load())
	}
	if err := tx.Commit(); !errors.Is(err, sql.ErrTxDone) {
		t.Fatalf("Commit after Rollback = %v, want sql.ErrTxDone", err)
	}
	if _, err := tx.Add(validEvent()); !errors.Is(err, sql.ErrTxDone) {
		t.Fatalf("Add after Rollback = %v, want sql.ErrTxDone", err)
	}
	if err := tx.Rollback(); !errors.Is(err, sql.ErrTxDone) {
		t.Fatalf("second Rollback = %v, want sql.ErrTxDone", err)
	}
}

func TestNotifyOncePerTimeCriticalCommit(t *testing.T) {
	cases := []struct {
		name       string
		txCritical bool
		evCritical []bool
		wantNotify int64
	}{
		{"plain tx", false, []bool{false, false}, 0},
		{"tx option", true, []bool{false, false}, 1},
		{"one critical event", false, []bool{false, true, false}, 1},
		{"all critical events", false, []bool{true, true}, 1},
		{"option and events", true, []bool{true}, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := &fakeDialect{}
			n := &countingNotifier{}
			ob, mock, _ := newMock(t, d, txoutbox.WithNotifier(n))
			mock.ExpectBegin()
			mock.ExpectExec(`^INSERT INTO outbox `).WillReturnResult(sqlmock.NewResult(0, int64(len(c.evCritical))))
			mock.ExpectCommit()
			var opts []txoutbox.TxOption
			if c.txCritical {
				opts = append(opts, txoutbox.TimeCritical())
			}
			tx, err := ob.Begin(context.Background(), nil, opts...)
			if err != nil {
				t.Fatal(err)
			}
			for _, crit := range c.evCritical {
				ev := validEvent()
				ev.TimeCritical = crit
				if _, err := tx.Add(ev); err != nil {
					t.Fatal(err)
				}
			}
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
			if got := n.n.Load(); got != c.wantNotify {
				t.Fatalf("Notify called %d times, want %d", got, c.wantNotify)
			}
			for _, e := range d.Batches()[0] {
				if e.Critical != (c.wantNotify == 1) {
					t.Fatalf("stored Critical=%v in a tx with critical=%v", e.Critical, c.wantNotify == 1)
				}
			}
		})
	}
}

func TestEventNotifierGetsIDs(t *testing.T) {
	n := &idsNotifier{}
	ob, mock, _ := newMock(t, &fakeDialect{}, txoutbox.WithNotifier(n))
	mock.ExpectBegin()
	mock.ExpectExec(`^INSERT INTO outbox `).WillReturnResult(sqlmock.NewResult(0, 2))
	mock.ExpectCommit()
	mock.ExpectBegin()
	mock.ExpectExec(`^INSERT INTO outbox `).WillReturnResult(sqlmock.NewResult(0, 1))
	mock.ExpectCommit()

	tx, err := ob.Begin(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	id1, err := tx.Add(validEvent())
	if err != nil {
		t.Fatal(err)
	}
	ev := validEvent()
	ev.TimeCritical = true
	id2, err := tx.Add(ev)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	// A non-critical tx: nothing.
	tx, err = ob.Begin(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Add(validEvent()); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	plain, calls := n.snapshot()
	if plain != 0 {
		t.Fatalf("Notify called %d times although NotifyEvents is implemented", plain)
	}
	if len(calls) != 1 || len(calls[0]) != 2 || calls[0][0] != id1 || calls[0][1] != id2 {
		t.Fatalf("NotifyEvents calls %v, want one call with [%s %s]", calls, id1, id2)
	}
}

// TestRealDialectStatementOrder pins, with each real dialect's SQL, that a
// commit with events sends exactly one INSERT into the outbox, after the
// business statements and right before COMMIT, and a commit without events
// sends none.
func TestRealDialectStatementOrder(t *testing.T) {
	for name, d := range realDialects(t) {
		t.Run(name, func(t *testing.T) {
			ob, mock, _ := newMock(t, d)
			mock.ExpectBegin()
			mock.ExpectExec(`^UPDATE orders`).WillReturnResult(sqlmock.NewResult(0, 1))
			mock.ExpectExec(`(?s)^\s*INSERT INTO "?outbox"? `).WillReturnResult(sqlmock.NewResult(0, 5))
			mock.ExpectCommit()
			mock.ExpectBegin()
			mock.ExpectExec(`^UPDATE orders`).WillReturnResult(sqlmock.NewResult(0, 1))
			mock.ExpectCommit()

			tx, err := ob.Begin(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			for range 5 {
				if _, err := tx.Add(validEvent()); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := tx.Exec("UPDATE orders SET x = 1"); err != nil {
				t.Fatal(err)
			}
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
			tx, err = ob.Begin(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tx.Exec("UPDATE orders SET x = 1"); err != nil {
				t.Fatal(err)
			}
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
			if err := mock.ExpectationsWereMet(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// lazyTxNotifier implements notify.LazyNotifier and notify.TxNotifier.
type lazyTxNotifier struct {
	countingNotifier
	lazy  atomic.Int64
	inTx  atomic.Int64
	txErr error
}

func (l *lazyTxNotifier) NotifyLazy() { l.lazy.Add(1) }

func (l *lazyTxNotifier) NotifyInTx(ctx context.Context, ex notify.Execer) error {
	l.inTx.Add(1)
	if l.txErr != nil {
		return l.txErr
	}
	_, err := ex.ExecContext(ctx, "SELECT pg_notify('jitoutbox', '')")
	return err
}

func TestLazyAndInTxNotifiers(t *testing.T) {
	n := &lazyTxNotifier{}
	ob, mock, _ := newMock(t, &fakeDialect{}, txoutbox.WithNotifier(n))
	ctx := context.Background()

	// Ordinary commit with events: one lazy wake, nothing inside the tx.
	mock.ExpectBegin()
	mock.ExpectExec(`^INSERT INTO outbox `).WillReturnResult(sqlmock.NewResult(0, 1))
	mock.ExpectCommit()
	tx, _ := ob.Begin(ctx, nil)
	if _, err := tx.Add(validEvent()); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if n.lazy.Load() != 1 || n.n.Load() != 0 || n.inTx.Load() != 0 {
		t.Fatalf("ordinary commit: lazy=%d notify=%d inTx=%d, want 1/0/0", n.lazy.Load(), n.n.Load(), n.inTx.Load())
	}

	// Ordinary commit without events: nothing at all.
	mock.ExpectBegin()
	mock.ExpectCommit()
	tx, _ = ob.Begin(ctx, nil)
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if n.lazy.Load() != 1 {
		t.Fatalf("a commit without events must not wake, lazy=%d", n.lazy.Load())
	}

	// Time-critical: NOTIFY inside the tx after the INSERT, before COMMIT;
	// then Notify once; no lazy wake.
	mock.ExpectBegin()
	mock.ExpectExec(`^INSERT INTO outbox `).WillReturnResult(sqlmock.NewResult(0, 1))
	mock.ExpectExec(`^SELECT pg_notify`).WillReturnResult(sqlmock.NewResult(0, 0))
	mock.ExpectCommit()
	tx, _ = ob.Begin(ctx, nil, txoutbox.TimeCritical())
	if _, err := tx.Add(validEvent()); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if n.inTx.Load() != 1 || n.n.Load() != 1 || n.lazy.Load() != 1 {
		t.Fatalf("critical commit: inTx=%d notify=%d lazy=%d, want 1/1/1", n.inTx.Load(), n.n.Load(), n.lazy.Load())
	}

	// A failing in-tx notify fails the flush: rollback, no wake.
	n.txErr = errBoom
	mock.ExpectBegin()
	mock.ExpectExec(`^INSERT INTO outbox `).WillReturnResult(sqlmock.NewResult(0, 1))
	mock.ExpectRollback()
	tx, _ = ob.Begin(ctx, nil, txoutbox.TimeCritical())
	if _, err := tx.Add(validEvent()); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); !errors.Is(err, txoutbox.ErrFlush) || !errors.Is(err, errBoom) {
		t.Fatalf("Commit = %v, want ErrFlush wrapping the notifier's error", err)
	}
	if n.n.Load() != 1 {
		t.Fatalf("no Notify after a failed flush, got %d", n.n.Load())
	}
	if err := mock.ExpectationsWereMet(); err != nil {
		t.Fatal(err)
	}
}
