package main

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/jitoutbox/jitoutbox/bench/internal/benchparse"
	"github.com/jitoutbox/jitoutbox/bench/internal/scalemodel"
)

// Names of the measured points in the benchmark output.
const (
	drainBench   = "BenchmarkDrainScaling"
	latencyBench = "BenchmarkLatency"
	drainBatch   = 500 // BenchmarkDrainScaling's batch (bench's limitsBatch)
)

var dbLabel = map[string]string{"postgres": "PostgreSQL", "mysql": "MariaDB", "sqlite": "SQLite"}

// relayTerms are the model's terms calibrated on one measured drain.
type relayTerms struct {
	from                  string // db/mode of the drain
	rate, relayCPU        float64
	overlap, wall, cpuAdd float64
	clamped, ok           bool
}

// model is the calibrated model and what it was calibrated on.
type model struct {
	o       options
	results []*benchparse.Result
	keys    []string // db/mode calibrated, in order
	cals    map[string]scalemodel.Calibration
	fits    map[string][]scalemodel.Fitted
	relay   relayTerms
	procs   int // the benchmarks' GOMAXPROCS
}

// newModel calibrates every database and mode the results measured, and
// the relay terms on o.calibrate's one-relay drain.
func newModel(results []*benchparse.Result, o options) (*model, error) {
	m := &model{o: o, results: results, cals: map[string]scalemodel.Calibration{}, fits: map[string][]scalemodel.Fitted{}}
	for _, r := range results {
		if strings.HasPrefix(r.Name, scalemodel.Benchmark+"/") && r.Procs > 0 {
			m.procs = r.Procs
		}
	}
	for _, db := range []string{"postgres", "mysql", "sqlite"} {
		for _, mode := range []string{"update", "delete"} {
			c, fits, err := scalemodel.Calibrate(results, db, mode)
			if err != nil {
				if db+"/"+mode == o.db+"/"+o.mode {
					return nil, err
				}
				continue
			}
			key := db + "/" + mode
			m.keys = append(m.keys, key)
			m.cals[key], m.fits[key] = c, fits
		}
	}
	if err := m.calibrateRelay(); err != nil {
		return nil, err
	}
	return m, nil
}

// scenario returns the benchmarks' scenario with relays relays: one
// machine of their cores, batch 500, the flags' partitions and aggregates.
func (m *model) scenario(relays int) scalemodel.Scenario {
	s := scalemodel.Scenario{Relays: relays, Partitions: m.o.scenario.Partitions, Batch: drainBatch,
		Cores: float64(m.procs), Aggregates: m.o.scenario.Aggregates}
	if s.Cores == 0 {
		s.Cores = m.o.scenario.Cores
	}
	return s
}

// calibrateRelay fits the relay terms on the one-relay drain of
// o.calibrate and gives them to every calibration.
func (m *model) calibrateRelay() error {
	c, ok := m.cals[m.o.calibrate]
	if !ok {
		return fmt.Errorf("%w: -calibrate %s: no BenchmarkScaleModel lines of it", errUsage, m.o.calibrate)
	}
	r := benchparse.Find(m.results, drainBench+"/"+m.o.calibrate)
	if r == nil {
		return nil // no drain measured: overlap 0, no relay term
	}
	rate, ok1 := r.Metrics["relays1-events/s"]
	cpu, ok2 := r.Metrics["relays1-self-cpu-µs/event"]
	if !ok1 || !ok2 {
		return fmt.Errorf("%s/%s lacks relays1-events/s or relays1-self-cpu-µs/event", drainBench, m.o.calibrate)
	}
	if m.procs == 0 {
		m.procs = r.Procs
	}
	clamped, err := c.CalibrateDrain(m.scenario(1), rate, cpu)
	if err != nil {
		return err
	}
	m.relay = relayTerms{from: m.o.calibrate, rate: rate, relayCPU: cpu, overlap: c.Overlap, wall: c.RelayWall,
		cpuAdd: c.RelayCPU, clamped: clamped, ok: true}
	for k, cal := range m.cals {
		cal.Overlap, cal.RelayWall, cal.RelayCPU = c.Overlap, c.RelayWall, c.RelayCPU
		m.cals[k] = cal
	}
	return nil
}

func (m *model) write(w io.Writer) error {
	m.writeCalibration(w)
	if err := m.writePredictions(w); err != nil {
		return err
	}
	return m.writeChecks(w)
}

func (m *model) writeCalibration(w io.Writer) {
	fmt.Fprintf(w, "### Calibration: per-stage costs (BenchmarkScaleModel), fitted as fixed + per event\n\n")
	fmt.Fprintf(w, "| cost | fixed µs per batch | µs per event | r² | batch sizes |\n|---|---:|---:|---:|---|\n")
	seen := map[string]bool{}
	for _, k := range m.keys {
		for _, f := range m.fits[k] {
			if seen[f.What] {
				continue // the JetStream lines are the same for every database
			}
			seen[f.What] = true
			fmt.Fprintf(w, "| %s | %s | %s | %.3f | %s |\n", f.What, num(f.Fixed), num(f.PerEvent), f.R2, sizes(f.Points))
		}
	}
	fmt.Fprintf(w, "\n| database/mode | WAL flush per commit, µs | wake p50, µs | publish → consumer p50, µs |\n|---|---:|---:|---:|\n")
	for _, k := range m.keys {
		c := m.cals[k]
		flush := num(c.Flush)
		if c.Flush == 0 {
			flush = "not separable (≤ the mark's fixed " + num(c.Mark.Fixed) + ")"
			if c.DB == "sqlite" {
				flush = "one writer (the mark's time)"
			}
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s |\n", k, flush, num(c.Wake), num(c.Deliver))
	}
	fmt.Fprintln(w)
	if !m.relay.ok {
		fmt.Fprintf(w, "Relay terms: no %s/%s line, so overlap 0 and no relay cost beyond the stages.\n\n", drainBench, m.o.calibrate)
		return
	}
	note := ""
	if m.relay.clamped {
		note = " (clamped to [0, 1]: the drain is outside what the stages explain)"
	}
	fmt.Fprintf(w, "Relay terms, calibrated on %s/%s with 1 relay (%s events/s, relay process %s µs CPU per event): "+
		"overlap of the stages %.2f%s; the relay's own work %s µs per event (its CPU less the stages' client CPU).\n\n",
		drainBench, m.relay.from, num(m.relay.rate), num(m.relay.relayCPU), m.relay.overlap, note, num(m.relay.wall))
}

func (m *model) writePredictions(w io.Writer) error {
	key := m.o.db + "/" + m.o.mode
	c := m.cals[key]
	base := m.o.scenario
	if base.Cores == 0 {
		base.Cores = float64(m.procs)
	}
	where := fmt.Sprintf("one machine of %g cores", base.Cores)
	if base.Shards > 0 {
		where = fmt.Sprintf("%d shards of %g cores each, broker %g cores, %d replicas, RTT %g µs", base.Shards, base.DBCores,
			base.BrokerCores, max(base.Replicas, 1), base.RTT)
	}
	fmt.Fprintf(w, "### Predicted: %s %s, %s, %d partitions, batch %d, %d aggregates",
		dbLabel[c.DB], c.Mode, where, base.Partitions, base.Batch, base.Aggregates)
	if base.HotShare > 0 {
		fmt.Fprintf(w, ", hottest aggregate %.1f%% of events", 100*base.HotShare)
	}
	if base.ProducerBatch > 0 {
		fmt.Fprintf(w, ", producers on the same cores (%d events a transaction)", base.ProducerBatch)
	}
	fmt.Fprintf(w, "\n\n")
	var last scalemodel.Prediction
	var names []string
	for i, n := range m.o.relays {
		s := base
		s.Relays = n
		p, err := scalemodel.Predict(c, s)
		if err != nil {
			return fmt.Errorf("%w: %w", errUsage, err)
		}
		if i == 0 {
			for _, l := range p.Limits {
				names = append(names, l.Name)
			}
			fmt.Fprintf(w, "| relays | events/s | binding limit | %s | effective relays | time-critical p50, µs (other process) |\n|---:|---:|---|%s---:|---|\n",
				strings.Join(names, " | "), strings.Repeat("---:|", len(names)))
		}
		cells := make([]string, len(p.Limits))
		for j, l := range p.Limits {
			cells[j] = num(l.EventsPerSec)
		}
		fmt.Fprintf(w, "| %d | %s | %s | %s | %.2f | %s (%s) |\n", n, num(p.EventsPerSec), p.Binding, strings.Join(cells, " | "),
			p.EffectiveRelays, num(p.CriticalP50), num(p.CriticalP50Remote))
		last = p
	}
	fmt.Fprintf(w, "\n#### Where each limit sits with %d relays, and what to do at it\n\n| limit | events/s | why | what to do |\n|---|---:|---|---|\n",
		m.o.relays[len(m.o.relays)-1])
	for _, l := range last.Limits {
		mark := ""
		if l.Name == last.Binding {
			mark = " **(binds)**"
		}
		fmt.Fprintf(w, "| %s%s | %s | %s | %s |\n", l.Name, mark, num(l.EventsPerSec), l.Detail, l.Advice)
	}
	fmt.Fprintln(w)
	return nil
}

// writeChecks compares the model with the drains and latencies measured
// in the same files.
func (m *model) writeChecks(w io.Writer) error {
	fmt.Fprintf(w, "### Predicted against measured (same files)\n\n| point | predicted | measured | measured / predicted | binding limit | command |\n|---|---:|---:|---:|---|---|\n")
	rows := 0
	for _, k := range m.keys {
		r := benchparse.Find(m.results, drainBench+"/"+k)
		if r == nil {
			continue
		}
		db, mode, _ := strings.Cut(k, "/")
		for _, n := range []int{1, 2, 4} {
			got, ok := r.Metrics["relays"+strconv.Itoa(n)+"-events/s"]
			if !ok {
				continue
			}
			p, err := scalemodel.Predict(m.cals[k], m.scenario(n))
			if err != nil {
				return err
			}
			label := fmt.Sprintf("%s %s drain, %d relay(s), events/s", dbLabel[db], mode, n)
			if n == 1 && k == m.relay.from {
				label += " (the calibration point)"
			}
			fmt.Fprintf(w, "| %s | %s | %s | %.2f | %s | `go test -run '^$' -bench '^%s$/%s' -benchtime=1x ./bench/` |\n",
				label, num(p.EventsPerSec), num(got), got/p.EventsPerSec, p.Binding, drainBench, k)
			rows++
		}
	}
	for _, db := range []string{"postgres", "mysql", "sqlite"} {
		k := db + "/update"
		c, ok := m.cals[k]
		if !ok {
			continue
		}
		r := benchparse.Find(m.results, latencyBench+"/"+db+"/critical/light")
		if r == nil {
			continue
		}
		got, ok := r.Metrics["p50-ms"]
		if !ok {
			continue
		}
		p, err := scalemodel.Predict(c, m.scenario(1))
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "| %s time-critical p50 at light load (relay in process), µs | %s | %s | %.2f | wake + publish → consumer | `go test -run '^$' -bench '^%s$/%s/critical/light' -benchtime=1x ./bench/ -latency.dbs=%s` |\n",
			dbLabel[db], num(p.CriticalP50), num(got*1000), got*1000/p.CriticalP50, latencyBench, db, db)
		rows++
	}
	if rows == 0 {
		fmt.Fprintf(w, "| (no %s or %s lines in the files) | | | | | |\n", drainBench, latencyBench)
	}
	fmt.Fprintln(w)
	return nil
}

// num formats a figure for a table: thousands grouped, small ones with
// decimals, +Inf as "∞".
func num(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "∞"
	case math.Abs(v) >= 1000:
		s := strconv.FormatFloat(math.Round(v), 'f', 0, 64)
		neg := strings.HasPrefix(s, "-")
		s = strings.TrimPrefix(s, "-")
		var b strings.Builder
		for i, c := range s {
			if i > 0 && (len(s)-i)%3 == 0 {
				b.WriteByte(',')
			}
			b.WriteRune(c)
		}
		if neg {
			return "-" + b.String()
		}
		return b.String()
	case math.Abs(v) >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	default:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
}

func sizes(ns []float64) string {
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = strconv.FormatFloat(n, 'f', -1, 64)
	}
	return strings.Join(parts, ", ")
}
