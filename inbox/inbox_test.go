package inbox_test

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/jitoutbox/jitoutbox/inbox"
)

// TestRedelivery: the first delivery applies; a redelivery (and a
// republish, which carries the same id and payload) is a Duplicate and
// does not apply again.
func TestRedelivery(t *testing.T) {
	eachDB(t, inbox.Config{}, func(t *testing.T, e *env) {
		m := newMsg("o-1", 1, `{"total":42}`)
		if res, err := e.handle(m); err != nil || res != inbox.Applied {
			t.Fatalf("first delivery: %v, %v", res, err)
		}
		for range 2 {
			if res, err := e.handle(m); err != nil || res != inbox.Duplicate {
				t.Fatalf("redelivery: %v, %v", res, err)
			}
		}
		// The id in another spelling (upper case) is the same event.
		m.EventID = strings.ToUpper(m.EventID)
		if res, err := e.in.Handle(context.Background(), e.db, m, e.effect(strings.ToLower(m.EventID))); err != nil || res != inbox.Duplicate {
			t.Fatalf("upper-case id: %v, %v", res, err)
		}
		if n := e.effects(strings.ToLower(m.EventID)); n != 1 {
			t.Fatalf("side effect applied %d times", n)
		}
	})
}

// TestConcurrentDeliveries: goroutines deliver the same events at once;
// for each event exactly one applies and the others report Duplicate.
func TestConcurrentDeliveries(t *testing.T) {
	eachDB(t, inbox.Config{}, func(t *testing.T, e *env) {
		const events, consumers = 20, 4
		msgs := make([]inbox.Message, events)
		for i := range msgs {
			msgs[i] = newMsg("o-1", 0, "x")
		}
		var mu sync.Mutex
		applied := make(map[string]int)
		var wg sync.WaitGroup
		errs := make(chan error, consumers)
		for range consumers {
			wg.Go(func() {
				for _, m := range msgs {
					res, err := e.handle(m)
					if err != nil {
						errs <- err
						return
					}
					if res == inbox.Applied {
						mu.Lock()
						applied[m.EventID]++
						mu.Unlock()
					} else if res != inbox.Duplicate {
						errs <- errors.New("unexpected result " + res.String())
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		for _, m := range msgs {
			if applied[m.EventID] != 1 || e.effects(m.EventID) != 1 {
				t.Errorf("event %s: Applied %d times, %d side effects", m.EventID, applied[m.EventID], e.effects(m.EventID))
			}
		}
	})
}

// TestPayloadMismatch: an id reused with another payload is refused with a
// *MismatchError and not applied.
func TestPayloadMismatch(t *testing.T) {
	eachDB(t, inbox.Config{}, func(t *testing.T, e *env) {
		m := newMsg("o-1", 0, `{"total":42}`)
		if _, err := e.handle(m); err != nil {
			t.Fatal(err)
		}
		m.Payload = []byte(`{"total":43}`)
		res, err := e.handle(m)
		var me *inbox.MismatchError
		if !errors.Is(err, inbox.ErrPayloadMismatch) || !errors.As(err, &me) || res != inbox.Failed {
			t.Fatalf("reused id: %v, %v", res, err)
		}
		if me.EventID != m.EventID || len(me.Stored) != 32 || string(me.Stored) == string(me.Got) {
			t.Errorf("MismatchError %+v", me)
		}
		if n := e.effects(m.EventID); n != 1 {
			t.Fatalf("side effect applied %d times", n)
		}
	})
}

// TestBadInput: a message without an id, with an id that is not a UUID,
// or with a malformed seq is refused before any transaction: apply does
// not run and nothing is recorded.
func TestBadInput(t *testing.T) {
	eachDB(t, inbox.Config{}, func(t *testing.T, e *env) {
		for _, c := range []struct {
			name string
			edit func(*inbox.Message)
			want error
		}{
			{"no id", func(m *inbox.Message) { m.EventID = "" }, inbox.ErrNoEventID},
			{"not a uuid", func(m *inbox.Message) { m.EventID = "order-42" }, inbox.ErrBadEventID},
			{"truncated uuid", func(m *inbox.Message) { m.EventID = m.EventID[:35] }, inbox.ErrBadEventID},
			{"nil uuid", func(m *inbox.Message) { m.EventID = "00000000-0000-0000-0000-000000000000" }, inbox.ErrBadEventID},
			{"bad seq", func(m *inbox.Message) { m.Seq = -1 }, inbox.ErrBadMessage},
			{"bad utf-8", func(m *inbox.Message) { m.AggregateID = "o-\xff" }, inbox.ErrBadMessage},
			{"still encoded", func(m *inbox.Message) {
				m.Headers = map[string]string{"jitoutbox-encoding": "aes-256-gcm:k1"}
			}, inbox.ErrEncoded},
		} {
			m := newMsg("o-1", 1, "x")
			c.edit(&m)
			called := false
			for _, handle := range []func() (inbox.Result, error){
				func() (inbox.Result, error) {
					return e.in.Handle(context.Background(), e.db, m, func(context.Context, *sql.Tx) error { called = true; return nil })
				},
				func() (inbox.Result, error) {
					tx, err := e.db.BeginTx(context.Background(), nil)
					if err != nil {
						t.Fatal(err)
					}
					defer func() { _ = tx.Commit() }()
					return e.in.HandleTx(context.Background(), tx, m, func(context.Context, *sql.Tx) error { called = true; return nil })
				},
			} {
				res, err := handle()
				var me *inbox.MessageError
				if !errors.Is(err, c.want) || !errors.As(err, &me) || res != inbox.Failed || called {
					t.Errorf("%s: %v, %v (apply called: %v), want %v", c.name, res, err, called, c.want)
				}
			}
		}
		if n := e.processed(); n != 0 {
			t.Errorf("%d rows recorded", n)
		}
	})
}

// TestApplyError: when apply fails, its writes and the record are rolled
// back, and a redelivery applies.
func TestApplyError(t *testing.T) {
	eachDB(t, inbox.Config{}, func(t *testing.T, e *env) {
		m := newMsg("o-1", 0, "x")
		boom := errors.New("boom")
		res, err := e.in.Handle(context.Background(), e.db, m, func(ctx context.Context, tx *sql.Tx) error {
			if err := e.effect(m.EventID)(ctx, tx); err != nil {
				return err
			}
			return boom
		})
		if !errors.Is(err, boom) || res != inbox.Failed {
			t.Fatalf("failing apply: %v, %v", res, err)
		}
		if e.effects(m.EventID) != 0 || e.processed() != 0 {
			t.Fatal("the failed apply left rows behind")
		}
		if res, err := e.handle(m); err != nil || res != inbox.Applied {
			t.Fatalf("redelivery after a failure: %v, %v", res, err)
		}
	})
}

// TestHandleTx: in a caller-owned transaction that the caller commits
// whatever happens, a duplicate, a mismatch and a failed apply leave
// nothing of the event behind, while the caller's own writes commit.
func TestHandleTx(t *testing.T) {
	eachDB(t, inbox.Config{}, func(t *testing.T, e *env) {
		ctx := context.Background()
		m := newMsg("o-1", 0, "x")
		inTx := func(msg inbox.Message, apply inbox.ApplyFunc) (inbox.Result, error) {
			tx, err := e.db.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				if err := tx.Commit(); err != nil {
					t.Fatal(err)
				}
			}()
			if _, err := tx.ExecContext(ctx, e.q(`INSERT INTO effects (event_id, note) VALUES (?, ?)`), "caller", "own work"); err != nil {
				t.Fatal(err)
			}
			return e.in.HandleTx(ctx, tx, msg, apply)
		}
		if res, err := inTx(m, e.effect(m.EventID)); err != nil || res != inbox.Applied {
			t.Fatalf("first: %v, %v", res, err)
		}
		// A duplicate whose apply would write: apply does not run.
		if res, err := inTx(m, e.effect(m.EventID)); err != nil || res != inbox.Duplicate {
			t.Fatalf("duplicate: %v, %v", res, err)
		}
		bad := m
		bad.Payload = []byte("y")
		if res, err := inTx(bad, e.effect(m.EventID)); !errors.Is(err, inbox.ErrPayloadMismatch) || res != inbox.Failed {
			t.Fatalf("mismatch: %v, %v", res, err)
		}
		// A failed apply, committed by a careless caller: rolled back to the savepoint.
		m2 := newMsg("o-1", 0, "z")
		boom := errors.New("boom")
		if _, err := inTx(m2, func(ctx context.Context, tx *sql.Tx) error {
			if err := e.effect(m2.EventID)(ctx, tx); err != nil {
				return err
			}
			return boom
		}); !errors.Is(err, boom) {
			t.Fatalf("failing apply: %v", err)
		}
		if e.effects(m.EventID) != 1 || e.effects(m2.EventID) != 0 || e.processed() != 1 {
			t.Fatalf("effects %d and %d, %d processed", e.effects(m.EventID), e.effects(m2.EventID), e.processed())
		}
		if n := e.effects("caller"); n != 4 {
			t.Fatalf("the caller's own writes: %d, want 4", n)
		}
	})
}
