package scalemodel

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/jitoutbox/jitoutbox/bench/internal/benchparse"
)

// Benchmark is the name of the benchmark whose lines Calibrate reads:
//
//	BenchmarkScaleModel/<db>/<mode>/batch=<n>   read-µs/batch mark-µs/batch cpu-µs/batch self-cpu-µs/batch [server-cpu-µs/batch] [mark-nosync-µs/batch]
//	BenchmarkScaleModel/<db>/insert/batch=<n>   insert-µs/batch cpu-µs/batch self-cpu-µs/batch [server-cpu-µs/batch]
//	BenchmarkScaleModel/jetstream/batch=<n>     publish-µs/batch cpu-µs/batch self-cpu-µs/batch [server-cpu-µs/batch]
//	BenchmarkScaleModel/jetstream/latency       wake-p50-us deliver-p50-us
//
// CPU is taken as the client's (self-cpu) plus the server's (server-cpu)
// where the server was metered, else as the machine's (cpu).
const Benchmark = "BenchmarkScaleModel"

// Fitted is one fitted cost, for the calibration table.
type Fitted struct {
	// What names the cost ("postgres/update read wall").
	What string
	Linear
	// R2 is the fit's coefficient of determination, Points the batch sizes.
	R2     float64
	Points []float64
}

// Calibrate fits every stage of db (and mode) from BenchmarkScaleModel's
// lines in results: wall times and CPU per batch against the batch size.
// It returns the calibration (without the drain's Overlap and Relay* terms:
// see CalibrateDrain) and the fits.
func Calibrate(results []*benchparse.Result, db, mode string) (Calibration, []Fitted, error) {
	c := Calibration{DB: db, Mode: mode}
	var fits []Fitted
	fit := func(group, unit, what string) (Linear, error) {
		ns, ys := batchPoints(results, Benchmark+"/"+group+"/batch=", unit)
		l, r2, err := Fit(ns, ys)
		if err != nil {
			return Linear{}, fmt.Errorf("scalemodel: %s/%s %s: %w", Benchmark, group, unit, err)
		}
		fits = append(fits, Fitted{What: what, Linear: l, R2: r2, Points: ns})
		return l, nil
	}
	type target struct {
		group, unit, what string
		dst               *Linear
	}
	dm := db + "/" + mode
	targets := []target{
		{dm, "read-µs/batch", dm + " read, wall", &c.Read},
		{dm, "mark-µs/batch", dm + " mark, wall", &c.Mark},
		{dm, "cpu-µs/batch", dm + " read + mark, machine CPU", &c.DBWork.Machine},
		{dm, "self-cpu-µs/batch", dm + " read + mark, client CPU", &c.DBWork.Client},
		{"jetstream", "publish-µs/batch", "JetStream publish + acks, wall", &c.Publish},
		{"jetstream", "cpu-µs/batch", "JetStream publish, machine CPU", &c.Broker.Machine},
		{"jetstream", "self-cpu-µs/batch", "JetStream publish, client CPU", &c.Broker.Client},
		{db + "/insert", "insert-µs/batch", db + " producer transaction, wall", &c.Insert},
		{db + "/insert", "cpu-µs/batch", db + " producer transaction, machine CPU", &c.Producer.Machine},
		{db + "/insert", "self-cpu-µs/batch", db + " producer transaction, client CPU", &c.Producer.Client},
	}
	for _, t := range targets {
		l, err := fit(t.group, t.unit, t.what)
		if err != nil {
			return c, fits, err
		}
		*t.dst = l
	}
	// Where the server's own processes were metered, machine CPU is the
	// client's plus the server's: the machine's meter also counts other
	// programs of a shared machine.
	for _, s := range []struct {
		group, what string
		cpu         *CPU
	}{
		{dm, dm + " read + mark, server CPU", &c.DBWork},
		{"jetstream", "JetStream publish, server CPU", &c.Broker},
		{db + "/insert", db + " producer transaction, server CPU", &c.Producer},
	} {
		if ns, _ := batchPoints(results, Benchmark+"/"+s.group+"/batch=", "server-cpu-µs/batch"); len(ns) < 2 {
			continue
		}
		server, err := fit(s.group, "server-cpu-µs/batch", s.what)
		if err != nil {
			return c, fits, err
		}
		s.cpu.Machine = s.cpu.Client.Add(server)
	}
	if ns, _ := batchPoints(results, Benchmark+"/"+dm+"/batch=", "mark-nosync-µs/batch"); len(ns) >= 2 {
		nosync, err := fit(dm, "mark-nosync-µs/batch", dm+" mark with synchronous_commit off, wall")
		if err != nil {
			return c, fits, err
		}
		c.Flush = math.Max(c.Mark.Fixed-nosync.Fixed, 0)
	}
	lat := benchparse.Find(results, Benchmark+"/jetstream/latency")
	if lat == nil {
		return c, fits, fmt.Errorf("scalemodel: no %s/jetstream/latency line", Benchmark)
	}
	var ok1, ok2 bool
	c.Wake, ok1 = lat.Metrics["wake-p50-us"]
	c.Deliver, ok2 = lat.Metrics["deliver-p50-us"]
	if !ok1 || !ok2 {
		return c, fits, fmt.Errorf("scalemodel: %s/jetstream/latency lacks wake-p50-us or deliver-p50-us", Benchmark)
	}
	return c, fits, nil
}

// batchPoints returns (n, value of unit) of every result named prefix+n,
// in increasing n.
func batchPoints(results []*benchparse.Result, prefix, unit string) (ns, ys []float64) {
	type pt struct{ n, y float64 }
	var pts []pt
	for _, r := range results {
		rest, ok := strings.CutPrefix(r.Name, prefix)
		if !ok {
			continue
		}
		n, err := strconv.Atoi(rest)
		if err != nil {
			continue
		}
		if v, ok := r.Metrics[unit]; ok {
			pts = append(pts, pt{float64(n), v})
		}
	}
	slices.SortFunc(pts, func(a, b pt) int { return cmp.Compare(a.n, b.n) })
	for _, p := range pts {
		ns, ys = append(ns, p.n), append(ys, p.y)
	}
	return ns, ys
}
