package jitotel

import (
	"fmt"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/jitoutbox/jitoutbox/relay"
)

// Attributes and values of FleetMetrics.
const (
	// AttrSource is the attribute naming a fleet's source (a database).
	AttrSource = "source"
	// AttrTable is the attribute naming an outbox table of a source.
	AttrTable = "table"
	// OtherTable is the AttrTable value of the tables past the cap of
	// WithMaxTables.
	OtherTable = "other"
	// DefaultMaxTables is how many (source, table) pairs get labels of
	// their own when WithMaxTables is not given.
	DefaultMaxTables = 100
)

// FleetMetrics records the activity of the relays of a fleet (many tables,
// of one or more sources) with the instruments of RelayMetrics, each series
// carrying the attributes source and table. Give its Hooks method to
// relay.FleetConfig.Hooks.
//
// The label count is bounded: the first WithMaxTables pairs (default
// DefaultMaxTables), in the order Hooks or Table first sees them, get a
// label of their own, kept for the life of the FleetMetrics (a dropped
// table keeps its slot: its counters stay, as Prometheus expects of a
// counter). The pairs after them keep their source and are recorded with
// table "other", summed with the other tables of that source past the cap;
// so a FleetMetrics has at most the cap plus one "other" per source of
// series per instrument and attribute split. Sources are the databases the
// fleet is configured with, a short list; the tables are what patterns
// discover, the number that grows. A real table named "other" shares the
// "other" label of its source.
//
// The cap and the labels belong to one FleetMetrics value; nothing is
// global. It is safe for concurrent use.
type FleetMetrics struct {
	ins *instruments
	max int

	mu     sync.Mutex
	tables map[fleetKey]*RelayMetrics // the pairs with labels of their own
	other  map[string]*RelayMetrics   // by source, table "other"
}

type fleetKey struct{ source, table string }

// NewFleetMetrics creates the instruments on a meter of mp named ScopeName,
// as NewRelayMetrics does. The attribute keys source and table are
// reserved for the labels it adds. mp must not be nil.
func NewFleetMetrics(mp metric.MeterProvider, opts ...MetricsOption) (*FleetMetrics, error) {
	ins, err := newInstruments(mp, opts)
	if err != nil {
		return nil, err
	}
	for _, a := range ins.cfg.attrs {
		if a.Key == AttrSource || a.Key == AttrTable {
			return nil, fmt.Errorf("%w: attribute key %q is reserved by FleetMetrics", ErrInvalidOption, a.Key)
		}
	}
	f := &FleetMetrics{ins: ins, max: DefaultMaxTables,
		tables: make(map[fleetKey]*RelayMetrics), other: make(map[string]*RelayMetrics)}
	if ins.cfg.maxTables != 0 {
		f.max = ins.cfg.maxTables
	}
	return f, nil
}

// Hooks returns the hooks that record the relay of one table of a source;
// it fits relay.FleetConfig.Hooks. The value is f.Table(source, table).
func (f *FleetMetrics) Hooks(source, table string) relay.Hooks { return f.Table(source, table) }

// Table returns the RelayMetrics that records under source and table, or
// under source and "other" once the cap is reached. Every call for one pair
// returns the same value. A new label's counter series start at zero, as
// NewRelayMetrics' do.
func (f *FleetMetrics) Table(source, table string) *RelayMetrics {
	f.mu.Lock()
	defer f.mu.Unlock()
	k := fleetKey{source, table}
	if m, ok := f.tables[k]; ok {
		return m
	}
	if table != OtherTable && len(f.tables) < f.max {
		m := f.ins.label(f.attrs(source, table), false)
		f.tables[k] = m
		return m
	}
	m, ok := f.other[source]
	if !ok {
		m = f.ins.label(f.attrs(source, OtherTable), true)
		f.other[source] = m
	}
	return m
}

// attrs returns the user's attributes with source and table.
func (f *FleetMetrics) attrs(source, table string) []attribute.KeyValue {
	return append(append([]attribute.KeyValue(nil), f.ins.cfg.attrs...),
		attribute.String(AttrSource, source), attribute.String(AttrTable, table))
}
