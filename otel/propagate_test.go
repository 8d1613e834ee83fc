package jitotel_test

import (
	"errors"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"

	jitotel "github.com/jitoutbox/jitoutbox/otel"
	"github.com/jitoutbox/jitoutbox/txoutbox"
)

// TestPropagateTraceHeaders checks the headers PropagateTrace stores: W3C
// traceparent and tracestate from a span context, nothing without one.
func TestPropagateTraceHeaders(t *testing.T) {
	ctx := ctxTimeout(t, 30*time.Second)
	db, d := sqliteOutbox(t, ctx)
	ob, err := txoutbox.New(db, d, jitotel.PropagateTrace())
	if err != nil {
		t.Fatal(err)
	}
	ts, err := trace.ParseTraceState("vendor=abc")
	if err != nil {
		t.Fatal(err)
	}
	sc := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID:    trace.TraceID{0x0a, 0xf7, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14},
		SpanID:     trace.SpanID{0xb7, 0xad, 1, 2, 3, 4, 5, 6},
		TraceFlags: trace.FlagsSampled,
		TraceState: ts,
	})
	tx, err := ob.Begin(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	ev := txoutbox.Event{AggregateType: "order", AggregateID: "1", EventType: "order.created", Headers: map[string]string{"X-Tenant": "acme"}}
	if _, err := txoutbox.Add(trace.ContextWithSpanContext(tx.Context(), sc), ev); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Add(ev); err != nil { // Begin context: no span
		t.Fatal(err)
	}
	evs := tx.Events()
	want := "00-" + sc.TraceID().String() + "-" + sc.SpanID().String() + "-01"
	if h := evs[0].Headers; h["traceparent"] != want || h["tracestate"] != "vendor=abc" || h["X-Tenant"] != "acme" {
		t.Errorf("headers with a span = %v, want traceparent %s, tracestate vendor=abc, X-Tenant acme", h, want)
	}
	if h := evs[1].Headers; len(h) != 1 || h["X-Tenant"] != "acme" {
		t.Errorf("headers without a span = %v, want only X-Tenant", h)
	}

	if _, err := txoutbox.New(db, d, jitotel.PropagateWith(nil)); !errors.Is(err, txoutbox.ErrInvalidOption) {
		t.Errorf("PropagateWith(nil): error %v, want txoutbox.ErrInvalidOption", err)
	}
}
