package jitotel_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"

	"github.com/nats-io/nats.go"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/jitoutbox/jitoutbox/dialects/sqlite"
	jitotel "github.com/jitoutbox/jitoutbox/otel"
	"github.com/jitoutbox/jitoutbox/relay"
	"github.com/jitoutbox/jitoutbox/txoutbox"
)

// PropagateTrace stores the trace context of the registering ctx with the
// event; the relay sends it as NATS headers.
func ExamplePropagateTrace() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "jitotel-example-")
	defer os.RemoveAll(dir)
	db, _ := sql.Open("sqlite", "file:"+filepath.Join(dir, "app.db")+"?_txlock=immediate")
	defer db.Close()
	dialect, _ := sqlite.New()
	_ = dialect.Migrate(ctx, db)

	ob, err := txoutbox.New(db, dialect, jitotel.PropagateTrace())
	if err != nil {
		fmt.Println(err)
		return
	}
	// In a service, ctx carries the span of the current request.
	traceID, _ := trace.TraceIDFromHex("4bf92f3577b34da6a3ce929d0e0e4736")
	spanID, _ := trace.SpanIDFromHex("00f067aa0ba902b7")
	ctx = trace.ContextWithSpanContext(ctx, trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: traceID, SpanID: spanID, TraceFlags: trace.FlagsSampled}))

	tx, err := ob.Begin(ctx, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer tx.Rollback()
	_, _ = tx.Add(txoutbox.Event{AggregateType: "order", AggregateID: "42", EventType: "order.paid"})
	fmt.Println(tx.Events()[0].Headers["traceparent"])
	// Output: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01
}

// A consumer starts its span from ExtractNATS, so it joins the producer's
// trace.
func ExampleExtractNATS() {
	// msg.Header of a received core NATS message (JetStream: msg.Headers()).
	h := nats.Header{"traceparent": {"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}
	ctx := jitotel.ExtractNATS(context.Background(), h)
	// ctx, span := tracer.Start(ctx, "handle order.paid", trace.WithSpanKind(trace.SpanKindConsumer))
	sc := trace.SpanContextFromContext(ctx)
	fmt.Println(sc.TraceID(), sc.SpanID(), sc.IsRemote())
	// Output: 4bf92f3577b34da6a3ce929d0e0e4736 00f067aa0ba902b7 true
}

// NewRelayMetrics goes into relay.Config.Hooks; ObserveStats adds the
// backlog gauges once the relay exists.
func ExampleNewRelayMetrics() {
	var (
		db        *sql.DB         // your database
		publisher relay.Publisher // e.g. natspub.NewJetStream(js)
	)
	dialect, _ := sqlite.New()
	mp := sdkmetric.NewMeterProvider() // with your exporter's reader
	defer mp.Shutdown(context.Background())

	metrics, err := jitotel.NewRelayMetrics(mp)
	if err != nil {
		fmt.Println(err)
		return
	}
	r, err := relay.New(db, dialect, publisher, relay.Config{Hooks: metrics})
	if err != nil {
		fmt.Println(err)
		return
	}
	reg, err := metrics.ObserveStats(r.Stats)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer reg.Unregister()
	// go r.Run(ctx)
}
