// Package jitotel connects jitoutbox to OpenTelemetry, so that the core
// packages (txoutbox, relay, natspub) never import it.
//
// Tracing: PropagateTrace is a txoutbox.Option that stores the W3C trace
// context (traceparent, tracestate) of the context each event is registered
// with as event headers. natspub sends event headers as NATS headers, so a
// consumer calls ExtractNATS on a received message's headers and starts its
// span from the returned context: the span joins the producer's trace, across
// the database and the relay.
//
//	ob, err := txoutbox.New(db, dialect, jitotel.PropagateTrace())
//	...
//	ctx := jitotel.ExtractNATS(context.Background(), msg.Headers())
//	ctx, span := tracer.Start(ctx, "handle order.paid", trace.WithSpanKind(trace.SpanKindConsumer))
//
// Metrics: NewRelayMetrics returns relay.Hooks that record, through the
// OpenTelemetry metrics API, the events published, retried and
// dead-lettered, the commit-to-ack latency split by time-critical and
// ordinary events, and (with ObserveStats) the backlog and the age of the
// oldest pending event. Every counter series exists from the start, at 0,
// so that rate() and increase() see the first event. Any OpenTelemetry
// exporter can export them; the example service in examples/orders and
// cmd/jitoutbox-relay (-metrics-addr) serve them to Prometheus.
//
// Fleets: NewFleetMetrics records the relays of a relay.Fleet (many tables
// of one or more sources) on the same instruments, each series labelled
// with its source and table; its Hooks method is a relay.FleetConfig.Hooks.
// The labels are bounded: the first WithMaxTables pairs (default 100) get
// their own, later tables are summed under table "other" of their source.
package jitotel

// ScopeName is the instrumentation scope of the meter NewRelayMetrics uses.
const ScopeName = "github.com/jitoutbox/jitoutbox/otel"
