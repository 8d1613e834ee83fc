package jitotel

import (
	"context"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/jitoutbox/jitoutbox/relay"
)

// Instrument names. Durations are in seconds, counts in events.
const (
	// MetricPublished counts events the broker accepted (attribute critical).
	MetricPublished = "jitoutbox.relay.published"
	// MetricRetried counts failed publish attempts scheduled for retry.
	MetricRetried = "jitoutbox.relay.retried"
	// MetricDead counts events moved to the dead state (attribute critical).
	MetricDead = "jitoutbox.relay.dead"
	// MetricReleased counts events of a batch left pending without an
	// attempt (held behind a failed event of their aggregate, a broker
	// outage, or shutdown); the relay publishes them later.
	MetricReleased = "jitoutbox.relay.released"
	// MetricBatchErrors counts batches that ended with a database error.
	MetricBatchErrors = "jitoutbox.relay.batch.errors"
	// MetricLatency is the commit-to-ack latency histogram (attribute
	// critical): from the event's registration to the broker's
	// acknowledgement.
	MetricLatency = "jitoutbox.relay.commit_to_ack"
	// MetricBacklog is the number of events not yet published (ObserveStats).
	MetricBacklog = "jitoutbox.outbox.backlog"
	// MetricOldestPendingAge is the age of the oldest pending event, 0 when
	// none is pending (ObserveStats).
	MetricOldestPendingAge = "jitoutbox.outbox.oldest_pending_age"
	// MetricDeadRows is the number of dead-lettered rows in the table
	// (ObserveStats).
	MetricDeadRows = "jitoutbox.outbox.dead_rows"
	// MetricPublishedRows is the number of published rows kept for
	// Retention, an estimate above dialects.StatsExactPublished
	// (ObserveStats).
	MetricPublishedRows = "jitoutbox.outbox.published_rows"
	// MetricBlockedAggregates is the number of aggregates held back behind
	// a failed row (attribute reason: "dead" until an operator acts,
	// "retry" until the row's next attempt succeeds) (ObserveStats).
	MetricBlockedAggregates = "jitoutbox.outbox.blocked_aggregates"
	// MetricScheduled is the number of scheduled events not yet due
	// (counted in the backlog too) (ObserveStats).
	MetricScheduled = "jitoutbox.outbox.scheduled"
	// MetricLiveRelays is the number of live relay sessions on the table
	// (ObserveStats).
	MetricLiveRelays = "jitoutbox.outbox.live_relays"
	// MetricPartitions is the table's partition count (ObserveStats).
	MetricPartitions = "jitoutbox.outbox.partitions"
	// MetricOwnedPartitions is the number of partitions a live relay owns;
	// the others' events wait (ObserveStats).
	MetricOwnedPartitions = "jitoutbox.outbox.owned_partitions"
	// MetricCleanupLag is how long the oldest published row has been past
	// the relay's Retention; 0 while cleanup keeps up (ObserveStats).
	MetricCleanupLag = "jitoutbox.outbox.cleanup_lag"
	// MetricRowsPastRetention is the number of published rows older than
	// the relay's Retention, which cleanup should have deleted: counted up
	// to dialects.PastRetentionCap, a value above it means more; 0 while
	// cleanup keeps up (ObserveStats).
	MetricRowsPastRetention = "jitoutbox.outbox.rows_past_retention"
	// MetricCleanupLastSuccess is the time (Unix seconds) this relay last
	// finished a cleanup run; observed once it has (ObserveStats).
	MetricCleanupLastSuccess = "jitoutbox.relay.cleanup.last_success"
	// MetricCleanupFailures counts this relay's failed cleanup runs
	// (ObserveStats).
	MetricCleanupFailures = "jitoutbox.relay.cleanup.failures"
)

// attrReason splits MetricBlockedAggregates by why the aggregates wait.
const attrReason = "reason"

// attrCritical is the attribute splitting time-critical from ordinary events.
const attrCritical = "critical"

// LatencyBuckets are the histogram bucket boundaries of MetricLatency, in
// seconds: from 1ms (time-critical events) to 5 minutes (events retried
// after an outage).
var LatencyBuckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300}

// RelayMetrics records a relay's activity through the OpenTelemetry metrics
// API. Give it to relay.Config.Hooks; it implements relay.Hooks,
// relay.PublishedHook and relay.DeadLetterHook. Call ObserveStats to add the
// backlog gauges. It is safe for concurrent use and may serve several relays
// (their counts add up).
//
// FleetMetrics.Table returns RelayMetrics values that share one set of
// instruments and differ in their source and table attributes.
type RelayMetrics struct {
	*instruments
	labels
	// shared reports a label several tables record under (a fleet's
	// "other"): their gauges would overwrite each other, so ObserveStats
	// refuses it.
	shared bool
}

// instruments are the instruments of one NewRelayMetrics or
// NewFleetMetrics call, on one meter.
type instruments struct {
	cfg   metricsConfig
	meter metric.Meter

	published, retried, dead, released, batchErrors metric.Int64Counter
	latency                                         metric.Float64Histogram
	backlog, deadRows                               metric.Int64ObservableGauge
	oldestAge                                       metric.Float64ObservableGauge
	stats                                           statsInstruments
}

// labels are the attribute sets one RelayMetrics records with.
type labels struct {
	base             metric.MeasurementOption // the user's attributes
	critical, normal metric.MeasurementOption // plus critical=true|false
	blockedDead      metric.MeasurementOption // plus reason=dead
	blockedRetry     metric.MeasurementOption // plus reason=retry
}

// newLabels returns the attribute sets for attrs.
func newLabels(attrs []attribute.KeyValue) labels {
	set := func(extra ...attribute.KeyValue) metric.MeasurementOption {
		all := append(append([]attribute.KeyValue(nil), attrs...), extra...)
		return metric.WithAttributeSet(attribute.NewSet(all...))
	}
	return labels{
		base:         set(),
		critical:     set(attribute.Bool(attrCritical, true)),
		normal:       set(attribute.Bool(attrCritical, false)),
		blockedDead:  set(attribute.String(attrReason, "dead")),
		blockedRetry: set(attribute.String(attrReason, "retry")),
	}
}

var (
	_ relay.Hooks          = (*RelayMetrics)(nil)
	_ relay.PublishedHook  = (*RelayMetrics)(nil)
	_ relay.DeadLetterHook = (*RelayMetrics)(nil)
)

// NewRelayMetrics creates the instruments on a meter of mp named ScopeName.
// mp must not be nil (use otel.GetMeterProvider() for the global one).
// WithMaxTables is for NewFleetMetrics only and makes it fail.
func NewRelayMetrics(mp metric.MeterProvider, opts ...MetricsOption) (*RelayMetrics, error) {
	ins, err := newInstruments(mp, opts)
	if err != nil {
		return nil, err
	}
	if ins.cfg.maxTables != 0 {
		return nil, fmt.Errorf("%w: WithMaxTables applies to NewFleetMetrics only", ErrInvalidOption)
	}
	return ins.label(ins.cfg.attrs, false), nil
}

// newInstruments applies opts and creates the instruments on a meter of mp.
func newInstruments(mp metric.MeterProvider, opts []MetricsOption) (*instruments, error) {
	if mp == nil {
		return nil, fmt.Errorf("%w: nil MeterProvider", ErrInvalidOption)
	}
	cfg := metricsConfig{statsTimeout: DefaultStatsTimeout}
	for _, o := range opts {
		if o == nil {
			return nil, fmt.Errorf("%w: nil MetricsOption", ErrInvalidOption)
		}
		if err := o(&cfg); err != nil {
			return nil, err
		}
	}
	m := &instruments{cfg: cfg, meter: mp.Meter(ScopeName)}
	var err error
	counter := func(name, desc string) metric.Int64Counter {
		if err != nil {
			return nil
		}
		var c metric.Int64Counter
		c, err = m.meter.Int64Counter(name, metric.WithDescription(desc), metric.WithUnit("{event}"))
		return c
	}
	m.published = counter(MetricPublished, "Events the broker accepted.")
	m.retried = counter(MetricRetried, "Failed publish attempts scheduled for retry.")
	m.dead = counter(MetricDead, "Events moved to the dead state.")
	m.released = counter(MetricReleased, "Events of a batch left pending without an attempt.")
	if err == nil {
		m.batchErrors, err = m.meter.Int64Counter(MetricBatchErrors,
			metric.WithDescription("Relay batches that ended with a database error."), metric.WithUnit("{batch}"))
	}
	if err == nil {
		m.latency, err = m.meter.Float64Histogram(MetricLatency,
			metric.WithDescription("Time from an event's registration to the broker's acknowledgement."),
			metric.WithUnit("s"), metric.WithExplicitBucketBoundaries(LatencyBuckets...))
	}
	if err == nil {
		m.backlog, err = m.meter.Int64ObservableGauge(MetricBacklog,
			metric.WithDescription("Events not yet published (including those in flight and backing off)."), metric.WithUnit("{event}"))
	}
	if err == nil {
		m.deadRows, err = m.meter.Int64ObservableGauge(MetricDeadRows,
			metric.WithDescription("Dead-lettered events in the outbox table."), metric.WithUnit("{event}"))
	}
	if err == nil {
		m.oldestAge, err = m.meter.Float64ObservableGauge(MetricOldestPendingAge,
			metric.WithDescription("Age of the oldest pending event; 0 when none is pending."), metric.WithUnit("s"))
	}
	if err == nil {
		m.stats, err = newStatsInstruments(m.meter)
	}
	if err != nil {
		return nil, fmt.Errorf("jitotel: create instruments: %w", err)
	}
	return m, nil
}

// label returns a RelayMetrics recording on ins with attrs, its counter
// series started at zero.
func (ins *instruments) label(attrs []attribute.KeyValue, shared bool) *RelayMetrics {
	m := &RelayMetrics{instruments: ins, labels: newLabels(attrs), shared: shared}
	m.startAtZero()
	return m
}

// startAtZero records 0 on every counter, for each attribute set it uses,
// so that each series exists from the start. Prometheus' increase() and
// rate() see no increase in a series whose first sample is already 1: the
// first dead letter of a relay would not fire an alert on
// increase(jitoutbox_relay_dead_total[...]) > 0.
func (m *RelayMetrics) startAtZero() {
	ctx := context.Background()
	for _, crit := range []metric.MeasurementOption{m.critical, m.normal} {
		m.published.Add(ctx, 0, crit)
		m.dead.Add(ctx, 0, crit)
	}
	for _, c := range []metric.Int64Counter{m.retried, m.released, m.batchErrors} {
		c.Add(ctx, 0, m.base)
	}
}

func (m *RelayMetrics) split(critical bool) metric.MeasurementOption {
	if critical {
		return m.critical
	}
	return m.normal
}

// BatchStart implements relay.Hooks; it returns ctx unchanged.
func (m *RelayMetrics) BatchStart(ctx context.Context, _ relay.BatchStartInfo) context.Context {
	return ctx
}

// BatchEnd implements relay.Hooks: it counts retried and released events
// and database errors.
func (m *RelayMetrics) BatchEnd(ctx context.Context, info relay.BatchEndInfo) {
	if info.Retried > 0 {
		m.retried.Add(ctx, int64(info.Retried), m.base)
	}
	if info.Released > 0 {
		m.released.Add(ctx, int64(info.Released), m.base)
	}
	if info.Err != nil {
		m.batchErrors.Add(ctx, 1, m.base)
	}
}

// Published implements relay.PublishedHook: it counts the event and records
// its commit-to-ack latency.
func (m *RelayMetrics) Published(ctx context.Context, msg relay.Message, latency time.Duration) {
	attrs := m.split(msg.Critical)
	m.published.Add(ctx, 1, attrs)
	m.latency.Record(ctx, max(latency, 0).Seconds(), attrs)
}

// DeadLettered implements relay.DeadLetterHook: it counts the event.
func (m *RelayMetrics) DeadLettered(ctx context.Context, msg relay.Message, _ error) {
	m.dead.Add(ctx, 1, m.split(msg.Critical))
}
