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
	from, source          string // db/mode of the drain, its benchmark
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

// drainPoint is one measured drain.
type drainPoint struct {
	key            string // db/mode
	relays         int
	rate, relayCPU float64
	// others is the cores other programs kept busy just before (-1: not
	// measured).
	others float64
	// source names the benchmark line, cmd the command that measures it.
	source, cmd string
}

// drains returns the measured drains of key: BenchmarkScaleModel's (next
// to the calibration) first, then BenchmarkDrainScaling's.
func (m *model) drains(key string) []drainPoint {
	var out []drainPoint
	for _, n := range []int{1, 2, 4} {
		name := fmt.Sprintf("%s/%s/drain/relays=%d", scalemodel.Benchmark, key, n)
		if r := benchparse.Find(m.results, name); r != nil {
			rate, ok := r.Metrics["events/s"]
			if !ok {
				continue
			}
			others, ok := r.Metrics["others-cores"]
			if !ok {
				others = -1
			}
			out = append(out, drainPoint{key: key, relays: n, rate: rate, relayCPU: r.Metrics["self-cpu-µs/event"], others: others,
				source: scalemodel.Benchmark,
				cmd:    fmt.Sprintf("go test -run '^$' -bench '^%s$/%s/drain' -benchtime=1x ./bench/ -scale.dbs=%s", scalemodel.Benchmark, key, strings.Split(key, "/")[0])})
		}
	}
	if r := benchparse.Find(m.results, drainBench+"/"+key); r != nil {
		for _, n := range []int{1, 2, 4} {
			if rate, ok := r.Metrics["relays"+strconv.Itoa(n)+"-events/s"]; ok {
				out = append(out, drainPoint{key: key, relays: n, rate: rate, relayCPU: r.Metrics["relays"+strconv.Itoa(n)+"-self-cpu-µs/event"],
					others: -1, source: drainBench,
					cmd: fmt.Sprintf("go test -run '^$' -bench '^%s$/%s' -benchtime=1x ./bench/", drainBench, key)})
			}
		}
	}
	return out
}

// scenarioFor is the scenario of a measured drain: the benchmarks' with
// its relays, on the cores other programs left (when measured).
func (m *model) scenarioFor(d drainPoint) scalemodel.Scenario {
	s := m.scenario(d.relays)
	if d.others >= 0 {
		s.Cores = math.Max(s.Cores-d.others, 0.1)
	}
	return s
}

// calibrateRelay fits the relay terms on the first one-relay drain of
// o.calibrate and gives them to every calibration.
func (m *model) calibrateRelay() error {
	c, ok := m.cals[m.o.calibrate]
	if !ok {
		return fmt.Errorf("%w: -calibrate %s: no BenchmarkScaleModel lines of it", errUsage, m.o.calibrate)
	}
	var d *drainPoint
	for _, p := range m.drains(m.o.calibrate) {
		if p.relays == 1 && p.relayCPU > 0 {
			d = &p
			break
		}
	}
	if d == nil {
		return nil // no drain measured: overlap 0, no relay term
	}
	clamped, err := c.CalibrateDrain(m.scenarioFor(*d), d.rate, d.relayCPU)
	if err != nil {
		return err
	}
	m.relay = relayTerms{from: m.o.calibrate, source: d.source, rate: d.rate, relayCPU: d.relayCPU, overlap: c.Overlap,
		wall: c.RelayWall, cpuAdd: c.RelayCPU, clamped: clamped, ok: true}
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
		fmt.Fprintf(w, "Relay terms: no one-relay drain of %s (%s/%s/drain or %s/%s), so overlap 0 and no relay cost beyond the stages.\n\n",
			m.o.calibrate, scalemodel.Benchmark, m.o.calibrate, drainBench, m.o.calibrate)
		return
	}
	note := ""
	if m.relay.clamped {
		note = " (clamped to [0, 1]: the drain is outside what the stages explain)"
	}
	fmt.Fprintf(w, "Relay terms, calibrated on the drain of %s %s with 1 relay (%s: %s events/s, relay process %s µs CPU per event): "+
		"overlap of the stages %.2f%s; the relay's own work %s µs per event (its CPU less the stages' client CPU).\n\n",
		m.relay.from, m.relay.source, m.relay.source, num(m.relay.rate), num(m.relay.relayCPU), m.relay.overlap, note, num(m.relay.wall))
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
	fmt.Fprintf(w, "### Predicted against measured (same files)\n\n")
	fmt.Fprintf(w, "A drain is predicted on the cores other programs left (the machine's busy CPU during an idle second just before it; "+
		"%d cores in all).\n\n", m.procs)
	fmt.Fprintf(w, "| point | cores left | predicted | measured | measured / predicted | binding limit | command |\n|---|---:|---:|---:|---:|---|---|\n")
	rows := 0
	for _, k := range m.keys {
		db, mode, _ := strings.Cut(k, "/")
		for _, d := range m.drains(k) {
			s := m.scenarioFor(d)
			p, err := scalemodel.Predict(m.cals[k], s)
			if err != nil {
				return err
			}
			label := fmt.Sprintf("%s %s drain, %d relay(s), events/s (%s)", dbLabel[db], mode, d.relays, d.source)
			if d.relays == 1 && k == m.relay.from && d.source == m.relay.source {
				label += " **calibration point**"
			}
			fmt.Fprintf(w, "| %s | %.2f | %s | %s | %.2f | %s | `%s` |\n", label, s.Cores, num(p.EventsPerSec), num(d.rate),
				d.rate/p.EventsPerSec, p.Binding, d.cmd)
			rows++
		}
	}
	for _, db := range []string{"postgres", "mysql", "sqlite"} {
		c, ok := m.cals[db+"/update"]
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
		fmt.Fprintf(w, "| %s time-critical p50 at light load (relay in process), µs | | %s | %s | %.2f | wake + publish → consumer | `go test -run '^$' -bench '^%s$/%s/critical/light' -benchtime=1x ./bench/ -latency.dbs=%s` |\n",
			dbLabel[db], num(p.CriticalP50), num(got*1000), got*1000/p.CriticalP50, latencyBench, db, db)
		rows++
	}
	if rows == 0 {
		fmt.Fprintf(w, "| (no drain or %s lines in the files) | | | | | | |\n", latencyBench)
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
