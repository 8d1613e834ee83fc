package jitotel_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/jitoutbox/jitoutbox/internal/testnats"
	jitotel "github.com/jitoutbox/jitoutbox/otel"
	"github.com/jitoutbox/jitoutbox/relay"
	"github.com/jitoutbox/jitoutbox/relay/natspub"
	"github.com/jitoutbox/jitoutbox/txoutbox"
)

// TestTraceAcrossOutbox registers events under producer spans, relays them
// through SQLite and JetStream, and checks that the consumer's spans are
// children of those producer spans: one event added with Tx.Add (the Begin
// context's span) and one with the package-level Add under a child span.
func TestTraceAcrossOutbox(t *testing.T) {
	ctx := ctxTimeout(t, 60*time.Second)
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	tracer := tp.Tracer("test")

	db, d := sqliteOutbox(t, ctx)
	// Relay: embedded (or $JITOUTBOX_NATS_URL) JetStream.
	nc := testnats.Connect(t, testnats.URL(t))
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncTimeout(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	stream, prefix := testnats.Stream(t, js)
	pub, err := natspub.NewJetStream(js, natspub.WithSubjectPrefix(prefix))
	if err != nil {
		t.Fatal(err)
	}
	r, err := relay.New(db, d, pub, relay.Config{PollInterval: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	stop := runRelay(t, ctx, r.Run)
	// The relay of this process takes the time-critical commit in memory.
	ob, err := txoutbox.New(db, d, txoutbox.WithRelay(r), jitotel.PropagateTrace())
	if err != nil {
		t.Fatal(err)
	}

	// Producer: span "place" around the transaction; span "pay" below it
	// registers the second event through the package-level Add.
	pctx, place := tracer.Start(ctx, "place")
	tx, err := ob.Begin(pctx, nil, txoutbox.TimeCritical())
	if err != nil {
		t.Fatal(err)
	}
	placedID, err := tx.Add(txoutbox.Event{AggregateType: "order", AggregateID: "1", EventType: "order.created"})
	if err != nil {
		t.Fatal(err)
	}
	payCtx, pay := tracer.Start(tx.Context(), "pay")
	paidID, err := txoutbox.Add(payCtx, txoutbox.Event{AggregateType: "order", AggregateID: "1", EventType: "order.paid"})
	if err != nil {
		t.Fatal(err)
	}
	pay.End()
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	place.End()
	producer := map[string]trace.SpanContext{placedID: place.SpanContext(), paidID: pay.SpanContext()}

	// Consumer: a span per message, started from the extracted context.
	cons, err := stream.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	consumer := map[string]trace.SpanContext{}
	for len(consumer) < 2 {
		if ctx.Err() != nil {
			t.Fatalf("received %d of 2 events", len(consumer))
		}
		batch, err := cons.Fetch(2, jetstream.FetchMaxWait(time.Second))
		if err != nil {
			t.Fatal(err)
		}
		for m := range batch.Messages() {
			h := m.Headers()
			if h.Get("traceparent") == "" {
				t.Errorf("message %s has no traceparent header: %v", h.Get(natspub.HeaderEventID), h)
			}
			cctx := jitotel.ExtractNATS(ctx, nats.Header(h))
			_, span := tracer.Start(cctx, "consume "+h.Get(natspub.HeaderEventType), trace.WithSpanKind(trace.SpanKindConsumer))
			span.End()
			consumer[h.Get(natspub.HeaderEventID)] = span.SpanContext()
		}
	}
	stop()

	byID := map[trace.SpanID]sdktrace.ReadOnlySpan{}
	for _, s := range rec.Ended() {
		byID[s.SpanContext().SpanID()] = s
	}
	for id, want := range producer {
		got, ok := consumer[id]
		if !ok {
			t.Fatalf("event %s not consumed", id)
		}
		span := byID[got.SpanID()]
		if span == nil {
			t.Fatalf("consumer span of %s not recorded", id)
		}
		if span.Parent().SpanID() != want.SpanID() || !span.Parent().IsRemote() {
			t.Errorf("event %s: consumer span parent = %s (remote %v), want producer span %s",
				id, span.Parent().SpanID(), span.Parent().IsRemote(), want.SpanID())
		}
		if got.TraceID() != want.TraceID() {
			t.Errorf("event %s: consumer trace %s, want producer trace %s", id, got.TraceID(), want.TraceID())
		}
	}
}

// TestExtractNATS checks the carrier: case-insensitive lookup, and no
// change to the context when the headers carry no trace context.
func TestExtractNATS(t *testing.T) {
	const tp = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	for name, h := range map[string]nats.Header{
		"exact":    {"traceparent": {tp}},
		"any case": {"Traceparent": {tp}},
	} {
		sc := trace.SpanContextFromContext(jitotel.ExtractNATS(context.Background(), h))
		if !sc.IsValid() || !sc.IsRemote() || sc.SpanID().String() != "b7ad6b7169203331" ||
			sc.TraceID().String() != "0af7651916cd43dd8448eb211c80319c" || !sc.IsSampled() {
			t.Errorf("%s: extracted %+v", name, sc)
		}
	}
	ctx := context.Background()
	for name, h := range map[string]nats.Header{
		"nil":     nil,
		"none":    {"X-Other": {"1"}},
		"garbage": {"traceparent": {"not-a-trace"}},
	} {
		if sc := trace.SpanContextFromContext(jitotel.ExtractNATS(ctx, h)); sc.IsValid() {
			t.Errorf("%s: extracted a valid span context %v", name, sc)
		}
	}
}
