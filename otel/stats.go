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
// the oldest pending event and the number of dead rows from stats (usually
// a relay's Stats method) each time the metrics are collected. Each query
// is bounded by WithStatsTimeout; when it fails, nothing is observed for
// that collection and the error goes to the SDK's error handler.
//
// The values describe the whole table, so register one relay per table and
// process. Unregister the returned registration when the relay is gone.
func (m *RelayMetrics) ObserveStats(stats StatsFunc) (metric.Registration, error) {
	if stats == nil {
		return nil, fmt.Errorf("%w: nil StatsFunc", ErrInvalidOption)
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
		return nil
	}, m.backlog, m.deadRows, m.oldestAge)
	if err != nil {
		return nil, fmt.Errorf("jitotel: register stats callback: %w", err)
	}
	return reg, nil
}
