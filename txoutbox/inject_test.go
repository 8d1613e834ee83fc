package txoutbox_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jitoutbox/jitoutbox/txoutbox"
)

type injectKey struct{}

// traceInjector writes the context's injectKey value as a traceparent
// header, as jitotel.PropagateTrace does with a span context.
func traceInjector(ctx context.Context, h map[string]string) {
	if v, ok := ctx.Value(injectKey{}).(string); ok {
		h["traceparent"] = v
	}
}

func TestHeaderInjector(t *testing.T) {
	d := &fakeDialect{}
	ob, mock, _ := newMock(t, d, txoutbox.WithHeaderInjector(traceInjector))
	mock.ExpectBegin()
	mock.ExpectRollback()

	ctx := context.WithValue(context.Background(), injectKey{}, "begin")
	tx, err := ob.Begin(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()

	// Tx.Add: the Begin context; the caller's map is left alone.
	user := map[string]string{"X-Tenant": "acme"}
	ev := validEvent()
	ev.Headers = user
	if _, err := tx.Add(ev); err != nil {
		t.Fatal(err)
	}
	// Package-level Add: its own context, derived from the Tx's.
	inner := context.WithValue(tx.Context(), injectKey{}, "inner")
	if _, err := txoutbox.Add(inner, validEvent()); err != nil {
		t.Fatal(err)
	}
	// A context without a value: the injector writes nothing, and an event
	// without headers keeps none.
	bare := txoutbox.NewContext(context.Background(), tx)
	if _, err := txoutbox.Add(bare, validEvent()); err != nil {
		t.Fatal(err)
	}

	evs := tx.Events()
	if len(evs) != 3 {
		t.Fatalf("buffered %d events, want 3", len(evs))
	}
	if got := evs[0].Headers; len(got) != 2 || got["traceparent"] != "begin" || got["X-Tenant"] != "acme" {
		t.Errorf("Tx.Add headers = %v, want traceparent=begin and X-Tenant=acme", got)
	}
	if len(user) != 1 {
		t.Errorf("caller's headers map was modified: %v", user)
	}
	if got := evs[1].Headers; len(got) != 1 || got["traceparent"] != "inner" {
		t.Errorf("package Add headers = %v, want traceparent=inner", got)
	}
	if evs[2].Headers != nil {
		t.Errorf("headers = %v, want nil when nothing was injected", evs[2].Headers)
	}
}

func TestHeaderInjectorInvalidHeader(t *testing.T) {
	cases := map[string]txoutbox.HeaderInjector{
		"reserved prefix": func(_ context.Context, h map[string]string) { h["Nats-Msg-Id"] = "x" },
		"bad name":        func(_ context.Context, h map[string]string) { h["bad name"] = "x" },
		"newline":         func(_ context.Context, h map[string]string) { h["traceparent"] = "a\nb" },
	}
	for name, inject := range cases {
		t.Run(name, func(t *testing.T) {
			ob, mock, _ := newMock(t, &fakeDialect{}, txoutbox.WithHeaderInjector(inject))
			mock.ExpectBegin()
			mock.ExpectRollback()
			tx, err := ob.Begin(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback()
			_, err = tx.Add(validEvent())
			var verr *txoutbox.ValidationError
			if !errors.As(err, &verr) || !errors.Is(err, txoutbox.ErrInvalidEvent) {
				t.Fatalf("Add error = %v, want a *ValidationError", err)
			}
			if n := len(tx.Events()); n != 0 {
				t.Fatalf("%d events buffered after a failed Add", n)
			}
		})
	}
}

func TestHeaderInjectorOrderAndNil(t *testing.T) {
	first := func(_ context.Context, h map[string]string) { h["tracestate"] = "a=1" }
	second := func(_ context.Context, h map[string]string) { h["tracestate"] += ",b=2" }
	ob, mock, db := newMock(t, &fakeDialect{}, txoutbox.WithHeaderInjector(first), txoutbox.WithHeaderInjector(second))
	mock.ExpectBegin()
	mock.ExpectRollback()
	tx, err := ob.Begin(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.Add(validEvent()); err != nil {
		t.Fatal(err)
	}
	if got := tx.Events()[0].Headers["tracestate"]; got != "a=1,b=2" {
		t.Errorf("tracestate = %q, want injectors run in order (a=1,b=2)", got)
	}

	if _, err := txoutbox.New(db, &fakeDialect{}, txoutbox.WithHeaderInjector(nil)); !errors.Is(err, txoutbox.ErrInvalidOption) {
		t.Errorf("WithHeaderInjector(nil): error %v, want ErrInvalidOption", err)
	}
}
