// Command benchtable turns `go test -bench` output into markdown: one table
// per benchmark (rows: sub-benchmarks, columns: the reported units) and a
// section of ratios and targets computed from the same figures, so that a
// run's tables (bench/results/<date>.md) are never typed by hand.
//
//	go run ./bench/cmd/benchtable -machine "2 vCPU ..." -note "..." bench/results/2026-01-01.txt > table.md
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/jitoutbox/jitoutbox/bench/internal/benchparse"
)

// result is one benchmark line.
type result = benchparse.Result

// skipUnit hides columns that carry no information for these benchmarks.
func skipUnit(fam, unit string) bool {
	switch unit {
	case "ns/op", "B/op", "allocs/op":
		// Whole-run times and allocations of one-shot benchmarks say
		// nothing per operation.
		return strings.Contains(fam, "Latency") || fam == "BenchmarkIdle" || strings.Contains(fam, "Drain")
	}
	return false
}

func format(v float64) string {
	a := math.Abs(v)
	switch {
	case v == 0:
		return "0"
	case a >= 1000:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 100:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case a >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	default:
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
}

func writeTables(w io.Writer, results []*result) {
	var fams []string
	byFam := map[string][]*result{}
	for _, r := range results {
		f := benchparse.Family(r.Name)
		if _, ok := byFam[f]; !ok {
			fams = append(fams, f)
		}
		byFam[f] = append(byFam[f], r)
	}
	for _, f := range fams {
		var units []string
		seen := map[string]bool{}
		for _, r := range byFam[f] {
			for _, u := range r.Units {
				if !seen[u] && !skipUnit(f, u) {
					seen[u] = true
					units = append(units, u)
				}
			}
		}
		fmt.Fprintf(w, "\n#### %s\n\n| case | %s |\n|---|%s\n", f, strings.Join(units, " | "), strings.Repeat("---:|", len(units)))
		for _, r := range byFam[f] {
			sub := strings.TrimPrefix(strings.TrimPrefix(r.Name, f), "/")
			if sub == "" {
				sub = "(all)"
			}
			cells := make([]string, len(units))
			for i, u := range units {
				if v, ok := r.Metrics[u]; ok {
					cells[i] = format(v)
				}
			}
			fmt.Fprintf(w, "| %s | %s |\n", sub, strings.Join(cells, " | "))
		}
	}
}

// pick returns the metric of the named benchmark, or of the best (largest)
// among names matching a pattern ending in "*".
func pick(results []*result, name, unit string) (float64, string, bool) {
	best, bestName, found := 0.0, "", false
	for _, r := range results {
		ok := r.Name == name
		if p, wild := strings.CutSuffix(name, "*"); wild {
			ok = strings.HasPrefix(r.Name, p)
		}
		if !ok {
			continue
		}
		if v, has := r.Metrics[unit]; has && (!found || v > best) {
			best, bestName, found = v, r.Name, true
		}
	}
	return best, bestName, found
}

// ratio is one line of the ratios section: num/den, compared with a target.
type ratio struct {
	label         string
	num, numUnit  string
	den, denUnit  string
	atLeast, most float64 // target bounds (0: none)
}

// check is a single figure against a bound. A name ending in "*" takes the
// best (largest) figure of the benchmarks it prefixes, and the label names
// it.
type check struct {
	label           string
	name, unit      string
	atMost, atLeast float64 // 0: no bound
}

func writeRatios(w io.Writer, results []*result) {
	fmt.Fprintf(w, "\n#### Ratios and targets (computed from the table above)\n\n| what | figure | target | met |\n|---|---:|---|---|\n")
	na := func(label, why string) { fmt.Fprintf(w, "| %s | n/a | | %s |\n", label, why) }
	var ratios []ratio
	for _, db := range []string{"postgres", "postgres-pgx", "mysql", "sqlite"} {
		for _, load := range []string{"light", "heavy"} {
			base := "BenchmarkLatency/" + db + "/"
			target := 0.0
			if load == "light" {
				target = 100
			}
			ratios = append(ratios,
				ratio{label: fmt.Sprintf("%s %s: 100 ms poller p50 / time-critical p50", db, load), num: base + "poll-100ms/" + load, numUnit: "p50-ms", den: base + "critical/" + load, denUnit: "p50-ms", atLeast: target},
				ratio{label: fmt.Sprintf("%s %s: 1 s poller p50 / time-critical p50", db, load), num: base + "poll-1s/" + load, numUnit: "p50-ms", den: base + "critical/" + load, denUnit: "p50-ms"},
				ratio{label: fmt.Sprintf("%s %s: ordinary (lazy wake) p50 / time-critical p50", db, load), num: base + "ordinary/" + load, numUnit: "p50-ms", den: base + "critical/" + load, denUnit: "p50-ms"},
			)
		}
	}
	ratios = append(ratios,
		ratio{label: "Watermill forwarder (default 1 s poll) p50 / jitoutbox time-critical p50, PostgreSQL light", num: "BenchmarkWatermillLatency/postgres/poll-1s/light", numUnit: "p50-ms", den: "BenchmarkLatency/postgres/critical/light", denUnit: "p50-ms"},
		ratio{label: "Watermill forwarder (100 ms poll) p50 / jitoutbox time-critical p50, PostgreSQL light", num: "BenchmarkWatermillLatency/postgres/poll-100ms/light", numUnit: "p50-ms", den: "BenchmarkLatency/postgres/critical/light", denUnit: "p50-ms"},
		ratio{label: "drain to JetStream, PostgreSQL: best jitoutbox / Watermill forwarder", num: "BenchmarkDrain/postgres/jetstream/*", numUnit: "events/s", den: "BenchmarkWatermillDrain/postgres/jetstream", denUnit: "events/s", atLeast: 10},
		ratio{label: "drain to JetStream, PostgreSQL: one relay (BenchmarkDrainScaling, best mode) / Watermill forwarder", num: "BenchmarkDrainScaling/postgres/*", numUnit: "relays1-events/s", den: "BenchmarkWatermillDrain/postgres/jetstream", denUnit: "events/s", atLeast: 10},
	)
	for _, r := range ratios {
		n, nn, ok1 := pick(results, r.num, r.numUnit)
		d, _, ok2 := pick(results, r.den, r.denUnit)
		if !ok1 || !ok2 || d == 0 {
			continue
		}
		tgt, met := "", ""
		if r.atLeast > 0 {
			tgt = fmt.Sprintf(">= %gx", r.atLeast)
			met = yes(n/d >= r.atLeast)
		}
		label := r.label
		if strings.HasSuffix(r.num, "*") {
			label += " (" + nn[strings.IndexByte(nn, '/')+1:] + ")"
		}
		fmt.Fprintf(w, "| %s | %sx | %s | %s |\n", label, format(n/d), tgt, met)
	}
	checks := []check{
		{label: "PostgreSQL (lib/pq) time-critical p50, light", name: "BenchmarkLatency/postgres/critical/light", unit: "p50-ms", atMost: 0.5},
		{label: "PostgreSQL (lib/pq) time-critical p99, light", name: "BenchmarkLatency/postgres/critical/light", unit: "p99-ms", atMost: 1.5},
		{label: "PostgreSQL (pgx) time-critical p50, light", name: "BenchmarkLatency/postgres-pgx/critical/light", unit: "p50-ms", atMost: 0.5},
		{label: "PostgreSQL (pgx) time-critical p99, light", name: "BenchmarkLatency/postgres-pgx/critical/light", unit: "p99-ms", atMost: 1.5},
		{label: "capture, PostgreSQL (lib/pq): txoutbox 1 event / 1 hand-written INSERT", name: "BenchmarkCommitRatio/postgres", unit: "tx1/hand1", atMost: 1.05},
		{label: "capture, PostgreSQL (pgx): txoutbox 1 event / 1 hand-written INSERT", name: "BenchmarkCommitRatio/postgres-pgx", unit: "tx1/hand1", atMost: 1.05},
		{label: "capture, MariaDB: txoutbox 1 event / 1 hand-written INSERT", name: "BenchmarkCommitRatio/mysql", unit: "tx1/hand1", atMost: 1.05},
		{label: "capture, PostgreSQL (lib/pq): txoutbox 10 events / 10 hand-written INSERTs", name: "BenchmarkCommitRatio/postgres", unit: "tx10/hand10", atMost: 0.4},
		{label: "capture, PostgreSQL (pgx): txoutbox 10 events / 10 hand-written INSERTs", name: "BenchmarkCommitRatio/postgres-pgx", unit: "tx10/hand10", atMost: 0.4},
		{label: "capture, MariaDB: txoutbox 10 events / 10 hand-written INSERTs", name: "BenchmarkCommitRatio/mysql", unit: "tx10/hand10", atMost: 0.4},
		{label: "the same, time added to the business transaction (business-only taken off both), PostgreSQL (lib/pq)", name: "BenchmarkCommitRatio/postgres", unit: "tx10/hand10-added", atMost: 0.4},
		{label: "the same, time added, PostgreSQL (pgx)", name: "BenchmarkCommitRatio/postgres-pgx", unit: "tx10/hand10-added", atMost: 0.4},
		{label: "the same, time added, MariaDB", name: "BenchmarkCommitRatio/mysql", unit: "tx10/hand10-added", atMost: 0.4},
		{label: "floor of tx10/hand10 (txoutbox 1 event / 10 hand-written INSERTs), PostgreSQL (lib/pq)", name: "BenchmarkCommitRatio/postgres", unit: "tx1/hand10"},
		{label: "floor of tx10/hand10, PostgreSQL (pgx)", name: "BenchmarkCommitRatio/postgres-pgx", unit: "tx1/hand10"},
		{label: "floor of tx10/hand10, MariaDB", name: "BenchmarkCommitRatio/mysql", unit: "tx1/hand10"},
		{label: "idle relay, default config, PostgreSQL (stmts/s)", name: "BenchmarkIdle/postgres/default", unit: "stmts/s", atMost: 0.1},
		{label: "idle relay, default config, MariaDB (stmts/s)", name: "BenchmarkIdle/mysql/default", unit: "stmts/s", atMost: 0.1},
		{label: "idle relay, default config, SQLite (stmts/s)", name: "BenchmarkIdle/sqlite/default", unit: "stmts/s", atMost: 0.1},
		{label: "idle relay, 100 ms poller, PostgreSQL (stmts/s)", name: "BenchmarkIdle/postgres/poll-100ms", unit: "stmts/s"},
		{label: "drain to JetStream, PostgreSQL, best row (events/s)", name: "BenchmarkDrain/postgres/jetstream/*", unit: "events/s", atLeast: 60000},
		{label: "drain to JetStream, MariaDB, best row (events/s)", name: "BenchmarkDrain/mysql/jetstream/*", unit: "events/s", atLeast: 20000},
		{label: "PostgreSQL CPU ceiling: cores / (bare claim+mark + bare JetStream publish CPU per event), best row (events/s)", name: "BenchmarkDrainVsLimit/postgres/*", unit: "ceiling-events/s"},
		{label: "PostgreSQL drain / CPU ceiling, best row", name: "BenchmarkDrainVsLimit/postgres/*", unit: "drain/ceiling"},
		{label: "PostgreSQL bare serial loop (claim 500 FOR UPDATE SKIP LOCKED, async publish, await acks, mark, COMMIT), best row (events/s)", name: "BenchmarkDrainVsLimit/postgres/*", unit: "serial-events/s"},
		{label: "PostgreSQL partition serial loop (the dialect's session, Read of the owned partitions and fenced Mark, no relay code), best row (events/s)", name: "BenchmarkDrainVsLimit/postgres/*", unit: "part-events/s"},
		{label: "PostgreSQL partition / bare serial loop (what the database side of the guarantees costs), best row", name: "BenchmarkDrainVsLimit/postgres/*", unit: "part/serial"},
		{label: "PostgreSQL drain / partition serial loop (what the relay and publisher add), best row", name: "BenchmarkDrainVsLimit/postgres/*", unit: "drain/part"},
		{label: "MariaDB bare serial loop, best row (events/s)", name: "BenchmarkDrainVsLimit/mysql/*", unit: "serial-events/s"},
		{label: "MariaDB partition serial loop, best row (events/s)", name: "BenchmarkDrainVsLimit/mysql/*", unit: "part-events/s"},
		{label: "MariaDB partition / bare serial loop, best row", name: "BenchmarkDrainVsLimit/mysql/*", unit: "part/serial"},
		{label: "MariaDB drain / partition serial loop, best row", name: "BenchmarkDrainVsLimit/mysql/*", unit: "drain/part"},
		{label: "MariaDB CPU ceiling, best row (events/s)", name: "BenchmarkDrainVsLimit/mysql/*", unit: "ceiling-events/s"},
		{label: "MariaDB drain / CPU ceiling, best row", name: "BenchmarkDrainVsLimit/mysql/*", unit: "drain/ceiling"},
	}
	checks = append(checks, partitionChecks()...)
	for _, c := range checks {
		v, name, ok := pick(results, c.name, c.unit)
		if !ok {
			na(c.label, "not in this run")
			continue
		}
		tgt, met := "", ""
		switch {
		case c.atMost > 0:
			tgt, met = fmt.Sprintf("<= %g", c.atMost), yes(v <= c.atMost)
		case c.atLeast > 0:
			tgt, met = fmt.Sprintf(">= %g", c.atLeast), yes(v >= c.atLeast)
		}
		label := c.label
		if strings.HasSuffix(c.name, "*") {
			label += " (" + name[strings.IndexByte(name, '/')+1:] + ")"
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s |\n", label, format(v), tgt, met)
	}
}

// partitionChecks are the targets of the partitions issue (13):
// BenchmarkDrainScaling's ratios, the time-critical latency at light and
// heavy load, failover, and capacity.
func partitionChecks() []check {
	var cs []check
	for _, db := range []struct{ name, label string }{{"postgres", "PostgreSQL"}, {"mysql", "MariaDB"}} {
		for _, mode := range []string{"update", "delete"} {
			n := "BenchmarkDrainScaling/" + db.name + "/" + mode
			cs = append(cs,
				check{label: fmt.Sprintf("%s %s: drain, 1 relay / bare serial loop", db.label, mode), name: n, unit: "drain1/serial", atLeast: 1.0},
				check{label: fmt.Sprintf("%s %s: drain, 2 relays / 1 relay", db.label, mode), name: n, unit: "drain2/drain1", atLeast: 1.2},
				check{label: fmt.Sprintf("%s %s: drain, 4 relays / 1 relay", db.label, mode), name: n, unit: "drain4/drain1", atLeast: 1.0},
			)
		}
	}
	for _, db := range []struct {
		name, label        string
		p50, p99, heavyP99 float64
	}{
		{"postgres", "PostgreSQL (lib/pq)", 0.3, 0.6, 10},
		{"postgres-pgx", "PostgreSQL (pgx)", 0.3, 0.6, 10},
		{"mysql", "MariaDB", 0.5, 1.5, 20},
		{"sqlite", "SQLite", 0.5, 1.5, 50},
	} {
		base := "BenchmarkLatency/" + db.name + "/critical/"
		cs = append(cs,
			check{label: db.label + " time-critical p50, light (issue 13)", name: base + "light", unit: "p50-ms", atMost: db.p50},
			check{label: db.label + " time-critical p99, light (issue 13)", name: base + "light", unit: "p99-ms", atMost: db.p99},
			check{label: db.label + " time-critical p99, heavy", name: base + "heavy", unit: "p99-ms", atMost: db.heavyP99},
		)
	}
	for _, db := range []struct{ name, label string }{{"postgres", "PostgreSQL"}, {"mysql", "MariaDB"}} {
		cs = append(cs, check{label: db.label + " failover after SIGKILL, p50 (ms)", name: "BenchmarkFailover/" + db.name, unit: "failover-p50-ms", atMost: 1000})
	}
	for _, db := range []struct{ name, label string }{{"postgres", "PostgreSQL"}, {"mysql", "MariaDB"}, {"sqlite", "SQLite"}} {
		cs = append(cs, check{label: db.label + " capacity / baseline (time-critical p99 <= 10 ms)", name: "BenchmarkCapacity/" + db.name, unit: "capacity/baseline", atLeast: 0.8})
	}
	return cs
}

func yes(b bool) string {
	if b {
		return "yes"
	}
	return "**no**"
}

func main() {
	machine := flag.String("machine", "", "machine description for the header")
	note := flag.String("note", "", "load note for the header (e.g. other benchmarks running at the same time)")
	date := flag.String("date", "", "date of the run for the header")
	flag.Parse()
	var all []*result
	header := map[string]string{}
	for _, path := range flag.Args() {
		f, err := os.Open(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, "benchtable:", err)
			os.Exit(1)
		}
		rs, h, err := benchparse.Parse(f)
		f.Close()
		if err != nil {
			fmt.Fprintln(os.Stderr, "benchtable:", err)
			os.Exit(1)
		}
		all = append(all, rs...)
		for k, v := range h {
			header[k] = v
		}
	}
	if len(all) == 0 {
		fmt.Fprintln(os.Stderr, "benchtable: no benchmark lines in", flag.Args())
		os.Exit(1)
	}
	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	fmt.Fprintf(w, "Run: %s; machine: %s", *date, *machine)
	if c := header["cpu"]; c != "" {
		fmt.Fprintf(w, " (%s/%s, cpu %s)", header["goos"], header["goarch"], c)
	}
	fmt.Fprintln(w, ".")
	if *note != "" {
		fmt.Fprintf(w, "\nLoad: %s\n", *note)
	}
	writeTables(w, all)
	writeRatios(w, all)
}
