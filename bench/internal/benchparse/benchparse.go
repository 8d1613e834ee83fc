// Package benchparse reads `go test -bench` output: each benchmark line
// with the metrics it reported, and the goos/goarch/cpu header. The
// commands under bench/cmd share it.
package benchparse

import (
	"bufio"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// Result is one benchmark line.
type Result struct {
	// Name is the benchmark's name without the -GOMAXPROCS suffix
	// ("BenchmarkDrain/postgres/jetstream/relays=1/batch=500/update").
	Name string
	// Procs is the -GOMAXPROCS suffix of the line (0 when absent).
	Procs int
	// Iterations is b.N.
	Iterations int
	// Metrics maps each reported unit ("events/s") to its value.
	Metrics map[string]float64
	// Units lists the units in the order the line gives them.
	Units []string
}

var procSuffix = regexp.MustCompile(`-\d+$`)

// Parse reads benchmark lines and the goos/goarch/cpu header from r. A
// benchmark that appears more than once keeps its last line, in the place
// of its first.
func Parse(r io.Reader) (results []*Result, header map[string]string, err error) {
	header = map[string]string{}
	byName := map[string]*Result{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		for _, k := range []string{"goos", "goarch", "cpu"} {
			if v, ok := strings.CutPrefix(line, k+": "); ok {
				header[k] = v
			}
		}
		f := strings.Fields(line)
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		n, err := strconv.Atoi(f[1])
		if err != nil {
			continue
		}
		res := &Result{Name: procSuffix.ReplaceAllString(f[0], ""), Iterations: n, Metrics: map[string]float64{}}
		if m := procSuffix.FindString(f[0]); m != "" {
			res.Procs, _ = strconv.Atoi(m[1:])
		}
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				break
			}
			res.Metrics[f[i+1]] = v
			res.Units = append(res.Units, f[i+1])
		}
		if old, ok := byName[res.Name]; ok {
			*old = *res
			continue
		}
		byName[res.Name] = res
		results = append(results, res)
	}
	return results, header, sc.Err()
}

// Family returns the top-level benchmark of name ("BenchmarkDrain" of
// "BenchmarkDrain/postgres/...").
func Family(name string) string {
	if i := strings.IndexByte(name, '/'); i >= 0 {
		return name[:i]
	}
	return name
}

// Find returns the result named name, or nil.
func Find(results []*Result, name string) *Result {
	for _, r := range results {
		if r.Name == name {
			return r
		}
	}
	return nil
}
