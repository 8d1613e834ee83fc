package txoutbox_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/internal/testdb"
	"github.com/jitoutbox/jitoutbox/txoutbox"
	"github.com/jmoiron/sqlx"
)

// env is one isolated database with the outbox and an orders table.
type env struct {
	db      *sql.DB
	driver  string
	dialect dialects.Dialect
}

var driverNames = map[string]string{
	"sqlite": "sqlite", "postgres-libpq": "postgres", "postgres-pgx": "pgx", "mysql": "mysql",
}

// forEachTarget runs f against every database of testdb.Targets(), each
// subtest on a fresh database (servers whose variable is unset are skipped).
func forEachTarget(t *testing.T, f func(t *testing.T, e *env)) {
	t.Helper()
	for _, tg := range testdb.Targets() {
		t.Run(tg.Name, func(t *testing.T) {
			d := testdb.NewDialect(t, tg.Dialect)
			db, _ := tg.Open(t)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := d.Migrate(ctx, db); err != nil {
				t.Fatalf("migrate: %v", err)
			}
			if _, err := db.ExecContext(ctx, "CREATE TABLE orders (id VARCHAR(64) PRIMARY KEY, state VARCHAR(32) NOT NULL)"); err != nil {
				t.Fatalf("create orders: %v", err)
			}
			f(t, &env{db: db, driver: driverNames[tg.Name], dialect: d})
		})
	}
}

// q rebinds a query written with ? placeholders for the target's driver.
func (e *env) q(query string) string {
	return sqlx.Rebind(sqlx.BindType(e.driver), query)
}

func (e *env) count(t *testing.T, query string, args ...any) int {
	t.Helper()
	var n int
	if err := e.db.QueryRowContext(context.Background(), e.q(query), args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

func (e *env) orderCount(t *testing.T) int { return e.count(t, "SELECT COUNT(*) FROM orders") }

func (e *env) outboxIDs(t *testing.T) []string {
	t.Helper()
	rows, err := e.db.QueryContext(context.Background(), "SELECT id FROM "+e.dialect.Table()+" ORDER BY seq")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return ids
}

func (e *env) outbox(t *testing.T, opts ...txoutbox.Option) *txoutbox.Outbox {
	t.Helper()
	ob, err := txoutbox.New(e.db, e.dialect, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return ob
}

// placeOrder inserts an order and adds n events in tx.
func (e *env) placeOrder(t *testing.T, tx *txoutbox.Tx, id string, n int) []string {
	t.Helper()
	ctx := context.Background()
	if _, err := tx.ExecContext(ctx, e.q("INSERT INTO orders (id, state) VALUES (?, ?)"), id, "placed"); err != nil {
		t.Fatalf("insert order: %v", err)
	}
	ids := make([]string, 0, n)
	for i := range n {
		eid, err := tx.Add(txoutbox.Event{AggregateType: "order", AggregateID: id, EventType: fmt.Sprintf("order.e%d", i),
			Payload: []byte(fmt.Sprintf(`{"order":%q,"n":%d}`, id, i))})
		if err != nil {
			t.Fatalf("add: %v", err)
		}
		ids = append(ids, eid)
	}
	return ids
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// failingDialect wraps a dialect and makes Insert fail, optionally after
// running the real INSERT with a duplicate id.
type failingDialect struct {
	dialects.Dialect
	dupID string // when set, rewrite every id to this existing one
	err   error  // when set, return this without touching the database
}

func (f *failingDialect) Insert(ctx context.Context, q dialects.Execer, events []dialects.Event) error {
	if f.err != nil {
		return f.err
	}
	evs := append([]dialects.Event(nil), events...)
	for i := range evs {
		evs[i].ID = f.dupID
	}
	return f.Dialect.Insert(ctx, q, evs)
}

func TestIntegration(t *testing.T) {
	forEachTarget(t, func(t *testing.T, e *env) {
		ctx := context.Background()

		t.Run("commit writes business row and events together", func(t *testing.T) {
			ob := e.outbox(t)
			tx, err := ob.Begin(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback()
			ids := e.placeOrder(t, tx, "c1", 3)
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
			if n := e.count(t, "SELECT COUNT(*) FROM orders WHERE id = ?", "c1"); n != 1 {
				t.Fatalf("%d orders, want 1", n)
			}
			if got := e.outboxIDs(t); !equalStrings(got, ids) {
				t.Fatalf("outbox ids %v, want %v in order", got, ids)
			}
		})

		t.Run("rollback discards both", func(t *testing.T) {
			before, beforeIDs := e.orderCount(t), e.outboxIDs(t)
			ob := e.outbox(t)
			tx, err := ob.Begin(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			e.placeOrder(t, tx, "r1", 2)
			if err := tx.Rollback(); err != nil {
				t.Fatal(err)
			}
			if e.orderCount(t) != before || len(e.outboxIDs(t)) != len(beforeIDs) {
				t.Fatal("rolled-back transaction left rows behind")
			}
		})

		t.Run("flush failure after business write rolls back both", func(t *testing.T) {
			existing := e.outboxIDs(t)
			if len(existing) == 0 {
				t.Fatal("needs the committed events of the first subtest")
			}
			for _, fd := range []*failingDialect{
				{Dialect: e.dialect, err: errBoom},
				{Dialect: e.dialect, dupID: existing[0]}, // a real unique-key violation
			} {
				before := e.orderCount(t)
				n := &countingNotifier{}
				ob, err := txoutbox.New(e.db, fd, txoutbox.WithNotifier(n))
				if err != nil {
					t.Fatal(err)
				}
				tx, err := ob.Begin(ctx, nil, txoutbox.TimeCritical())
				if err != nil {
					t.Fatal(err)
				}
				e.placeOrder(t, tx, "f1", 2)
				err = tx.Commit()
				if !errors.Is(err, txoutbox.ErrFlush) {
					t.Fatalf("Commit = %v, want ErrFlush", err)
				}
				if fd.err != nil && !errors.Is(err, errBoom) {
					t.Fatalf("Commit = %v does not wrap the cause", err)
				}
				if e.orderCount(t) != before {
					t.Fatal("business row committed although the events were not")
				}
				if got := e.outboxIDs(t); len(got) != len(existing) {
					t.Fatalf("outbox has %d rows, want %d", len(got), len(existing))
				}
				if n.n.Load() != 0 {
					t.Fatal("notified after a failed flush")
				}
				if err := tx.Rollback(); !errors.Is(err, sql.ErrTxDone) {
					t.Fatalf("Rollback after failed flush = %v, want sql.ErrTxDone", err)
				}
			}
		})

		t.Run("ErrTxDone after commit and rollback", func(t *testing.T) {
			ob := e.outbox(t)
			for _, end := range []string{"commit", "rollback"} {
				stmt, err := e.db.PrepareContext(ctx, "SELECT 1")
				if err != nil {
					t.Fatal(err)
				}
				defer stmt.Close()
				tx, err := ob.Begin(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				if end == "commit" {
					err = tx.Commit()
				} else {
					err = tx.Rollback()
				}
				if err != nil {
					t.Fatal(err)
				}
				assertDone(t, end, tx, stmt)
			}
		})

		t.Run("context cancellation rolls back", func(t *testing.T) {
			before, beforeIDs := e.orderCount(t), len(e.outboxIDs(t))
			n := &countingNotifier{}
			ob := e.outbox(t, txoutbox.WithNotifier(n))
			cctx, cancel := context.WithCancel(ctx)
			tx, err := ob.Begin(cctx, nil, txoutbox.TimeCritical())
			if err != nil {
				t.Fatal(err)
			}
			e.placeOrder(t, tx, "x1", 1)
			cancel()
			if _, err := tx.Add(validEvent()); !errors.Is(err, context.Canceled) || !errors.Is(err, sql.ErrTxDone) {
				t.Fatalf("Add after cancel = %v, want context.Canceled and sql.ErrTxDone", err)
			}
			if err := tx.Commit(); !errors.Is(err, context.Canceled) || !errors.Is(err, sql.ErrTxDone) {
				t.Fatalf("Commit after cancel = %v, want context.Canceled and sql.ErrTxDone", err)
			}
			if e.orderCount(t) != before || len(e.outboxIDs(t)) != beforeIDs {
				t.Fatal("cancelled transaction left rows behind")
			}
			if n.n.Load() != 0 {
				t.Fatal("notified for a cancelled transaction")
			}
			if err := tx.Rollback(); !errors.Is(err, sql.ErrTxDone) {
				t.Fatalf("Rollback after cancelled Commit = %v", err)
			}
		})

		t.Run("bad inputs are refused and the tx stays usable", func(t *testing.T) {
			ob := e.outbox(t, txoutbox.WithMaxPayload(16))
			tx, err := ob.Begin(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback()
			for _, c := range badEvents() {
				ev := validEvent()
				ev.Payload = []byte(`{}`)
				c.mutate(&ev)
				if _, err := tx.Add(ev); !errors.Is(err, txoutbox.ErrInvalidEvent) {
					t.Fatalf("%s: Add = %v, want ErrInvalidEvent", c.name, err)
				}
			}
			before := e.outboxIDs(t)
			ev := validEvent()
			ev.Payload = []byte(`{}`)
			id, err := tx.Add(ev)
			if err != nil {
				t.Fatal(err)
			}
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
			after := e.outboxIDs(t)
			if len(after) != len(before)+1 || after[len(after)-1] != id {
				t.Fatalf("outbox gained %v, want exactly [%s]", after[len(before):], id)
			}
		})

		t.Run("large transaction", func(t *testing.T) {
			before := len(e.outboxIDs(t))
			ob := e.outbox(t)
			tx, err := ob.Begin(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback()
			// Splitting past the bind limit is the dialect's business
			// (dialecttest); here: a big batch keeps registration order.
			n := min(500, e.dialect.MaxInsertRows()+1)
			ids := e.placeOrder(t, tx, "big", n)
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
			if got := e.outboxIDs(t)[before:]; !equalStrings(got, ids) {
				t.Fatalf("large tx: %d rows stored, want %d in registration order", len(got), len(ids))
			}
		})

		t.Run("notify once per time-critical commit", func(t *testing.T) {
			n := &countingNotifier{}
			ob := e.outbox(t, txoutbox.WithNotifier(n))
			run := func(id string, critical, eventCritical, commit bool) {
				var opts []txoutbox.TxOption
				if critical {
					opts = append(opts, txoutbox.TimeCritical())
				}
				tx, err := ob.Begin(ctx, nil, opts...)
				if err != nil {
					t.Fatal(err)
				}
				e.placeOrder(t, tx, id, 1)
				ev := validEvent()
				ev.TimeCritical = eventCritical
				if _, err := tx.Add(ev); err != nil {
					t.Fatal(err)
				}
				if commit {
					err = tx.Commit()
				} else {
					err = tx.Rollback()
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			run("n1", false, false, true)
			if got := n.n.Load(); got != 0 {
				t.Fatalf("plain commit notified %d times", got)
			}
			run("n2", true, false, true)
			if got := n.n.Load(); got != 1 {
				t.Fatalf("after a critical commit: %d notifies, want 1", got)
			}
			run("n3", false, true, true)
			if got := n.n.Load(); got != 2 {
				t.Fatalf("after a critical event commit: %d notifies, want 2", got)
			}
			run("n4", true, true, false)
			if got := n.n.Load(); got != 2 {
				t.Fatalf("rollback notified: %d notifies, want 2", got)
			}
		})

		t.Run("stored fields round-trip", func(t *testing.T) {
			if isFake(e.dialect) {
				t.Skip("needs the real dialect's Read")
			}
			ob := e.outbox(t)
			tx, err := ob.Begin(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback()
			in := []txoutbox.Event{
				{AggregateType: "payment", AggregateID: "rt-1", EventType: "payment.captured",
					Payload: []byte(`{"amount": 12.5}`), Headers: map[string]string{"X-Trace": "abc", "X-Uni": "välue"},
					IdempotencyKey: txoutbox.IdempotencyKey("payment", "rt-1"), TimeCritical: true},
				{AggregateType: "payment", AggregateID: "rt-1", EventType: "payment.blob", Payload: []byte{0, 1, 2, 0xff}},
				{AggregateType: "payment", AggregateID: "rt-1", EventType: "payment.text", Payload: []byte("hi"), ContentType: "text/plain"},
				{AggregateType: "payment", AggregateID: "rt-1", EventType: "payment.empty"},
			}
			var ids []string
			for _, ev := range in {
				id, err := tx.Add(ev)
				if err != nil {
					t.Fatal(err)
				}
				ids = append(ids, id)
			}
			want := tx.Events()
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
			n, err := e.dialect.Partitions(ctx, e.db)
			if err != nil {
				t.Fatal(err)
			}
			parts := make([]int, n)
			for i := range parts {
				parts[i] = i
			}
			all, err := e.dialect.Read(ctx, e.db, dialects.ReadRequest{Partitions: parts, Limit: 1000, Now: time.Now().Add(time.Second)})
			if err != nil {
				t.Fatal(err)
			}
			var recs []dialects.Record
			for _, r := range all.Records {
				if slices.Contains(ids, r.ID) {
					recs = append(recs, r)
				}
			}
			if len(recs) != len(want) {
				t.Fatalf("claimed %d records, want %d", len(recs), len(want))
			}
			for i, r := range recs {
				w := want[i]
				w.Critical = true // the tx was time-critical through its first event
				if r.ID != w.ID || r.AggregateType != w.AggregateType || r.AggregateID != w.AggregateID ||
					r.EventType != w.EventType || string(r.Payload) != string(w.Payload) || r.ContentType != w.ContentType ||
					r.IdempotencyKey != w.IdempotencyKey || r.Critical != w.Critical || !r.CreatedAt.Equal(w.CreatedAt) ||
					len(r.Headers) != len(w.Headers) {
					t.Fatalf("record %d:\n got %+v\nwant %+v", i, r.Event, w)
				}
				for k, v := range w.Headers {
					if r.Headers[k] != v {
						t.Fatalf("record %d header %q = %q, want %q", i, k, r.Headers[k], v)
					}
				}
			}
			if want[0].ContentType != "application/json" || want[1].ContentType != "application/octet-stream" ||
				want[3].ContentType != "application/octet-stream" {
				t.Fatalf("content types %q %q %q", want[0].ContentType, want[1].ContentType, want[3].ContentType)
			}
		})

		t.Run("sqlx flavour", func(t *testing.T) {
			type order struct {
				ID    string `db:"id"`
				State string `db:"state"`
			}
			dbx := sqlx.NewDb(e.db, e.driver)
			n := &countingNotifier{}
			ob, err := txoutbox.NewX(dbx, e.dialect, txoutbox.WithNotifier(n))
			if err != nil {
				t.Fatal(err)
			}
			before := len(e.outboxIDs(t))
			tx, err := ob.Beginx(ctx, nil, txoutbox.TimeCritical())
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback()
			if tx.DriverName() != e.driver {
				t.Fatalf("DriverName %q, want %q", tx.DriverName(), e.driver)
			}
			if _, err := tx.NamedExecContext(ctx, "INSERT INTO orders (id, state) VALUES (:id, :state)", order{"sx1", "placed"}); err != nil {
				t.Fatal(err)
			}
			var got order
			if err := tx.GetContext(ctx, &got, tx.Rebind("SELECT id, state FROM orders WHERE id = ?"), "sx1"); err != nil || got.State != "placed" {
				t.Fatalf("Get inside tx = (%+v, %v)", got, err)
			}
			var ids []string
			if err := tx.Select(&ids, tx.Rebind("SELECT id FROM orders WHERE id = ?"), "sx1"); err != nil || len(ids) != 1 {
				t.Fatalf("Select = (%v, %v)", ids, err)
			}
			id, err := txoutbox.Add(tx.Context(), txoutbox.Event{AggregateType: "order", AggregateID: "sx1", EventType: "order.placed"})
			if err != nil {
				t.Fatal(err)
			}
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
			if all := e.outboxIDs(t); len(all) != before+1 || all[before] != id {
				t.Fatal("sqlx tx did not write its event")
			}
			if e.count(t, "SELECT COUNT(*) FROM orders WHERE id = ?", "sx1") != 1 || n.n.Load() != 1 {
				t.Fatal("sqlx tx: business row or notify missing")
			}
			var x order
			for name, err := range map[string]error{
				"Get":        tx.Get(&x, "SELECT id, state FROM orders"),
				"Unsafe.Get": tx.Unsafe().Get(&x, "SELECT id, state FROM orders"),
				"Select":     tx.Select(&ids, "SELECT id FROM orders"),
				"QueryRowx":  tx.QueryRowx("SELECT 1").Scan(new(int)),
				"Commit":     tx.Commit(),
				"Rollback":   tx.Rollback(),
			} {
				if !errors.Is(err, sql.ErrTxDone) {
					t.Errorf("after commit: %s = %v, want sql.ErrTxDone", name, err)
				}
			}
			if _, err := tx.NamedExec("UPDATE orders SET state = :state", order{State: "x"}); !errors.Is(err, sql.ErrTxDone) {
				t.Errorf("NamedExec after commit = %v", err)
			}
			if _, err := tx.Preparex("SELECT 1"); !errors.Is(err, sql.ErrTxDone) {
				t.Errorf("Preparex after commit = %v", err)
			}
		})

		t.Run("concurrent transactions", func(t *testing.T) {
			const workers, perWorker = 8, 50
			beforeOrders, beforeEvents := e.orderCount(t), len(e.outboxIDs(t))
			n := &countingNotifier{}
			ob := e.outbox(t, txoutbox.WithNotifier(n))
			var wg sync.WaitGroup
			errs := make(chan error, workers)
			var mu sync.Mutex
			committed, critical := 0, 0
			for w := range workers {
				wg.Go(func() {
					for i := range perWorker {
						crit := i%3 == 0
						commit := i%5 != 4
						if err := concurrentTx(ctx, e, ob, fmt.Sprintf("w%d-%d", w, i), crit, commit); err != nil {
							errs <- err
							return
						}
						if commit {
							mu.Lock()
							committed++
							if crit {
								critical++
							}
							mu.Unlock()
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			if got := e.orderCount(t) - beforeOrders; got != committed {
				t.Fatalf("%d orders committed, want %d", got, committed)
			}
			if got := len(e.outboxIDs(t)) - beforeEvents; got != 2*committed {
				t.Fatalf("%d events committed, want %d", got, 2*committed)
			}
			if got := n.n.Load(); got != int64(critical) {
				t.Fatalf("%d notifies, want %d", got, critical)
			}
		})
	})
}

// concurrentTx runs one transaction of the concurrency test: an order and
// two events, the second added concurrently with the first via the context.
func concurrentTx(ctx context.Context, e *env, ob *txoutbox.Outbox, id string, critical, commit bool) error {
	var opts []txoutbox.TxOption
	if critical {
		opts = append(opts, txoutbox.TimeCritical())
	}
	tx, err := ob.Begin(ctx, nil, opts...)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, e.q("INSERT INTO orders (id, state) VALUES (?, ?)"), id, "placed"); err != nil {
		return fmt.Errorf("%s: insert: %w", id, err)
	}
	var wg sync.WaitGroup
	addErrs := make([]error, 2)
	for i := range 2 {
		wg.Go(func() {
			_, addErrs[i] = txoutbox.Add(tx.Context(), txoutbox.Event{AggregateType: "order", AggregateID: id, EventType: "order.placed"})
		})
	}
	wg.Wait()
	if err := errors.Join(addErrs...); err != nil {
		return err
	}
	if !commit {
		return tx.Rollback()
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("%s: commit: %w", id, err)
	}
	return nil
}

// assertDone checks that every method of a finished tx reports sql.ErrTxDone.
func assertDone(t *testing.T, label string, tx *txoutbox.Tx, stmt *sql.Stmt) {
	t.Helper()
	ctx := context.Background()
	check := func(name string, err error) {
		t.Helper()
		if !errors.Is(err, sql.ErrTxDone) {
			t.Errorf("after %s: %s = %v, want sql.ErrTxDone", label, name, err)
		}
	}
	var x int
	_, err := tx.Exec("SELECT 1")
	check("Exec", err)
	_, err = tx.ExecContext(ctx, "SELECT 1")
	check("ExecContext", err)
	_, err = tx.Query("SELECT 1")
	check("Query", err)
	_, err = tx.QueryContext(ctx, "SELECT 1")
	check("QueryContext", err)
	check("QueryRow.Scan", tx.QueryRow("SELECT 1").Scan(&x))
	check("QueryRowContext.Scan", tx.QueryRowContext(ctx, "SELECT 1").Scan(&x))
	_, err = tx.Prepare("SELECT 1")
	check("Prepare", err)
	_, err = tx.PrepareContext(ctx, "SELECT 1")
	check("PrepareContext", err)
	check("Stmt.QueryRow.Scan", tx.Stmt(stmt).QueryRow().Scan(&x))
	_, err = tx.StmtContext(ctx, stmt).ExecContext(ctx)
	check("StmtContext.Exec", err)
	_, err = tx.Add(validEvent())
	check("Add", err)
	check("Commit", tx.Commit())
	check("Rollback", tx.Rollback())
}
