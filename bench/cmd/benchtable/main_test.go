package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/jitoutbox/jitoutbox/bench/internal/benchparse"
)

// sample is benchmark output in the shape the benchmarks print; the figures
// are arbitrary, the test only checks that each metric lands in its row.
const sample = `goos: linux
goarch: amd64
BenchmarkDrainVsLimit/postgres/relays=1/delete-2 	1	10 serial-events/s	20 part-events/s	0.5 part/serial	1.5 drain/part	30 ceiling-events/s	0.25 drain/ceiling
BenchmarkDrainVsLimit/mysql/relays=1/update-2 	1	11 serial-events/s	21 part-events/s	0.6 part/serial	1.6 drain/part
BenchmarkDrainScaling/postgres/update-2 	1	12 serial-events/s	13 part-events/s	14 relays1-events/s	2 drain1/serial	3 drain2/drain1	4 drain4/drain1
BenchmarkWatermillDrain/postgres/jetstream-2 	1	7 events/s
BenchmarkLatency/mysql/critical/heavy-2 	1	9 p99-ms	0 ns/op
BenchmarkFailover/postgres-2 	1	5 failover-p50-ms	0 ns/op
BenchmarkCapacity/sqlite-2 	1	0.25 capacity/baseline	0 ns/op
`

func TestPartitionRows(t *testing.T) {
	rs, _, err := benchparse.Parse(strings.NewReader(sample))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	writeRatios(&buf, rs)
	out := buf.String()
	for _, want := range []string{
		"| PostgreSQL partition serial loop (the dialect's session, Read of the owned partitions and fenced Mark, no relay code), best row (events/s) (postgres/relays=1/delete) | 20.00 |",
		"| PostgreSQL partition / bare serial loop (what the database side of the guarantees costs), best row (postgres/relays=1/delete) | 0.5 |",
		"| PostgreSQL drain / partition serial loop (what the relay and publisher add), best row (postgres/relays=1/delete) | 1.50 |",
		"| MariaDB partition serial loop, best row (events/s) (mysql/relays=1/update) | 21.00 |",
		"| MariaDB drain / partition serial loop, best row (mysql/relays=1/update) | 1.60 |",
		"| PostgreSQL update: drain, 1 relay / bare serial loop | 2.00 | >= 1 | yes |",
		"| PostgreSQL update: drain, 2 relays / 1 relay | 3.00 | >= 1.2 | yes |",
		"| drain to JetStream, PostgreSQL: one relay (BenchmarkDrainScaling, best mode) / Watermill forwarder (postgres/update) | 2.00x | >= 10x | **no** |",
		"| MariaDB time-critical p99, heavy | 9.00 | <= 20 | yes |",
		"| PostgreSQL failover after SIGKILL, p50 (ms) | 5.00 | <= 1000 | yes |",
		"| SQLite capacity / baseline (time-critical p99 <= 10 ms) | 0.25 | >= 0.8 | **no** |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing row %q in\n%s", want, out)
		}
	}
	if strings.Contains(out, "leased") {
		t.Errorf("a leased- row is left:\n%s", out)
	}
}
