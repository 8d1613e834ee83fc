package jitotel_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	jitotel "github.com/jitoutbox/jitoutbox/otel"
	"github.com/jitoutbox/jitoutbox/relay"
	"github.com/jitoutbox/jitoutbox/txoutbox"
)

// collected is one collection, indexed by instrument name.
type collected map[string]metricdata.Metrics

func collect(t *testing.T, r *sdkmetric.ManualReader) collected {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.Collect(context.Background(), &rm); err != nil {
		t.Fatalf("collect: %v", err)
	}
	out := collected{}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != jitotel.ScopeName {
			t.Errorf("scope %q, want %q", sm.Scope.Name, jitotel.ScopeName)
		}
		for _, m := range sm.Metrics {
			out[m.Name] = m
		}
	}
	return out
}

// match reports whether set holds every attribute of want.
func match(set attribute.Set, want []attribute.KeyValue) bool {
	for _, kv := range want {
		if v, ok := set.Value(kv.Key); !ok || v != kv.Value {
			return false
		}
	}
	return true
}

// intSum returns the counter's value for the points matching attrs (0 when
// none).
func (c collected) intSum(t *testing.T, name string, attrs ...attribute.KeyValue) int64 {
	t.Helper()
	m, ok := c[name]
	if !ok {
		return 0
	}
	var total int64
	switch d := m.Data.(type) {
	case metricdata.Sum[int64]:
		for _, p := range d.DataPoints {
			if match(p.Attributes, attrs) {
				total += p.Value
			}
		}
	case metricdata.Gauge[int64]:
		for _, p := range d.DataPoints {
			if match(p.Attributes, attrs) {
				total += p.Value
			}
		}
	default:
		t.Fatalf("%s: unexpected data %T", name, m.Data)
	}
	return total
}

func (c collected) floatGauge(t *testing.T, name string) (float64, bool) {
	t.Helper()
	m, ok := c[name]
	if !ok {
		return 0, false
	}
	g, ok := m.Data.(metricdata.Gauge[float64])
	if !ok || len(g.DataPoints) != 1 {
		t.Fatalf("%s: data %#v, want one float64 gauge point", name, m.Data)
	}
	return g.DataPoints[0].Value, true
}

func (c collected) histogram(t *testing.T, name string, attrs ...attribute.KeyValue) metricdata.HistogramDataPoint[float64] {
	t.Helper()
	h, ok := c[name].Data.(metricdata.Histogram[float64])
	if !ok {
		t.Fatalf("%s: data %T, want a float64 histogram", name, c[name].Data)
	}
	for _, p := range h.DataPoints {
		if match(p.Attributes, attrs) {
			return p
		}
	}
	return metricdata.HistogramDataPoint[float64]{}
}

var (
	critTrue  = attribute.Bool("critical", true)
	critFalse = attribute.Bool("critical", false)
)

// TestRelayMetricsHooks calls the hooks directly and checks every instrument.
func TestRelayMetricsHooks(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	svc := attribute.String("service", "orders")
	m, err := jitotel.NewRelayMetrics(mp, jitotel.WithAttributes(svc))
	if err != nil {
		t.Fatal(err)
	}
	ctx := m.BatchStart(context.Background(), relay.BatchStartInfo{Size: 6})
	m.Published(ctx, relay.Message{Critical: true}, 3*time.Millisecond)
	m.Published(ctx, relay.Message{Critical: true}, 7*time.Millisecond)
	m.Published(ctx, relay.Message{}, 2*time.Second)
	m.DeadLettered(ctx, relay.Message{}, errors.New("poison"))
	m.BatchEnd(ctx, relay.BatchEndInfo{Size: 6, Published: 3, Retried: 1, Dead: 1, Released: 1, Err: errors.New("db down")})

	c := collect(t, reader)
	for _, tc := range []struct {
		name  string
		attrs []attribute.KeyValue
		want  int64
	}{
		{jitotel.MetricPublished, []attribute.KeyValue{svc, critTrue}, 2},
		{jitotel.MetricPublished, []attribute.KeyValue{svc, critFalse}, 1},
		{jitotel.MetricDead, []attribute.KeyValue{svc, critFalse}, 1},
		{jitotel.MetricDead, []attribute.KeyValue{critTrue}, 0},
		{jitotel.MetricRetried, []attribute.KeyValue{svc}, 1},
		{jitotel.MetricReleased, []attribute.KeyValue{svc}, 1},
		{jitotel.MetricBatchErrors, []attribute.KeyValue{svc}, 1},
	} {
		if got := c.intSum(t, tc.name, tc.attrs...); got != tc.want {
			t.Errorf("%s%v = %d, want %d", tc.name, tc.attrs, got, tc.want)
		}
	}
	crit := c.histogram(t, jitotel.MetricLatency, svc, critTrue)
	if crit.Count != 2 || crit.Sum < 0.0099 || crit.Sum > 0.0101 {
		t.Errorf("critical latency: count %d sum %v, want 2 and 0.010s", crit.Count, crit.Sum)
	}
	ord := c.histogram(t, jitotel.MetricLatency, svc, critFalse)
	if ord.Count != 1 || ord.Sum != 2 {
		t.Errorf("ordinary latency: count %d sum %v, want 1 and 2s", ord.Count, ord.Sum)
	}
	if len(crit.Bounds) != len(jitotel.LatencyBuckets) {
		t.Errorf("latency buckets %v, want %v", crit.Bounds, jitotel.LatencyBuckets)
	}
	if c.histogram(t, jitotel.MetricLatency, svc, critTrue).BucketCounts[2] != 1 { // (2.5ms, 5ms]
		t.Errorf("3ms not in the (2.5ms, 5ms] bucket: %v", crit.BucketCounts)
	}
	if _, ok := c[jitotel.MetricBacklog]; ok {
		t.Errorf("backlog observed without ObserveStats")
	}
}

func TestNewRelayMetricsRejectsBadArguments(t *testing.T) {
	mp := sdkmetric.NewMeterProvider()
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	cases := map[string]func() (*jitotel.RelayMetrics, error){
		"nil provider": func() (*jitotel.RelayMetrics, error) { return jitotel.NewRelayMetrics(nil) },
		"nil option":   func() (*jitotel.RelayMetrics, error) { return jitotel.NewRelayMetrics(mp, nil) },
		"reserved attr": func() (*jitotel.RelayMetrics, error) {
			return jitotel.NewRelayMetrics(mp, jitotel.WithAttributes(critTrue))
		},
		"zero timeout": func() (*jitotel.RelayMetrics, error) { return jitotel.NewRelayMetrics(mp, jitotel.WithStatsTimeout(0)) },
		"invalid attr": func() (*jitotel.RelayMetrics, error) {
			return jitotel.NewRelayMetrics(mp, jitotel.WithAttributes(attribute.KeyValue{}))
		},
	}
	for name, f := range cases {
		if m, err := f(); m != nil || !errors.Is(err, jitotel.ErrInvalidOption) {
			t.Errorf("%s: got (%v, %v), want ErrInvalidOption", name, m, err)
		}
	}
	m, err := jitotel.NewRelayMetrics(mp)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.ObserveStats(nil); !errors.Is(err, jitotel.ErrInvalidOption) {
		t.Errorf("ObserveStats(nil): %v, want ErrInvalidOption", err)
	}
}

// TestObserveStatsTimeout checks that a stats query is bounded: a StatsFunc
// that blocks until its context ends returns within the timeout, and
// nothing is observed.
func TestObserveStatsTimeout(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	m, err := jitotel.NewRelayMetrics(mp, jitotel.WithStatsTimeout(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	reg, err := m.ObserveStats(func(ctx context.Context) (relay.Stats, error) {
		if _, ok := ctx.Deadline(); !ok {
			t.Error("stats context has no deadline")
		}
		<-ctx.Done()
		return relay.Stats{}, ctx.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Unregister()
	var rm metricdata.ResourceMetrics
	_ = reader.Collect(context.Background(), &rm) // the callback's error is reported, not fatal
	for _, sm := range rm.ScopeMetrics {
		for _, mt := range sm.Metrics {
			if mt.Name == jitotel.MetricBacklog {
				t.Errorf("backlog observed although the stats query failed: %+v", mt.Data)
			}
		}
	}
}

// flakyPublisher accepts every message except: event type "poison" fails
// permanently, and "flaky" fails on its first attempt.
type flakyPublisher struct {
	mu       sync.Mutex
	attempts map[string]int
}

func (p *flakyPublisher) Publish(_ context.Context, batch []relay.Message, errs []error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, m := range batch {
		p.attempts[m.ID]++
		switch {
		case m.EventType == "poison":
			errs[i] = relay.Permanent(errors.New("poison"))
		case m.EventType == "flaky" && p.attempts[m.ID] == 1:
			errs[i] = errors.New("flaky")
		}
	}
}

// TestRelayMetricsWithRelay runs a real relay on SQLite and checks the
// counters, the latency split and the stats gauges.
func TestRelayMetricsWithRelay(t *testing.T) {
	ctx := ctxTimeout(t, 60*time.Second)
	db, d := sqliteOutbox(t, ctx)
	ob, err := txoutbox.New(db, d)
	if err != nil {
		t.Fatal(err)
	}
	add := func(agg, typ string, critical bool) {
		t.Helper()
		var opts []txoutbox.TxOption
		if critical {
			opts = append(opts, txoutbox.TimeCritical())
		}
		tx, err := ob.Begin(ctx, nil, opts...)
		if err != nil {
			t.Fatal(err)
		}
		var delay time.Duration
		if typ == "reminder" {
			delay = time.Hour // scheduled: pending, never published in the test
		}
		if _, err := tx.Add(txoutbox.Event{AggregateType: "order", AggregateID: agg, EventType: typ, Delay: delay}); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	add("1", "paid", true)
	add("2", "paid", true)
	add("3", "created", false)
	add("4", "created", false)
	add("5", "flaky", false)
	add("6", "poison", false)
	add("7", "reminder", false)

	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	m, err := jitotel.NewRelayMetrics(mp)
	if err != nil {
		t.Fatal(err)
	}
	r, err := relay.New(db, d, &flakyPublisher{attempts: map[string]int{}}, relay.Config{
		Hooks: m, PollInterval: 20 * time.Millisecond, Backoff: func(int) time.Duration { return time.Millisecond },
	})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := m.ObserveStats(r.Stats)
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Unregister()

	before := collect(t, reader)
	if got := before.intSum(t, jitotel.MetricBacklog); got != 7 {
		t.Errorf("backlog before the relay ran = %d, want 7", got)
	}
	if age, ok := before.floatGauge(t, jitotel.MetricOldestPendingAge); !ok || age <= 0 {
		t.Errorf("oldest pending age before the relay ran = %v (observed %v), want > 0", age, ok)
	}

	stop := runRelay(t, ctx, r.Run)
	for {
		s, err := r.Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		// Ownership and cleanup health while it runs: one live relay owns
		// every partition, and its first cleanup run (at start) succeeded.
		if s.Pending == 1 && s.Scheduled == 1 && s.Dead == 1 && s.LiveRelays == 1 && s.Partitions > 0 &&
			s.OwnedPartitions == s.Partitions && !s.LastCleanup.IsZero() && s.CleanupFailures == 0 {
			if g := collect(t, reader).intSum(t, jitotel.MetricOwnedPartitions); g != int64(s.Partitions) {
				t.Errorf("owned partitions gauge = %d, want %d", g, s.Partitions)
			}
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("relay did not drain: %+v", s)
		}
		time.Sleep(10 * time.Millisecond)
	}
	stop()

	after := collect(t, reader)
	for _, tc := range []struct {
		name  string
		attrs []attribute.KeyValue
		want  int64
	}{
		{jitotel.MetricPublished, []attribute.KeyValue{critTrue}, 2},
		{jitotel.MetricPublished, []attribute.KeyValue{critFalse}, 3},
		{jitotel.MetricRetried, nil, 1},
		{jitotel.MetricDead, []attribute.KeyValue{critFalse}, 1},
		{jitotel.MetricBacklog, nil, 1}, // the scheduled event
		{jitotel.MetricScheduled, nil, 1},
		{jitotel.MetricDeadRows, nil, 1},
	} {
		if got := after.intSum(t, tc.name, tc.attrs...); got != tc.want {
			t.Errorf("%s%v = %d, want %d", tc.name, tc.attrs, got, tc.want)
		}
	}
	if n := after.histogram(t, jitotel.MetricLatency, critTrue).Count; n != 2 {
		t.Errorf("critical latency count = %d, want 2", n)
	}
	if n := after.histogram(t, jitotel.MetricLatency, critFalse).Count; n != 3 {
		t.Errorf("ordinary latency count = %d, want 3", n)
	}
	if age, _ := after.floatGauge(t, jitotel.MetricOldestPendingAge); age != 0 {
		t.Errorf("oldest pending age after draining = %v, want 0", age)
	}
}

// TestCountersStartAtZero: each counter series exists before its first
// event, at 0, so that increase() in an alert sees the first one.
func TestCountersStartAtZero(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	if _, err := jitotel.NewRelayMetrics(mp); err != nil {
		t.Fatal(err)
	}
	c := collect(t, reader)
	for _, tc := range []struct {
		name   string
		points int
	}{
		{jitotel.MetricPublished, 2}, {jitotel.MetricDead, 2},
		{jitotel.MetricRetried, 1}, {jitotel.MetricReleased, 1}, {jitotel.MetricBatchErrors, 1},
	} {
		sum, ok := c[tc.name].Data.(metricdata.Sum[int64])
		if !ok || len(sum.DataPoints) != tc.points {
			t.Errorf("%s: %#v, want %d points", tc.name, c[tc.name].Data, tc.points)
			continue
		}
		for _, p := range sum.DataPoints {
			if p.Value != 0 {
				t.Errorf("%s%v = %d, want 0", tc.name, p.Attributes.ToSlice(), p.Value)
			}
		}
	}
}
