package jitotel

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel/metric"

	"github.com/jitoutbox/jitoutbox/relay"
)

// StatsFunc reads a relay's statistics; (*relay.Relay).Stats is one.
type StatsFunc func(ctx context.Context) (relay.Stats, error)

// ObserveStats registers a callback that reports the backlog, the age of
// the oldest pending event, the number of dead and published rows, the
// blocked aggregates, the scheduled events not yet due, the live relays and owned partitions, and cleanup's
// health (lag, rows past retention, last success, failures) from stats
// (usually a relay's Stats method) each time the metrics are collected.
// Each query is bounded by WithStatsTimeout; when it fails, nothing is
// observed for that collection and the error goes to the SDK's error
// handler.
//
// The values describe the whole table, so register one relay per table and
// process. Unregister the returned registration when the relay is gone.
// A FleetMetrics table past the cap (recorded under "other" with other
// tables) cannot observe stats: their gauges would overwrite each other.
func (m *RelayMetrics) ObserveStats(stats StatsFunc) (metric.Registration, error) {
	if stats == nil {
		return nil, fmt.Errorf("%w: nil StatsFunc", ErrInvalidOption)
	}
	if m.shared {
		return nil, fmt.Errorf("%w: the table is past the FleetMetrics cap and shares the %q label; observe the stats of tables with labels of their own", ErrInvalidOption, OtherTable)
	}
	reg, err := m.meter.RegisterCallback(func(ctx context.Context, o metric.Observer) error {
		ctx, cancel := context.WithTimeout(ctx, m.cfg.statsTimeout)
		defer cancel()
		s, err := stats(ctx)
		if err != nil {
			return fmt.Errorf("jitotel: observe relay stats: %w", err)
		}
		o.ObserveInt64(m.backlog, s.Pending, m.base)
		o.ObserveInt64(m.deadRows, s.Dead, m.base)
		o.ObserveFloat64(m.oldestAge, s.OldestPendingAge.Seconds(), m.base)
		m.observeHealth(o, s)
		return nil
	}, append([]metric.Observable{m.backlog, m.deadRows, m.oldestAge}, m.stats.all()...)...)
	if err != nil {
		return nil, fmt.Errorf("jitotel: register stats callback: %w", err)
	}
	return reg, nil
}

// statsInstruments are the gauges and counters fed by ObserveStats beyond
// the backlog, the oldest pending age and the dead rows.
type statsInstruments struct {
	publishedRows, blocked, liveRelays, partitions, owned metric.Int64ObservableGauge
	scheduled                                             metric.Int64ObservableGauge
	pastRetention                                         metric.Int64ObservableGauge
	cleanupLag, cleanupLast                               metric.Float64ObservableGauge
	cleanupFailures                                       metric.Int64ObservableCounter
}

func newStatsInstruments(meter metric.Meter) (statsInstruments, error) {
	var (
		si  statsInstruments
		err error
	)
	gauge := func(name, desc, unit string) metric.Int64ObservableGauge {
		if err != nil {
			return nil
		}
		var g metric.Int64ObservableGauge
		g, err = meter.Int64ObservableGauge(name, metric.WithDescription(desc), metric.WithUnit(unit))
		return g
	}
	seconds := func(name, desc string) metric.Float64ObservableGauge {
		if err != nil {
			return nil
		}
		var g metric.Float64ObservableGauge
		g, err = meter.Float64ObservableGauge(name, metric.WithDescription(desc), metric.WithUnit("s"))
		return g
	}
	si.publishedRows = gauge(MetricPublishedRows, "Published rows kept for Retention (an estimate above 10,000).", "{event}")
	si.blocked = gauge(MetricBlockedAggregates, "Aggregates held back behind a failed row, by reason (dead, retry).", "{aggregate}")
	si.scheduled = gauge(MetricScheduled, "Scheduled events not yet due (also in the backlog).", "{event}")
	si.liveRelays = gauge(MetricLiveRelays, "Live relay sessions on the outbox table.", "{relay}")
	si.partitions = gauge(MetricPartitions, "Partitions of the outbox table.", "{partition}")
	si.owned = gauge(MetricOwnedPartitions, "Partitions owned by a live relay.", "{partition}")
	si.cleanupLag = seconds(MetricCleanupLag, "How long the oldest published row has been past Retention; 0 while cleanup keeps up.")
	si.pastRetention = gauge(MetricRowsPastRetention,
		"Published rows older than Retention, which cleanup should have deleted (counted up to 10,000; above means more).", "{row}")
	si.cleanupLast = seconds(MetricCleanupLastSuccess, "Unix time of this relay's last successful cleanup run.")
	if err == nil {
		si.cleanupFailures, err = meter.Int64ObservableCounter(MetricCleanupFailures,
			metric.WithDescription("Cleanup runs of this relay that failed."), metric.WithUnit("{run}"))
	}
	return si, err
}

func (si statsInstruments) all() []metric.Observable {
	return []metric.Observable{si.publishedRows, si.blocked, si.scheduled, si.liveRelays, si.partitions, si.owned,
		si.cleanupLag, si.pastRetention, si.cleanupLast, si.cleanupFailures}
}

// observeHealth observes the instruments of statsInstruments from s.
func (m *RelayMetrics) observeHealth(o metric.Observer, s relay.Stats) {
	si := m.stats
	o.ObserveInt64(si.publishedRows, s.PublishedRows, m.base)
	o.ObserveInt64(si.blocked, s.BlockedDead, m.blockedDead)
	o.ObserveInt64(si.blocked, s.BlockedRetry, m.blockedRetry)
	o.ObserveInt64(si.scheduled, s.Scheduled, m.base)
	if s.Partitions > 0 { // the dialect reports ownership
		o.ObserveInt64(si.liveRelays, int64(s.LiveRelays), m.base)
		o.ObserveInt64(si.partitions, int64(s.Partitions), m.base)
		o.ObserveInt64(si.owned, int64(s.OwnedPartitions), m.base)
	}
	o.ObserveFloat64(si.cleanupLag, s.CleanupLag.Seconds(), m.base)
	o.ObserveInt64(si.pastRetention, s.PastRetention, m.base)
	if !s.LastCleanup.IsZero() {
		o.ObserveFloat64(si.cleanupLast, float64(s.LastCleanup.UnixNano())/1e9, m.base)
	}
	o.ObserveInt64(si.cleanupFailures, int64(s.CleanupFailures), m.base)
}
