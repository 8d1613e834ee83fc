package txoutbox_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/txoutbox"
	"github.com/jmoiron/sqlx"
)

// domainPay is a domain function that only receives a context: it
// registers its event with the package-level Add.
func domainPay(ctx context.Context, order string) error {
	_, err := txoutbox.Add(ctx, txoutbox.Event{AggregateType: "order", AggregateID: order, EventType: "order.paid", Payload: []byte(`{}`)})
	return err
}

// ownAll returns a fakeRelay over e that owns every partition.
func ownAll(e *env) *fakeRelay {
	r := &fakeRelay{db: e.db, d: e.dialect, owned: map[int]bool{}}
	for p := range dialects.DefaultPartitions {
		r.owned[p] = true
	}
	return r
}

// TestAdopt: events registered through an adopted transaction, directly or
// by a domain function given only the context, are written by Commit
// through the wrapper, and the relay hears of it.
func TestAdopt(t *testing.T) {
	forEachTarget(t, func(t *testing.T, e *env) {
		r := ownAll(e)
		ob := e.outbox(t, txoutbox.WithRelay(r))
		ctx := context.Background()
		raw, err := e.db.BeginTx(ctx, nil) // begun by "the framework"
		if err != nil {
			t.Fatal(err)
		}
		tx, err := ob.Adopt(ctx, raw, txoutbox.TimeCritical())
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback() //nolint:errcheck // harmless after Commit
		if _, err := tx.ExecContext(ctx, e.q("INSERT INTO orders (id, state) VALUES (?, ?)"), "a1", "paid"); err != nil {
			t.Fatal(err)
		}
		if err := domainPay(tx.Context(), "a1"); err != nil {
			t.Fatalf("package-level Add on an adopted transaction: %v", err)
		}
		if got, ok := txoutbox.FromContext(tx.Context()); !ok || got != tx {
			t.Fatal("FromContext does not return the adopted *Tx")
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		if ids := e.outboxIDs(t); len(ids) != 1 || e.orderCount(t) != 1 {
			t.Fatalf("outbox %d rows, orders %d; want 1 and 1", len(ids), e.orderCount(t))
		}
		if c := r.snapshot(); len(c) != 1 || !c[0].Critical || len(c[0].Records)+boolInt(c[0].Read) == 0 {
			t.Fatalf("relay got %+v, want one critical hand-over", c)
		}
		if err := tx.Commit(); !errors.Is(err, sql.ErrTxDone) {
			t.Fatalf("second Commit: %v", err)
		}
	})
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestAdoptMisuse: bad arguments are refused; a raw transaction committed
// directly loses its events, which a later Commit through the wrapper
// reports (sql.ErrTxDone) and the end of the context logs.
func TestAdoptMisuse(t *testing.T) {
	db, _ := openSQLite(t)
	d := sqliteDialect(t, db)
	var logs syncBuffer
	logged := make(chan struct{}, 1)
	logs.onWrite = func() {
		select {
		case logged <- struct{}{}:
		default:
		}
	}
	ob, err := txoutbox.New(db, d, txoutbox.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ob.Adopt(context.Background(), nil); !errors.Is(err, txoutbox.ErrInvalidOption) {
		t.Fatalf("Adopt(nil tx): %v", err)
	}
	raw, err := db.BeginTx(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	//nolint:staticcheck // a nil context is the bad input under test
	if _, err := ob.Adopt(nil, raw); !errors.Is(err, txoutbox.ErrInvalidOption) {
		t.Fatalf("Adopt(nil ctx): %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	tx, err := ob.Adopt(ctx, raw)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Add(validEvent()); err != nil {
		t.Fatal(err)
	}
	if err := raw.Commit(); err != nil { // the misuse
		t.Fatal(err)
	}
	cancel()
	<-logged
	if s := logs.String(); !strings.Contains(s, "events=1") || !strings.Contains(s, "committed directly") {
		t.Fatalf("log: %q", s)
	}
	if err := tx.Commit(); !errors.Is(err, sql.ErrTxDone) {
		t.Fatalf("Commit through the wrapper after a direct commit: %v, want sql.ErrTxDone", err)
	}
	st, err := d.Stats(context.Background(), db)
	if err != nil || st.Pending != 0 {
		t.Fatalf("pending = %d (%v), want 0", st.Pending, err)
	}

	// Direct commit, then Commit through the wrapper with a live context:
	// the flush fails on the finished transaction.
	raw, _ = db.BeginTx(context.Background(), nil)
	tx, _ = ob.Adopt(context.Background(), raw)
	if _, err := tx.Add(validEvent()); err != nil {
		t.Fatal(err)
	}
	_ = raw.Commit()
	if err := tx.Commit(); !errors.Is(err, sql.ErrTxDone) || !errors.Is(err, txoutbox.ErrFlush) {
		t.Fatalf("Commit after a direct commit: %v, want ErrFlush and sql.ErrTxDone", err)
	}
}

// TestAdoptX adopts a *sqlx.Tx.
func TestAdoptX(t *testing.T) {
	forEachTarget(t, func(t *testing.T, e *env) {
		dbx := sqlx.NewDb(e.db, e.driver)
		ob, err := txoutbox.NewX(dbx, e.dialect)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ob.AdoptX(context.Background(), nil); !errors.Is(err, txoutbox.ErrInvalidOption) {
			t.Fatalf("AdoptX(nil): %v", err)
		}
		raw, err := dbx.BeginTxx(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		tx, err := ob.AdoptX(context.Background(), raw)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback() //nolint:errcheck // harmless after Commit
		if _, err := tx.NamedExec("INSERT INTO orders (id, state) VALUES (:id, :state)", map[string]any{"id": "x1", "state": "paid"}); err != nil {
			t.Fatal(err)
		}
		if err := domainPay(tx.Context(), "x1"); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		if len(e.outboxIDs(t)) != 1 || e.orderCount(t) != 1 {
			t.Fatal("adopted sqlx transaction did not commit its order and event")
		}
	})
}

// syncBuffer is a bytes.Buffer safe for the logger's goroutine.
type syncBuffer struct {
	mu      sync.Mutex
	b       bytes.Buffer
	onWrite func()
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	n, err := s.b.Write(p)
	s.mu.Unlock()
	if s.onWrite != nil {
		s.onWrite()
	}
	return n, err
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
