package jitotel_test

import (
	"context"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	jitotel "github.com/jitoutbox/jitoutbox/otel"
	"github.com/jitoutbox/jitoutbox/relay"
)

// TestObserveStatsCleanupHealth: the cleanup gauges and counter report
// what Stats says: the lag, the rows past retention, the last success and
// the failures.
func TestObserveStatsCleanupHealth(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	m, err := jitotel.NewRelayMetrics(mp)
	if err != nil {
		t.Fatal(err)
	}
	last := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	reg, err := m.ObserveStats(func(context.Context) (relay.Stats, error) {
		return relay.Stats{CleanupLag: 90 * time.Second, PastRetention: 4321, LastCleanup: last, CleanupFailures: 3}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Unregister()
	c := collect(t, reader)
	if got := c.intSum(t, jitotel.MetricRowsPastRetention); got != 4321 {
		t.Errorf("%s = %d, want 4321", jitotel.MetricRowsPastRetention, got)
	}
	if got := c.intSum(t, jitotel.MetricCleanupFailures); got != 3 {
		t.Errorf("%s = %d, want 3", jitotel.MetricCleanupFailures, got)
	}
	for name, want := range map[string]float64{
		jitotel.MetricCleanupLag:         90,
		jitotel.MetricCleanupLastSuccess: float64(last.Unix()),
	} {
		if got, ok := c.floatGauge(t, name); !ok || got != want {
			t.Errorf("%s = %v (observed %v), want %v", name, got, ok, want)
		}
	}
}
