package jitotel

import (
	"context"

	"go.opentelemetry.io/otel/propagation"

	"github.com/jitoutbox/jitoutbox/txoutbox"
)

// PropagateTrace returns a txoutbox.Option that stores the W3C trace context
// of the context an event is registered with (the ctx of the package-level
// txoutbox.Add, or the Begin context for Tx.Add) in the event's headers
// "traceparent" and, when not empty, "tracestate". Nothing is stored when
// the context carries no valid span context. It uses
// propagation.TraceContext directly, not the global propagator.
func PropagateTrace() txoutbox.Option {
	return PropagateWith(propagation.TraceContext{})
}

// PropagateWith is PropagateTrace with another propagator, e.g.
// propagation.NewCompositeTextMapPropagator(propagation.TraceContext{},
// propagation.Baggage{}) to carry baggage too. The header names the
// propagator writes must be valid event header names (see txoutbox.Event);
// p must not be nil.
func PropagateWith(p propagation.TextMapPropagator) txoutbox.Option {
	if p == nil {
		return txoutbox.WithHeaderInjector(nil) // makes txoutbox.New fail with ErrInvalidOption
	}
	return txoutbox.WithHeaderInjector(func(ctx context.Context, headers map[string]string) {
		p.Inject(ctx, propagation.MapCarrier(headers))
	})
}
