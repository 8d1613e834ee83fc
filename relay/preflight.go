package relay

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// PreflightInfo describes the relay to a Preflighter.
type PreflightInfo struct {
	// Owner is the relay's owner id.
	Owner string
	// LeaseDuration and PublishTimeout are the relay's settings: an event
	// the broker acknowledged but a relay that died could not mark is
	// published again by the next owner of its partition, at most
	// LeaseDuration later (SQLite's lease; PostgreSQL and MariaDB/MySQL
	// move partitions as soon as the dead relay's connection closes).
	LeaseDuration  time.Duration
	PublishTimeout time.Duration
	// Logger is the relay's logger; a Preflighter logs its warnings here.
	Logger *slog.Logger
}

// Preflighter is an optional interface of a Publisher. When the publisher
// given to New implements it, Run calls Preflight once as it starts, in the
// background (it does not delay the first read or publish), with a context bounded by
// PublishTimeout. Preflight checks what it can about the broker's
// configuration (for example, whether a stream can keep the at-least-once
// guarantee) and logs warnings to info.Logger. An error it returns is logged
// as a warning too: a preflight never stops the relay.
type Preflighter interface {
	Preflight(ctx context.Context, info PreflightInfo) error
}

// startPreflight runs the publisher's Preflight, if it has one, in a
// goroutine tracked by wg that ends with ctx.
func (r *Relay) startPreflight(ctx context.Context, wg *sync.WaitGroup) {
	p, ok := r.pub.(Preflighter)
	if !ok {
		return
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		pctx, cancel := context.WithTimeout(ctx, r.cfg.PublishTimeout)
		defer cancel()
		err := p.Preflight(pctx, PreflightInfo{
			Owner:          r.cfg.Owner,
			LeaseDuration:  r.cfg.LeaseDuration,
			PublishTimeout: r.cfg.PublishTimeout,
			Logger:         r.cfg.Logger,
		})
		if err != nil && ctx.Err() == nil {
			r.cfg.Logger.WarnContext(ctx, "jitoutbox relay: publisher preflight failed; relaying anyway",
				"owner", r.cfg.Owner, "err", err)
		}
	}()
}
