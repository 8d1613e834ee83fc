package txoutbox_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"math"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/DATA-DOG/go-sqlmock"
	"github.com/jitoutbox/jitoutbox/dialects"
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

// WithRelay: after a time-critical commit the rows of partitions the relay
// owns are handed over; the Notifier is told only when some event belongs
// to a partition the relay does not own. Ordinary commits give the relay a
// lazy commit (Critical false) and no Notify.
func TestRelayHandOver(t *testing.T) {
	db, mock, err := sqlmock.New(sqlmock.QueryMatcherOption(sqlmock.QueryMatcherRegexp))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	d := &fakeDialect{}
	other := txoutbox.Event{AggregateType: "order", AggregateID: "elsewhere-1", EventType: "order.placed", Payload: []byte(`{}`)}
	otherPart := dialects.PartitionOf(other.AggregateType, other.AggregateID, 8)
	if otherPart == dialects.PartitionOf("order", "42", 8) {
		t.Fatal("pick another aggregate id: both in one partition")
	}
	r := &fakeRelay{db: db, d: d, owned: map[int]bool{}}
	for p := range 8 {
		r.owned[p] = p != otherPart
	}
	n := &countingNotifier{}
	ob, err := txoutbox.New(db, d, txoutbox.WithRelay(r), txoutbox.WithNotifier(n))
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		mock.ExpectBegin()
		mock.ExpectExec(`^INSERT INTO outbox `).WillReturnResult(sqlmock.NewResult(0, 1))
		mock.ExpectCommit()
	}
	critical := []txoutbox.TxOption{txoutbox.TimeCritical()}
	commitEvents(t, ob, critical, validEvent(), other) // one owned, one elsewhere
	commitEvents(t, ob, critical, validEvent())        // owned only
	commitEvents(t, ob, nil, validEvent())             // ordinary
	if got := n.n.Load(); got != 1 {
		t.Errorf("Notify called %d times, want 1 (only the commit with an event of another relay's partition)", got)
	}
	if got := n.woken(); len(got) != 1 || !slices.Equal(got[0], []int{otherPart}) {
		t.Errorf("Notify named %v, want [[%d]]: only the partition the relay does not own", got, otherPart)
	}
	cs := r.snapshot()
	if len(cs) != 3 {
		t.Fatalf("relay got %d commits, want 3", len(cs))
	}
	if !cs[0].Critical || len(cs[0].Records) != 1 || cs[0].Records[0].AggregateID != "42" || cs[0].Read {
		t.Errorf("first commit %+v: want the owned event handed over", cs[0])
	}
	if !cs[1].Critical || len(cs[1].Records) != 1 {
		t.Errorf("second commit %+v", cs[1])
	}
	if cs[2].Critical || len(cs[2].Records) != 0 {
		t.Errorf("ordinary commit %+v: want a lazy commit without records", cs[2])
	}
	for _, b := range d.Batches() {
		for _, e := range b {
			if want := dialects.PartitionOf(e.AggregateType, e.AggregateID, 8); e.Partition != want {
				t.Errorf("event of %s written to partition %d, want %d", e.AggregateID, e.Partition, want)
			}
		}
	}
	if err := mock.ExpectationsWereMet(); err != nil {
		t.Error(err)
	}
}

// WithRelay refuses a relay that reads another database.
func TestWithRelayOtherDB(t *testing.T) {
	db1, _, _ := sqlmock.New()
	defer db1.Close()
	db2, _, _ := sqlmock.New()
	defer db2.Close()
	d := &fakeDialect{}
	if _, err := txoutbox.New(db1, d, txoutbox.WithRelay(&fakeRelay{db: db2, d: d})); !errors.Is(err, txoutbox.ErrInvalidOption) {
		t.Fatalf("New with a relay on another DB: %v, want ErrInvalidOption", err)
	}
	if _, err := txoutbox.New(db1, d, txoutbox.WithRelay(nil)); !errors.Is(err, txoutbox.ErrInvalidOption) {
		t.Fatalf("WithRelay(nil): %v, want ErrInvalidOption", err)
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
			// The first flush of an Outbox reads the table's partition count
			// and schema version (and, on MySQL, the server's version): a
			// version past every dialect's (a later release's table, which
			// writers of this one keep writing to), so that the test needs
			// no change with each migration.
			cols, vals := []string{"partitions", "version"}, []driver.Value{64, math.MaxInt32}
			if name == "mysql" {
				cols, vals = append(cols, "server"), append(vals, "10.11.0-MariaDB")
			}
			mock.ExpectQuery(`(?s)SELECT .*partitions`).WillReturnRows(sqlmock.NewRows(cols).AddRow(vals...))
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
	lazy    atomic.Int64
	inTx    atomic.Int64
	txErr   error
	txParts [][]int // NotifyInTx's partitions, under countingNotifier.mu
}

func (l *lazyTxNotifier) NotifyLazy() { l.lazy.Add(1) }

func (l *lazyTxNotifier) NotifyInTx(ctx context.Context, ex notify.Execer, parts []int) error {
	l.inTx.Add(1)
	l.mu.Lock()
	l.txParts = append(l.txParts, slices.Clone(parts))
	l.mu.Unlock()
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

// A time-critical commit names the partitions of its events to the
// Notifier, in and after the transaction, each once, so that only their
// owners look; a commit of more partitions than a wake names wakes any
// partition (nil).
func TestNotifyNamesThePartitions(t *testing.T) {
	const parts = 256
	event := func(id int) txoutbox.Event {
		ev := validEvent()
		ev.AggregateID = strconv.Itoa(id)
		return ev
	}
	commit := func(t *testing.T, ob *txoutbox.Outbox, mock sqlmock.Sqlmock, evs []txoutbox.Event) {
		t.Helper()
		mock.ExpectBegin()
		mock.ExpectExec(`^INSERT INTO outbox `).WillReturnResult(sqlmock.NewResult(0, int64(len(evs))))
		mock.ExpectExec(`^SELECT pg_notify`).WillReturnResult(sqlmock.NewResult(0, 0))
		mock.ExpectCommit()
		commitEvents(t, ob, []txoutbox.TxOption{txoutbox.TimeCritical()}, evs...)
	}
	n := &lazyTxNotifier{}
	ob, mock, _ := newMock(t, &fakeDialect{parts: parts}, txoutbox.WithNotifier(n))

	// Three events, two of one aggregate: two partitions, each named once.
	few := []txoutbox.Event{event(1), event(2), event(1)}
	want := []int{dialects.PartitionOf("order", "1", parts), dialects.PartitionOf("order", "2", parts)}
	if want[0] == want[1] {
		t.Fatal("pick other aggregate ids: both in one partition")
	}
	slices.Sort(want)
	commit(t, ob, mock, few)
	// Enough aggregates to cover more partitions than a wake names.
	var many []txoutbox.Event
	seen := map[int]bool{}
	for id := 0; len(seen) <= notify.MaxPayloadPartitions; id++ {
		many = append(many, event(id))
		seen[dialects.PartitionOf("order", strconv.Itoa(id), parts)] = true
	}
	commit(t, ob, mock, many)
	if err := mock.ExpectationsWereMet(); err != nil {
		t.Fatal(err)
	}

	got := n.woken()
	if len(got) != 2 || !slices.Equal(got[0], want) {
		t.Fatalf("Notify named %v; want %v first", got, want)
	}
	if got[1] != nil {
		t.Fatalf("a commit of %d partitions named %d of them; want nil (any partition)", len(seen), len(got[1]))
	}
	n.mu.Lock()
	inTx := n.txParts
	n.mu.Unlock()
	if len(inTx) != 2 || !slices.Equal(slices.Sorted(slices.Values(inTx[0])), want) || inTx[1] != nil {
		t.Fatalf("NotifyInTx named %v; want %v, then nil", inTx, want)
	}
}
