package jitotel

import (
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/attribute"
)

// DefaultStatsTimeout bounds each relay.Stats query made by an ObserveStats
// callback.
const DefaultStatsTimeout = 2 * time.Second

// ErrInvalidOption is returned (wrapped) by NewRelayMetrics for a bad
// argument or option.
var ErrInvalidOption = errors.New("jitotel: invalid option")

type metricsConfig struct {
	attrs        []attribute.KeyValue
	statsTimeout time.Duration
	maxTables    int // 0: not set
}

// MetricsOption configures NewRelayMetrics.
type MetricsOption func(*metricsConfig) error

// WithAttributes adds attributes to every measurement (for example the
// outbox table, or a service name when several relays share a meter
// provider). The key "critical" is reserved for the latency split.
func WithAttributes(attrs ...attribute.KeyValue) MetricsOption {
	return func(c *metricsConfig) error {
		for _, a := range attrs {
			if a.Key == attrCritical {
				return fmt.Errorf("%w: attribute key %q is reserved", ErrInvalidOption, attrCritical)
			}
			if !a.Valid() {
				return fmt.Errorf("%w: invalid attribute %q", ErrInvalidOption, a.Key)
			}
		}
		c.attrs = append(c.attrs, attrs...)
		return nil
	}
}

// WithStatsTimeout bounds each relay.Stats query made when the gauges
// registered by ObserveStats are collected (default DefaultStatsTimeout). d
// must be positive.
func WithStatsTimeout(d time.Duration) MetricsOption {
	return func(c *metricsConfig) error {
		if d <= 0 {
			return fmt.Errorf("%w: stats timeout %v must be positive", ErrInvalidOption, d)
		}
		c.statsTimeout = d
		return nil
	}
}

// WithMaxTables sets how many (source, table) pairs of a FleetMetrics get
// labels of their own (default DefaultMaxTables); the tables after them are
// recorded under table "other". n must be positive. It applies to
// NewFleetMetrics only: NewRelayMetrics refuses it.
func WithMaxTables(n int) MetricsOption {
	return func(c *metricsConfig) error {
		if n <= 0 {
			return fmt.Errorf("%w: max tables %d must be positive", ErrInvalidOption, n)
		}
		c.maxTables = n
		return nil
	}
}
