package main

import (
	"context"
	"log/slog"

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
