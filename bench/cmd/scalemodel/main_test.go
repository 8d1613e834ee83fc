package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// output writes benchmark output as the benchmarks print it, with costs on
// exact lines: read 100 + n, mark 200 + n (150 + n without the flush),
// publish 50 + 2n; database CPU 100 + 4n (client 20 + n), broker 10 + 3n
// (client 5 + n), producer 300 + 10n; and the drains and latencies given.
func output(drain string) string {
	var b strings.Builder
	b.WriteString("goos: linux\ngoarch: amd64\ncpu: Test CPU\n")
	for _, n := range []int{1, 10, 100, 500} {
		f := float64(n)
		for _, mode := range []string{"update", "delete"} {
			fmt.Fprintf(&b, "BenchmarkScaleModel/postgres/%s/batch=%d-2 \t1\t%g read-µs/batch\t%g mark-µs/batch\t%g mark-nosync-µs/batch\t%g cpu-µs/batch\t%g self-cpu-µs/batch\t%g server-cpu-µs/batch\n",
				mode, n, 100+f, 200+f, 150+f, 999+f, 20+f, 80+3*f)
		}
		fmt.Fprintf(&b, "BenchmarkScaleModel/postgres/insert/batch=%d-2 \t1\t%g insert-µs/batch\t%g cpu-µs/batch\t%g self-cpu-µs/batch\n", n, 300+5*f, 300+10*f, 50+2*f)
		fmt.Fprintf(&b, "BenchmarkScaleModel/jetstream/batch=%d-2 \t1\t%g publish-µs/batch\t%g cpu-µs/batch\t%g self-cpu-µs/batch\t%g server-cpu-µs/batch\n", n, 50+2*f, 10+3*f, 5+f, 5+2*f)
	}
	b.WriteString("BenchmarkScaleModel/jetstream/latency-2 \t1\t2 wake-p50-us\t250 deliver-p50-us\n")
	b.WriteString(drain)
	b.WriteString("BenchmarkLatency/postgres/critical/light-2 \t1\t0.504 p50-ms\t0 ns/op\n")
	return b.String()
}

func writeFile(t *testing.T, s string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "run.txt")
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestRun: the calibration table carries the fitted lines; the relay terms
// come from the one-relay drain, which the model then predicts exactly;
// the predictions name a binding limit and advice; the checks compare
// with the measured drains and latency.
func TestRun(t *testing.T) {
	// 1 relay, batch 500: read 600, publish 1050, mark 700; serial 2350,
	// overlapped max(1050, 1300) = 1300. The relay process spent 6.5 µs
	// per event: the stages' client CPU is (520 + 505) / 500 = 2.05, so
	// the relay's own work is 4.45 µs an event, 2225 per batch. At 125,000
	// events/s a cycle is 4000 µs: overlap (2350 + 2225 − 4000) / 1050.
	drain := "BenchmarkScaleModel/postgres/update/drain/relays=1-2 \t1\t125000 events/s\t0 others-cores\t6.5 self-cpu-µs/event\n" +
		"BenchmarkScaleModel/postgres/update/drain/relays=2-2 \t1\t80000 events/s\t1 others-cores\t7 self-cpu-µs/event\n" +
		"BenchmarkDrainScaling/postgres/update-2 \t1\t120000 relays1-events/s\t6.5 relays1-self-cpu-µs/event\t200000 relays2-events/s\t210000 relays4-events/s\t0 ns/op\n"
	var out bytes.Buffer
	if err := run([]string{"-db", "postgres", "-relays", "1,2,64", writeFile(t, output(drain))}, &out, &out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	s := out.String()
	for _, want := range []string{
		"| postgres/update read, wall | 100.0 | 1.00 | 1.000 | 1, 10, 100, 500 |",
		"| postgres/update mark, wall | 200.0 | 1.00 |",
		"| JetStream publish + acks, wall | 50.0 | 2.00 |",
		// Server-metered CPU: client 20 + n plus server 80 + 3n.
		"| postgres/update read + mark, server CPU | 80.0 | 3.00 |",
		"| postgres/update | 50.0 | 2.00 | 250.0 |", // the flush: 200 − 150
		fmt.Sprintf("overlap of the stages %.2f", (2350+2225-4000)/1050.0),
		"the relay's own work 4.45 µs per event",
		"| PostgreSQL update drain, 1 relay(s), events/s (BenchmarkScaleModel) **calibration point** | 2.00 | 125,000 | 125,000 | 1.00 | relay pipeline |",
		// CPU per event: database (100 + 4·500) / 500 = 4.2, broker
		// (10 + 3·500) / 500 = 3.02, the relay 4.45: 11.67 µs. One core
		// left by other programs: 1e6 / 11.67.
		"| PostgreSQL update drain, 2 relay(s), events/s (BenchmarkScaleModel) | 1.00 | 85,690 | 80,000 | 0.93 | CPU |",
		"| PostgreSQL update drain, 4 relay(s), events/s (BenchmarkDrainScaling) | 2.00 | 171,380 | 210,000 | 1.23 | CPU |",
		"| PostgreSQL time-critical p50 at light load (relay in process), µs | | 252.0 | 504.0 | 2.00 |",
		"#### Where each limit sits with 64 relays, and what to do at it",
		"| CPU **(binds)** |",
		"more partitions than relays", "32 publish waves",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if t.Failed() {
		t.Log(s)
	}
}

// TestRunCluster: a cluster names the database CPU and the broker.
func TestRunCluster(t *testing.T) {
	var out bytes.Buffer
	err := run([]string{"-shards", "4", "-db-cores", "16", "-broker-cores", "24", "-replicas", "3", "-relays", "4", "-hot", "0.01",
		writeFile(t, output(""))}, &out, &out)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	s := out.String()
	for _, want := range []string{"4 shards of 16 cores each, broker 24 cores, 3 replicas", "| database CPU |", "| broker |",
		"hottest aggregate 1.0% of events", "no one-relay drain of postgres/update", "| hot aggregate |",
		"shard the outbox", "split the aggregate", "each replica costs a copy"} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q\n%s", want, s)
		}
	}
}

func TestRunErrors(t *testing.T) {
	file := writeFile(t, output(""))
	for _, args := range [][]string{
		{},
		{"-relays", "0", file},
		{"-relays", "x", file},
		{"-nosuchflag", file},
		{"-calibrate", "mysql/update", file},
		{"-shards", "2", file}, // no -db-cores
	} {
		var out bytes.Buffer
		if err := run(args, &out, &out); !errors.Is(err, errUsage) {
			t.Errorf("%q: %v, want a usage error", args, err)
		}
	}
	var out bytes.Buffer
	if err := run([]string{"-db", "mysql", file}, &out, &out); err == nil || errors.Is(err, errUsage) {
		t.Errorf("-db mysql without its lines: %v, want a calibration error", err)
	}
	if err := run([]string{filepath.Join(t.TempDir(), "missing.txt")}, &out, &out); err == nil {
		t.Error("a missing file was read")
	}
}
