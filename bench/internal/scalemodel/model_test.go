package scalemodel

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/jitoutbox/jitoutbox/bench/internal/benchparse"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol*math.Max(math.Abs(b), 1e-9) }

// TestFit: points on a line give its terms back with r2 1; noisy points a
// least-squares line; one batch size or mismatched slices an ErrFit.
func TestFit(t *testing.T) {
	l, r2, err := Fit([]float64{1, 10, 100, 500}, []float64{103, 130, 400, 1600})
	if err != nil || !near(l.Fixed, 100, 1e-9) || !near(l.PerEvent, 3, 1e-9) || !near(r2, 1, 1e-9) {
		t.Fatalf("Fit of 100 + 3n = %+v, r2 %v, %v", l, r2, err)
	}
	// Noisy points: the weighted residuals (weights 1/cost²) are
	// orthogonal to 1 and to n, the normal equations of the fit.
	ns, ys := []float64{1, 2, 3, 10}, []float64{10, 10, 16, 35}
	l, r2, err = Fit(ns, ys)
	if err != nil || r2 >= 1 || r2 <= 0.5 {
		t.Fatalf("Fit of noisy points = %+v, r2 %v, %v", l, r2, err)
	}
	var s0, s1 float64
	for i := range ns {
		r := (ys[i] - l.At(ns[i])) / (ys[i] * ys[i])
		s0 += r
		s1 += r * ns[i]
	}
	if math.Abs(s0) > 1e-12 || math.Abs(s1) > 1e-12 {
		t.Errorf("weighted residuals not orthogonal: %v, %v (fit %+v)", s0, s1, l)
	}
	// A point far off in the large batches weighs no more than one in the
	// small: relative weights keep the fixed cost of the small batches.
	l, _, _ = Fit([]float64{1, 10, 100, 500}, []float64{101, 110, 200, 1200})
	if l.Fixed < 90 || l.Fixed > 110 { // unweighted least squares: about 59
		t.Errorf("fixed cost %v pulled away from the small batches' 100", l.Fixed)
	}
	for _, c := range [][2][]float64{{{5, 5}, {1, 2}}, {{1}, {1}}, {{1, 2}, {1}}} {
		if _, _, err := Fit(c[0], c[1]); !errors.Is(err, ErrFit) {
			t.Errorf("Fit(%v, %v) = %v, want ErrFit", c[0], c[1], err)
		}
	}
	if got := (Linear{2, 0.5}).At(10); got != 7 {
		t.Errorf("At = %v", got)
	}
	if s := (Linear{12.34, 5.678}).String(); s != "12.3 + 5.68·n" {
		t.Errorf("String = %q", s)
	}
}

// calib is a calibration with round numbers: per batch of n, read 100 + n,
// publish 50 + 2n, mark 200 + n µs; CPU per batch: database 100 + 4n (of
// which the client 20 + n), broker 10 + 3n (client 5 + n).
func calib() Calibration {
	return Calibration{
		DB: "postgres", Mode: "update",
		Read: Linear{100, 1}, Mark: Linear{200, 1}, Publish: Linear{50, 2},
		DBWork: CPU{Machine: Linear{100, 4}, Client: Linear{20, 1}},
		Broker: CPU{Machine: Linear{10, 3}, Client: Linear{5, 1}},
		Insert: Linear{300, 5}, Producer: CPU{Machine: Linear{100, 10}, Client: Linear{50, 2}},
		Flush: 150, Wake: 2, Deliver: 250,
	}
}

func limit(t *testing.T, p Prediction, name string) Limit {
	t.Helper()
	for _, l := range p.Limits {
		if l.Name == name {
			return l
		}
	}
	t.Fatalf("no limit %q in %+v", name, p.Limits)
	return Limit{}
}

// TestPredictArithmetic checks every limit of a one-machine scenario
// against the formulas worked by hand.
func TestPredictArithmetic(t *testing.T) {
	c := calib()
	c.Overlap = 0.5
	// n = 100: read 200, publish 250, mark 300; serial 750, overlapped
	// max(250, 500) = 500; half way: 625 µs a cycle.
	s := Scenario{Relays: 2, Partitions: 64, Batch: 100, Cores: 2}
	p, err := Predict(c, s)
	if err != nil {
		t.Fatal(err)
	}
	if !near(p.CycleMicros, 625, 1e-9) {
		t.Errorf("cycle = %v, want 625", p.CycleMicros)
	}
	if l := limit(t, p, "relay pipeline"); !near(l.EventsPerSec, 2*100/625e-6, 1e-9) {
		t.Errorf("pipeline = %v, want 320000", l.EventsPerSec)
	}
	// CPU per event: (100 + 400 + 10 + 300) / 100 = 8.1 µs; 2 cores.
	if l := limit(t, p, "CPU"); !near(l.EventsPerSec, 2e6/8.1, 1e-9) {
		t.Errorf("CPU = %v, want %v", l.EventsPerSec, 2e6/8.1)
	}
	// Flush: 2 relays × 100 events per 150 µs.
	if l := limit(t, p, "WAL/redo flush"); !near(l.EventsPerSec, 2*100/150e-6, 1e-9) {
		t.Errorf("flush = %v", l.EventsPerSec)
	}
	if p.Binding != "CPU" || !near(p.EventsPerSec, 2e6/8.1, 1e-9) {
		t.Errorf("binding %q at %v, want CPU", p.Binding, p.EventsPerSec)
	}
	if p.CriticalP50 != 252 || p.CriticalP50Remote != 252+101 {
		t.Errorf("critical p50 %v, remote %v", p.CriticalP50, p.CriticalP50Remote)
	}
	// Producers of 10 events a transaction add (100 + 100) / 10 = 20 µs.
	s.ProducerBatch = 10
	p, _ = Predict(c, s)
	if l := limit(t, p, "CPU"); !near(l.EventsPerSec, 2e6/28.1, 1e-9) {
		t.Errorf("CPU with producers = %v, want %v", l.EventsPerSec, 2e6/28.1)
	}
	// More relays than partitions: only the partitions' count work.
	p, _ = Predict(c, Scenario{Relays: 8, Partitions: 4, Batch: 100, Cores: 64})
	if l := limit(t, p, "relay pipeline"); !near(l.EventsPerSec, 4*100/625e-6, 1e-9) || p.Binding != "relay pipeline" {
		t.Errorf("8 relays on 4 partitions: pipeline %v, binding %q", l.EventsPerSec, p.Binding)
	}
}

// TestPredictSkewAndHot: the benchmarks' 1,000 aggregates over 64
// partitions leave one relay alone balanced and several a little
// unbalanced; a hot aggregate costs publish waves and its relay's share.
func TestPredictSkewAndHot(t *testing.T) {
	c := calib()
	one, _ := Predict(c, Scenario{Relays: 1, Partitions: 64, Batch: 100, Cores: 64, Aggregates: 1000})
	if sk := limit(t, one, "partition skew"); !near(sk.EventsPerSec, limit(t, one, "relay pipeline").EventsPerSec, 1e-9) || one.EffectiveRelays != 1 {
		t.Errorf("one relay: skew %v, effective %v", sk.EventsPerSec, one.EffectiveRelays)
	}
	four, _ := Predict(c, Scenario{Relays: 4, Partitions: 64, Batch: 100, Cores: 64, Aggregates: 1000})
	loads, aggs := relayLoads(Scenario{Relays: 4, Partitions: 64, Aggregates: 1000}, 4)
	sum, maxLoad, total := 0.0, 0.0, 0
	for r := range loads {
		sum += loads[r]
		maxLoad = math.Max(maxLoad, loads[r])
		total += aggs[r]
	}
	if !near(sum, 1, 1e-12) || total != 1000 || maxLoad < 0.25 {
		t.Fatalf("loads %v (sum %v), aggregates %v", loads, sum, aggs)
	}
	if !near(four.EffectiveRelays, 1/maxLoad, 1e-12) || four.EffectiveRelays > 4 || four.EffectiveRelays < 3 {
		t.Errorf("4 relays: effective %v (max load %v)", four.EffectiveRelays, maxLoad)
	}
	if sk, pipe := limit(t, four, "partition skew").EventsPerSec, limit(t, four, "relay pipeline").EventsPerSec; sk > pipe {
		t.Errorf("skew %v above the even pipeline %v", sk, pipe)
	}

	// One aggregate with half the events, 1 relay, batch 100: 50 waves,
	// each after the first paying the publish's fixed 50 µs again.
	c.Overlap = 0
	hot, _ := Predict(c, Scenario{Relays: 1, Partitions: 64, Batch: 100, Cores: 64, HotShare: 0.5})
	cycle := 200 + 250 + 49*50 + 300.0
	if l := limit(t, hot, "hot aggregate"); !near(l.EventsPerSec, 100/cycle*1e6, 1e-9) || hot.Binding != "hot aggregate" {
		t.Errorf("hot aggregate = %v (binding %q), want %v", l.EventsPerSec, hot.Binding, 100/cycle*1e6)
	}
}

// TestPredictCluster: shards multiply what each database allows; the
// database CPU is the server's share only; a replicated broker costs a
// copy per replica and an RTT on the latency.
func TestPredictCluster(t *testing.T) {
	c := calib()
	s := Scenario{Relays: 4, Partitions: 64, Batch: 100, Shards: 3, DBCores: 8, BrokerCores: 12, Replicas: 3, RTT: 200}
	p, err := Predict(c, s)
	if err != nil {
		t.Fatal(err)
	}
	// Database server CPU per event: (100 − 20 + (4 − 1)·100) / 100 = 3.8.
	if l := limit(t, p, "database CPU"); !near(l.EventsPerSec, 3*8e6/3.8, 1e-9) {
		t.Errorf("database CPU = %v, want %v", l.EventsPerSec, 3*8e6/3.8)
	}
	// Broker server CPU per event: (5 + 2·100) / 100 = 2.05, three copies.
	if l := limit(t, p, "broker"); !near(l.EventsPerSec, 12e6/(2.05*3), 1e-9) {
		t.Errorf("broker = %v, want %v", l.EventsPerSec, 12e6/(2.05*3))
	}
	// The pipeline per shard, with the ack's RTT: cycle 200 + 450 + 300.
	if l := limit(t, p, "relay pipeline"); !near(l.EventsPerSec, 3*4*100/950e-6, 1e-9) {
		t.Errorf("pipeline = %v, want %v", l.EventsPerSec, 3*4*100/950e-6)
	}
	if p.CriticalP50 != 2+250+200 {
		t.Errorf("critical p50 = %v", p.CriticalP50)
	}
	for _, bad := range []Scenario{
		{Relays: 0, Partitions: 1, Batch: 1, Cores: 1},
		{Relays: 1, Partitions: 1, Batch: 1},
		{Relays: 1, Partitions: 1, Batch: 1, Shards: 2},
		{Relays: 1, Partitions: 1, Batch: 1, Cores: 1, HotShare: 2},
	} {
		if _, err := Predict(c, bad); err == nil {
			t.Errorf("Predict(%+v) accepted", bad)
		}
	}
}

// TestCalibrateDrain: a drain predicted with a known overlap calibrates
// back to it; the relay's own cost is its CPU less the stages' client CPU.
func TestCalibrateDrain(t *testing.T) {
	c := calib()
	s := Scenario{Relays: 1, Partitions: 64, Batch: 100, Cores: 64}
	c.Overlap = 0.3
	c.RelayWall = 1.5
	p, err := Predict(c, s)
	if err != nil {
		t.Fatal(err)
	}
	rate := limit(t, p, "relay pipeline").EventsPerSec
	fresh := calib()
	// Stage client CPU per event: (20 + 100 + 5 + 100) / 100 = 2.25.
	clamped, err := fresh.CalibrateDrain(s, rate, 2.25+1.5)
	if err != nil || clamped {
		t.Fatalf("CalibrateDrain: clamped %v, %v", clamped, err)
	}
	if !near(fresh.Overlap, 0.3, 1e-9) || !near(fresh.RelayWall, 1.5, 1e-9) || !near(fresh.RelayCPU, 1.5, 1e-9) {
		t.Errorf("calibrated overlap %v, relay wall %v, relay CPU %v; want 0.3, 1.5, 1.5", fresh.Overlap, fresh.RelayWall, fresh.RelayCPU)
	}
	// The busiest of 4 relays over the benchmarks' 1,000 aggregates sets
	// the rate: calibrating on a predicted skewed drain gives the overlap
	// back too.
	s4 := Scenario{Relays: 4, Partitions: 64, Batch: 100, Cores: 64, Aggregates: 1000}
	p4, _ := Predict(c, s4)
	f4 := calib()
	if _, err := f4.CalibrateDrain(s4, limit(t, p4, "partition skew").EventsPerSec, 2.25+1.5); err != nil || !near(f4.Overlap, 0.3, 1e-9) {
		t.Errorf("4 relays: overlap %v, %v; want 0.3", f4.Overlap, err)
	}
	// Faster than overlapping everything: clamped to 1.
	if clamped, _ := fresh.CalibrateDrain(s, 10*rate, 2.25); !clamped || fresh.Overlap != 1 {
		t.Errorf("a drain faster than the model allows: overlap %v, clamped %v", fresh.Overlap, clamped)
	}
	if _, err := fresh.CalibrateDrain(s, 0, 1); err == nil {
		t.Error("a zero rate calibrated")
	}
}

// TestCalibrate reads the benchmark's lines: each stage's fit, the flush
// from the marks with and without synchronous commit, the latency.
func TestCalibrate(t *testing.T) {
	var b strings.Builder
	line := func(name string, kv ...any) {
		b.WriteString(name + "-2 \t1")
		for i := 0; i < len(kv); i += 2 {
			b.WriteString("\t" + ftoa(kv[i+1].(float64)) + " " + kv[i].(string))
		}
		b.WriteString("\n")
	}
	for _, n := range []float64{1, 10, 100} {
		nb := "batch=" + ftoa(n)
		line(Benchmark+"/postgres/update/"+nb, "read-µs/batch", 100+n, "mark-µs/batch", 200+2*n, "mark-nosync-µs/batch", 80+2*n,
			"cpu-µs/batch", 300+5*n, "self-cpu-µs/batch", 50+n, "server-cpu-µs/batch", 150+3*n)
		line(Benchmark+"/postgres/insert/"+nb, "insert-µs/batch", 400+4*n, "cpu-µs/batch", 90+9*n, "self-cpu-µs/batch", 30+3*n)
		line(Benchmark+"/jetstream/"+nb, "publish-µs/batch", 60+3*n, "cpu-µs/batch", 40+6*n, "self-cpu-µs/batch", 10+2*n, "server-cpu-µs/batch", 20+3*n)
	}
	line(Benchmark+"/jetstream/latency", "wake-p50-us", 2.0, "deliver-p50-us", 240.0)
	rs, _, err := benchparse.Parse(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	c, fits, err := Calibrate(rs, "postgres", "update")
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		what string
		got  Linear
		want Linear
	}{
		{"read", c.Read, Linear{100, 1}},
		{"mark", c.Mark, Linear{200, 2}},
		{"publish", c.Publish, Linear{60, 3}},
		{"insert", c.Insert, Linear{400, 4}},
		{"db client", c.DBWork.Client, Linear{50, 1}},
		// The server's own meter wins over machine − client (other
		// programs on the machine): 50 + n + 150 + 3n.
		{"db machine", c.DBWork.Machine, Linear{200, 4}},
		{"broker machine", c.Broker.Machine, Linear{30, 5}},
		// No server meter for the producer: machine − client stands.
		{"producer machine", c.Producer.Machine, Linear{90, 9}},
	}
	for _, w := range want {
		if !near(w.got.Fixed, w.want.Fixed, 1e-9) || !near(w.got.PerEvent, w.want.PerEvent, 1e-9) {
			t.Errorf("%s = %v, want %v", w.what, w.got, w.want)
		}
	}
	if !near(c.Flush, 120, 1e-9) || c.Wake != 2 || c.Deliver != 240 {
		t.Errorf("flush %v, wake %v, deliver %v", c.Flush, c.Wake, c.Deliver)
	}
	if len(fits) < 10 || fits[0].R2 < 0.999 || len(fits[0].Points) != 3 {
		t.Errorf("fits %+v", fits)
	}
	if _, _, err := Calibrate(rs, "mysql", "update"); err == nil {
		t.Error("calibrated a database without lines")
	}
}

func ftoa(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
