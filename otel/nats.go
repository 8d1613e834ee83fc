package jitotel

import (
	"context"
	"strings"

	"github.com/nats-io/nats.go"
	"go.opentelemetry.io/otel/propagation"
)

// HeaderCarrier adapts nats.Header to propagation.TextMapCarrier. NATS
// headers are case-sensitive; Get falls back to a case-insensitive match so
// that "Traceparent" is found too.
type HeaderCarrier nats.Header

var _ propagation.TextMapCarrier = HeaderCarrier(nil)

// Get returns the first value of key, "" if there is none.
func (c HeaderCarrier) Get(key string) string {
	if v := c[key]; len(v) > 0 {
		return v[0]
	}
	for k, v := range c {
		if len(v) > 0 && strings.EqualFold(k, key) {
			return v[0]
		}
	}
	return ""
}

// Set sets key to the single value value.
func (c HeaderCarrier) Set(key, value string) {
	c[key] = []string{value}
}

// Keys lists the header names.
func (c HeaderCarrier) Keys() []string {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	return keys
}

// ExtractNATS returns ctx carrying the remote span context found in the W3C
// traceparent/tracestate headers of a received message (msg.Header for core
// NATS, msg.Headers() for JetStream). Start the consumer's span from the
// result and it becomes a child of the span that registered the event. When
// the headers carry no valid trace context, ctx is returned unchanged.
func ExtractNATS(ctx context.Context, h nats.Header) context.Context {
	return ExtractNATSWith(ctx, propagation.TraceContext{}, h)
}

// ExtractNATSWith is ExtractNATS with another propagator, matching the one
// given to PropagateWith.
func ExtractNATSWith(ctx context.Context, p propagation.TextMapPropagator, h nats.Header) context.Context {
	if len(h) == 0 || p == nil {
		return ctx
	}
	return p.Extract(ctx, HeaderCarrier(h))
}
