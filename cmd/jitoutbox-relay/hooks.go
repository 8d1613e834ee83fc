package main

import (
	"context"
	"log/slog"
	"time"

	jitotel "github.com/jitoutbox/jitoutbox/otel"
	"github.com/jitoutbox/jitoutbox/relay"
)

// batchLogger logs every batch at debug level.
type batchLogger struct{ log *slog.Logger }

var _ relay.Hooks = batchLogger{}

func (h batchLogger) BatchStart(ctx context.Context, info relay.BatchStartInfo) context.Context {
	h.log.DebugContext(ctx, "batch claimed", "size", info.Size, "fast_path", info.FastPath)
	return ctx
}

func (h batchLogger) BatchEnd(ctx context.Context, info relay.BatchEndInfo) {
	h.log.DebugContext(ctx, "batch done", "size", info.Size, "published", info.Published, "retried", info.Retried,
		"dead", info.Dead, "released", info.Released, "outage", info.Outage, "duration", info.Duration.String())
}

// metricHooks feeds jitotel's instruments (Hooks, PublishedHook,
// DeadLetterHook) and logs every batch.
type metricHooks struct {
	batchLogger
	m *jitotel.RelayMetrics
}

var (
	_ relay.PublishedHook  = metricHooks{}
	_ relay.DeadLetterHook = metricHooks{}
)

func (h metricHooks) BatchStart(ctx context.Context, info relay.BatchStartInfo) context.Context {
	return h.m.BatchStart(h.batchLogger.BatchStart(ctx, info), info)
}

func (h metricHooks) BatchEnd(ctx context.Context, info relay.BatchEndInfo) {
	h.batchLogger.BatchEnd(ctx, info)
	h.m.BatchEnd(ctx, info)
}

func (h metricHooks) Published(ctx context.Context, msg relay.Message, latency time.Duration) {
	h.m.Published(ctx, msg, latency)
}

func (h metricHooks) DeadLettered(ctx context.Context, msg relay.Message, err error) {
	h.m.DeadLettered(ctx, msg, err)
}
