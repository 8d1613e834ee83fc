package relay

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/jitoutbox/jitoutbox/relay/internal/latency"
)

// Stats is a snapshot of a relay and its table.
type Stats struct {
	// Pending counts rows not yet published (the backlog, including rows
	// leased or backing off), from the database.
	Pending int64
	// Dead counts dead-lettered rows in the table.
	Dead int64
	// PublishedRows counts published rows still in the table (awaiting
	// cleanup).
	PublishedRows int64
	// OldestPendingAge is how long ago the oldest pending row was registered;
	// zero when nothing is pending.
	OldestPendingAge time.Duration

	// Published counts events this relay published since it was created.
	Published uint64
	// Retried counts failed attempts this relay scheduled for retry.
	Retried uint64
	// DeadLettered counts events this relay moved to the dead state.
	DeadLettered uint64
	// Released counts events this relay gave back without an attempt.
	Released uint64
	// Cycles counts cycles run.
	Cycles uint64
	// Claims counts non-empty claims (batches).
	Claims uint64

	// Critical and Ordinary summarise the commit-to-ack latency (CreatedAt
	// to broker acknowledgement) of events from time-critical and from
	// ordinary transactions.
	Critical, Ordinary LatencySummary
}

// LatencySummary summarises a latency distribution. Percentiles are accurate
// to about 12.5%.
type LatencySummary struct {
	Count              uint64
	P50, P90, P99, Max time.Duration
}

// counters are the relay's in-memory statistics.
type counters struct {
	published, retried, dead, released, cycles, claims atomic.Uint64
	critical, ordinary                                 latency.Histogram
}

func summary(h *latency.Histogram) LatencySummary {
	s := h.Summary()
	return LatencySummary{Count: s.Count, P50: s.P50, P90: s.P90, P99: s.P99, Max: s.Max}
}

// Stats reads the table's counts from the database and adds this relay's
// counters and latency percentiles.
func (r *Relay) Stats(ctx context.Context) (Stats, error) {
	ds, err := r.d.Stats(ctx, r.db)
	if err != nil {
		return Stats{}, fmt.Errorf("relay: stats: %w", err)
	}
	s := Stats{
		Pending:       ds.Pending,
		Dead:          ds.Dead,
		PublishedRows: ds.Published,
		Published:     r.c.published.Load(),
		Retried:       r.c.retried.Load(),
		DeadLettered:  r.c.dead.Load(),
		Released:      r.c.released.Load(),
		Cycles:        r.c.cycles.Load(),
		Claims:        r.c.claims.Load(),
		Critical:      summary(&r.c.critical),
		Ordinary:      summary(&r.c.ordinary),
	}
	if !ds.OldestPending.IsZero() {
		s.OldestPendingAge = max(r.cfg.Clock().Sub(ds.OldestPending), 0)
	}
	return s, nil
}
