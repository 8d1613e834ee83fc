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
	// in a batch in flight or backing off), from the database.
	Pending int64
	// Dead counts dead-lettered rows in the table.
	Dead int64
	// PublishedRows counts published rows still in the table (awaiting
	// cleanup).
	PublishedRows int64
	// PublishedRowsEstimated reports that PublishedRows is an estimate
	// (above dialects.StatsExactPublished rows; see dialects.Stats).
	PublishedRowsEstimated bool
	// OldestPendingAge is how long ago the oldest pending row was registered;
	// zero when nothing is pending.
	OldestPendingAge time.Duration
	// CleanupLag is how long the oldest published row still in the table
	// has been past Retention: zero while cleanup keeps up (or with no
	// Retention), growing when cleanup fails or falls behind.
	CleanupLag time.Duration
	// PastRetention counts the published rows older than Retention: rows
	// cleanup should already have deleted (dialects.Inspector.PastRetention;
	// a value above dialects.PastRetentionCap means more than the cap). It
	// is 0, without a query, while CleanupLag is 0.
	PastRetention int64
	// BlockedDead counts aggregates held back behind a dead row: their
	// later events wait until an operator requeues or skips it.
	BlockedDead int64
	// BlockedRetry counts aggregates held back behind a row that failed
	// and will be retried.
	BlockedRetry int64
	// Scheduled counts pending scheduled events not yet due (counted in
	// Pending too), and NextDue is when the first of them is due (zero if
	// none), both by the database's clock.
	Scheduled int64
	NextDue   time.Time

	// LiveRelays counts the live relay sessions on the table, OwnedPartitions
	// the partitions a live session owns, and Partitions the table's
	// partition count (from dialects.Inspector.Ownership; all zero when the
	// dialect does not implement it). OwnedPartitions < Partitions for long
	// means events of the unowned partitions wait.
	LiveRelays, OwnedPartitions, Partitions int

	// LastCleanup is when a cleanup run of this relay last finished without
	// error (holding the cleanup lock); zero if never. Only one relay of a
	// table holds the lock at a time.
	LastCleanup time.Time
	// CleanupFailures counts cleanup runs of this relay that failed.
	CleanupFailures uint64

	// Published counts events this relay published since it was created.
	Published uint64
	// Retried counts failed attempts this relay scheduled for retry.
	Retried uint64
	// DeadLettered counts events this relay moved to the dead state.
	DeadLettered uint64
	// Released counts events of this relay's batches left pending without
	// an attempt (held behind a failed event of their aggregate, a broker
	// outage, or shutdown).
	Released uint64
	// Cycles counts the read lane's cycles: a cycle reads the owned
	// partitions until a read comes back short.
	Cycles uint64
	// Claims counts the read lane's non-empty reads of the owned
	// partitions, that is, its batches (hand-over batches are not counted).
	// The name is older than the partitioned relay, which reads rows
	// without claiming them.
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
	cleanupFailures                                    atomic.Uint64
	lastCleanup                                        atomic.Int64 // unix nanoseconds; 0 never
}

func summary(h *latency.Histogram) LatencySummary {
	s := h.Summary()
	return LatencySummary{Count: s.Count, P50: s.P50, P90: s.P90, P99: s.P99, Max: s.Max}
}

// Stats reads the table's counts (one statement, dialects.Dialect.Stats),
// the live relays and the owned partitions (a second one, reading the
// small partitions and relays tables) and, only when the oldest published
// row is past Retention, the rows past it (a third, counting at most
// dialects.PastRetentionCap + 1 index entries) from the database, and adds
// this relay's counters and latency percentiles. Its cost is bounded by
// the pending and dead rows, the blocked aggregates, the partitions and
// that cap, not by the published rows kept.
func (r *Relay) Stats(ctx context.Context) (Stats, error) {
	ds, err := r.d.Stats(ctx, r.db)
	if err != nil {
		return Stats{}, fmt.Errorf("relay: stats: %w", err)
	}
	now := r.cfg.Clock()
	s := Stats{
		Pending:                ds.Pending,
		Dead:                   ds.Dead,
		PublishedRows:          ds.Published,
		PublishedRowsEstimated: ds.PublishedEstimated,
		BlockedDead:            ds.BlockedDead,
		BlockedRetry:           ds.BlockedRetry,
		Scheduled:              ds.Scheduled,
		NextDue:                ds.NextDue,
		CleanupFailures:        r.c.cleanupFailures.Load(),
		Published:              r.c.published.Load(),
		Retried:                r.c.retried.Load(),
		DeadLettered:           r.c.dead.Load(),
		Released:               r.c.released.Load(),
		Cycles:                 r.c.cycles.Load(),
		Claims:                 r.c.claims.Load(),
		Critical:               summary(&r.c.critical),
		Ordinary:               summary(&r.c.ordinary),
	}
	if !ds.OldestPending.IsZero() {
		s.OldestPendingAge = max(now.Sub(ds.OldestPending), 0)
	}
	if !ds.OldestPublished.IsZero() && r.cfg.Retention > 0 {
		s.CleanupLag = max(now.Sub(ds.OldestPublished)-r.cfg.Retention, 0)
	}
	if s.CleanupLag > 0 {
		if s.PastRetention, err = r.d.PastRetention(ctx, r.db, now, r.cfg.Retention); err != nil {
			return Stats{}, fmt.Errorf("relay: stats: %w", err)
		}
	}
	if ns := r.c.lastCleanup.Load(); ns != 0 {
		s.LastCleanup = time.Unix(0, ns)
	}
	own, err := r.d.Ownership(ctx, r.db, now)
	if err != nil {
		return Stats{}, fmt.Errorf("relay: stats: ownership: %w", err)
	}
	s.LiveRelays, s.Partitions = len(own.Relays), len(own.Partitions)
	for _, p := range own.Partitions {
		if p.Live {
			s.OwnedPartitions++
		}
	}
	return s, nil
}
