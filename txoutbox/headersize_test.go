package txoutbox_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/txoutbox"
)

// headersOf returns headers whose names and values add up to n bytes.
func headersOf(n int) map[string]string {
	return map[string]string{"X-A": strings.Repeat("a", n/2-3), "X-B": strings.Repeat("b", n-n/2-3)}
}

// Headers of MaxHeaderBytes are accepted; one byte more (by the caller or
// by a header injector) is refused at Add with a *ValidationError matching
// ErrHeadersTooLarge, and nothing is buffered.
func TestAddHeaderBound(t *testing.T) {
	extra := func(_ context.Context, h map[string]string) { h["traceparent"] = "00-1" }
	for _, c := range []struct {
		name    string
		opts    []txoutbox.Option
		headers map[string]string
		refused bool
	}{
		{"at the bound", nil, headersOf(txoutbox.MaxHeaderBytes), false},
		{"one byte over", nil, headersOf(txoutbox.MaxHeaderBytes + 1), true},
		{"over with an injector", []txoutbox.Option{txoutbox.WithHeaderInjector(extra)}, headersOf(txoutbox.MaxHeaderBytes), true},
	} {
		t.Run(c.name, func(t *testing.T) {
			ob, mock, _ := newMock(t, &fakeDialect{}, c.opts...)
			mock.ExpectBegin()
			mock.ExpectRollback()
			tx, err := ob.Begin(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback() //nolint:errcheck // test clean-up
			ev := validEvent()
			ev.Headers = c.headers
			_, err = tx.Add(ev)
			if !c.refused {
				if err != nil || len(tx.Events()) != 1 {
					t.Fatalf("Add at the bound: %v, %d buffered", err, len(tx.Events()))
				}
				return
			}
			var verr *txoutbox.ValidationError
			if !errors.As(err, &verr) || verr.Field != "Headers" || !errors.Is(err, txoutbox.ErrHeadersTooLarge) ||
				!errors.Is(err, txoutbox.ErrInvalidEvent) || errors.Is(err, txoutbox.ErrPayloadTooLarge) {
				t.Fatalf("Add = %v, want a *ValidationError of Headers matching ErrHeadersTooLarge", err)
			}
			if n := len(tx.Events()); n != 0 {
				t.Fatalf("%d events buffered after the refused Add", n)
			}
		})
	}
}

// On every database: an Add with headers over the bound fails, the
// transaction stays usable, and Commit writes the other events and the
// business row, nothing of the refused one.
func TestHeaderBoundKeepsTheTransaction(t *testing.T) {
	forEachTarget(t, func(t *testing.T, e *env) {
		ob, err := txoutbox.New(e.db, e.dialect)
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		tx, err := ob.Begin(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback() //nolint:errcheck // no-op after Commit
		if _, err := tx.ExecContext(ctx, e.q("INSERT INTO orders (id, state) VALUES (?, ?)"), "42", "placed"); err != nil {
			t.Fatal(err)
		}
		first, err := tx.Add(validEvent())
		if err != nil {
			t.Fatal(err)
		}
		big := validEvent()
		big.Headers = headersOf(txoutbox.MaxHeaderBytes + 1)
		if _, err := tx.Add(big); !errors.Is(err, txoutbox.ErrHeadersTooLarge) {
			t.Fatalf("Add over the header bound: %v, want ErrHeadersTooLarge", err)
		}
		atBound := validEvent()
		atBound.Headers = headersOf(txoutbox.MaxHeaderBytes)
		last, err := tx.Add(atBound)
		if err != nil {
			t.Fatalf("Add at the bound after a refused one: %v", err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatalf("Commit: %v", err)
		}
		if n := e.count(t, "SELECT COUNT(*) FROM orders"); n != 1 {
			t.Fatalf("%d orders, want 1", n)
		}
		if n := e.count(t, "SELECT COUNT(*) FROM "+e.dialect.Table()); n != 2 {
			t.Fatalf("%d outbox rows, want 2 (the refused event left out)", n)
		}
		for _, id := range []string{first, last} {
			row, err := e.dialect.Get(ctx, e.db, id)
			if err != nil {
				t.Fatal(err)
			}
			if row.Bad != nil || row.State != dialects.StatePending {
				t.Fatalf("row %s: %+v", id, row)
			}
			if id == last && (len(row.Headers["X-A"])+len(row.Headers["X-B"])+6 != txoutbox.MaxHeaderBytes) {
				t.Fatalf("headers at the bound came back with %d + %d bytes", len(row.Headers["X-A"]), len(row.Headers["X-B"]))
			}
		}
	})
}
