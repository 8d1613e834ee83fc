package jitotel_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	jitotel "github.com/jitoutbox/jitoutbox/otel"
	"github.com/jitoutbox/jitoutbox/relay"
)

// newFleetMetrics returns a FleetMetrics on a manual reader.
func newFleetMetrics(t *testing.T, opts ...jitotel.MetricsOption) (*jitotel.FleetMetrics, *sdkmetric.ManualReader) {
	t.Helper()
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	f, err := jitotel.NewFleetMetrics(mp, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return f, reader
}

func label(source, table string) []attribute.KeyValue {
	return []attribute.KeyValue{attribute.String(jitotel.AttrSource, source), attribute.String(jitotel.AttrTable, table)}
}

// record publishes n events (critical ones when crit) and dead-letters one
// through h, in one batch that also retried one event.
func record(h relay.Hooks, n int, crit bool) {
	ctx := h.BatchStart(context.Background(), relay.BatchStartInfo{Size: n + 2})
	for range n {
		h.(relay.PublishedHook).Published(ctx, relay.Message{Critical: crit}, time.Millisecond)
	}
	h.(relay.DeadLetterHook).DeadLettered(ctx, relay.Message{Critical: crit}, errors.New("poison"))
	h.BatchEnd(ctx, relay.BatchEndInfo{Size: n + 2, Published: n, Dead: 1, Retried: 1})
}

// TestFleetMetricsSeparateTables: two tables (of two sources, and two of
// one source) are recorded under their own labels, with the user's
// attributes, on one set of instruments.
func TestFleetMetricsSeparateTables(t *testing.T) {
	svc := attribute.String("service", "orders")
	f, reader := newFleetMetrics(t, jitotel.WithAttributes(svc))
	record(f.Hooks("main", "public.outbox"), 3, true)
	record(f.Hooks("main", "tenant_a.outbox"), 5, false)
	record(f.Hooks("shard2", "public.outbox"), 7, false)
	if f.Table("main", "public.outbox") != f.Hooks("main", "public.outbox") {
		t.Error("Hooks and Table return different values for one pair")
	}

	c := collect(t, reader)
	for _, tc := range []struct {
		name  string
		attrs []attribute.KeyValue
		want  int64
	}{
		{jitotel.MetricPublished, append(label("main", "public.outbox"), svc, critTrue), 3},
		{jitotel.MetricPublished, append(label("main", "public.outbox"), critFalse), 0},
		{jitotel.MetricPublished, append(label("main", "tenant_a.outbox"), svc, critFalse), 5},
		{jitotel.MetricPublished, append(label("shard2", "public.outbox"), critFalse), 7},
		{jitotel.MetricPublished, nil, 15},
		{jitotel.MetricDead, label("main", "tenant_a.outbox"), 1},
		{jitotel.MetricRetried, label("shard2", "public.outbox"), 1},
		{jitotel.MetricRetried, nil, 3},
	} {
		if got := c.intSum(t, tc.name, tc.attrs...); got != tc.want {
			t.Errorf("%s%v = %d, want %d", tc.name, tc.attrs, got, tc.want)
		}
	}
	if n := c.histogram(t, jitotel.MetricLatency, append(label("shard2", "public.outbox"), critFalse)...).Count; n != 7 {
		t.Errorf("latency count of shard2/public.outbox = %d, want 7", n)
	}
	sum, _ := c[jitotel.MetricRetried].Data.(metricdata.Sum[int64])
	if len(sum.DataPoints) != 3 {
		t.Errorf("%s has %d series, want one per table: %+v", jitotel.MetricRetried, len(sum.DataPoints), sum.DataPoints)
	}
}

// TestFleetMetricsCap: with a cap of 3, the fourth and fifth tables are
// recorded under table "other" of their source, a table seen before the
// cap keeps its label, and the sum over every label is what was recorded.
func TestFleetMetricsCap(t *testing.T) {
	const capTables = 3
	f, reader := newFleetMetrics(t, jitotel.WithMaxTables(capTables))
	total := 0
	for i := range capTables + 2 {
		source := "main"
		if i == capTables+1 {
			source = "shard2"
		}
		n := i + 1
		record(f.Hooks(source, fmt.Sprintf("tenant_%d.outbox", i)), n, false)
		total += n
	}
	record(f.Hooks("main", "tenant_0.outbox"), 10, false) // under the cap: its own label still
	total += 10

	c := collect(t, reader)
	for _, tc := range []struct {
		attrs []attribute.KeyValue
		want  int64
	}{
		{label("main", "tenant_0.outbox"), 11},
		{label("main", "tenant_1.outbox"), 2},
		{label("main", "tenant_2.outbox"), 3},
		{label("main", "tenant_3.outbox"), 0},
		{label("main", jitotel.OtherTable), 4},
		{label("shard2", jitotel.OtherTable), 5},
		{nil, int64(total)},
	} {
		if got := c.intSum(t, jitotel.MetricPublished, tc.attrs...); got != tc.want {
			t.Errorf("published%v = %d, want %d", tc.attrs, got, tc.want)
		}
	}
	sum := c[jitotel.MetricPublished].Data.(metricdata.Sum[int64])
	tables := map[string]bool{}
	for _, p := range sum.DataPoints {
		v, _ := p.Attributes.Value(jitotel.AttrSource)
		w, _ := p.Attributes.Value(jitotel.AttrTable)
		tables[v.AsString()+"/"+w.AsString()] = true
	}
	if len(tables) != capTables+2 { // three tables, main/other, shard2/other
		t.Errorf("labels %v, want %d", tables, capTables+2)
	}
	if _, err := f.Table("main", "tenant_9.outbox").ObserveStats(func(context.Context) (relay.Stats, error) {
		return relay.Stats{}, nil
	}); !errors.Is(err, jitotel.ErrInvalidOption) {
		t.Errorf("ObserveStats on a table past the cap: %v, want ErrInvalidOption", err)
	}
	reg, err := f.Table("main", "tenant_1.outbox").ObserveStats(func(context.Context) (relay.Stats, error) {
		return relay.Stats{Pending: 42}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Unregister()
	if got := collect(t, reader).intSum(t, jitotel.MetricBacklog, label("main", "tenant_1.outbox")...); got != 42 {
		t.Errorf("backlog of main/tenant_1.outbox = %d, want 42", got)
	}
}

// TestFleetMetricsCountersStartAtZero: a new label's counter series exist
// at 0 before its first event, as TestCountersStartAtZero demands of one
// relay, the "other" label's included.
func TestFleetMetricsCountersStartAtZero(t *testing.T) {
	f, reader := newFleetMetrics(t, jitotel.WithMaxTables(1))
	if c := collect(t, reader); c.intSum(t, jitotel.MetricPublished) != 0 || len(c) != 0 {
		t.Fatalf("series before any table: %v", c)
	}
	f.Hooks("main", "a.outbox")
	f.Hooks("main", "b.outbox") // past the cap: main/other
	c := collect(t, reader)
	for _, tc := range []struct {
		name   string
		points int // per label
	}{
		{jitotel.MetricPublished, 2}, {jitotel.MetricDead, 2},
		{jitotel.MetricRetried, 1}, {jitotel.MetricReleased, 1}, {jitotel.MetricBatchErrors, 1},
	} {
		for _, l := range [][]attribute.KeyValue{label("main", "a.outbox"), label("main", jitotel.OtherTable)} {
			sum, ok := c[tc.name].Data.(metricdata.Sum[int64])
			if !ok {
				t.Fatalf("%s: %#v", tc.name, c[tc.name].Data)
			}
			n := 0
			for _, p := range sum.DataPoints {
				if match(p.Attributes, l) {
					n++
					if p.Value != 0 {
						t.Errorf("%s%v = %d, want 0", tc.name, p.Attributes.ToSlice(), p.Value)
					}
				}
			}
			if n != tc.points {
				t.Errorf("%s%v: %d points, want %d", tc.name, l, n, tc.points)
			}
		}
	}
}

func TestNewFleetMetricsRejectsBadArguments(t *testing.T) {
	mp := sdkmetric.NewMeterProvider()
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	for name, opts := range map[string][]jitotel.MetricsOption{
		"source attr": {jitotel.WithAttributes(attribute.String(jitotel.AttrSource, "x"))},
		"table attr":  {jitotel.WithAttributes(attribute.String(jitotel.AttrTable, "x"))},
		"zero cap":    {jitotel.WithMaxTables(0)},
		"nil option":  {nil},
	} {
		if f, err := jitotel.NewFleetMetrics(mp, opts...); f != nil || !errors.Is(err, jitotel.ErrInvalidOption) {
			t.Errorf("%s: got (%v, %v), want ErrInvalidOption", name, f, err)
		}
	}
	if f, err := jitotel.NewFleetMetrics(nil); f != nil || !errors.Is(err, jitotel.ErrInvalidOption) {
		t.Errorf("nil provider: got (%v, %v), want ErrInvalidOption", f, err)
	}
	if m, err := jitotel.NewRelayMetrics(mp, jitotel.WithMaxTables(5)); m != nil || !errors.Is(err, jitotel.ErrInvalidOption) {
		t.Errorf("NewRelayMetrics with WithMaxTables: got (%v, %v), want ErrInvalidOption", m, err)
	}
}
