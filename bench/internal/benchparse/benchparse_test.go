package benchparse

import (
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestParse: metrics land under their unit in the order given, the
// -GOMAXPROCS suffix is cut, a repeated benchmark keeps its last line in
// its first place, and lines that are not benchmark results are skipped.
func TestParse(t *testing.T) {
	const out = `goos: linux
goarch: amd64
pkg: github.com/jitoutbox/jitoutbox/bench
cpu: Some CPU @ 2.0GHz
BenchmarkA/postgres/n=1-2 	   2000	       412.5 read-us/batch	  97.25 mark-us/batch	0 ns/op
BenchmarkA/postgres/n=10-2 	   1	   1e+03 read-us/batch
--- BENCH: BenchmarkA/postgres
    scalemodel_test.go:12: a log line
BenchmarkB-16 	       1	    5 x/y	  bad z/w	7 v/w
BenchmarkA/postgres/n=1-2 	   3	       400 read-us/batch
PASS
ok  	github.com/jitoutbox/jitoutbox/bench	12.3s
`
	rs, h, err := Parse(strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	if h["goos"] != "linux" || h["goarch"] != "amd64" || h["cpu"] != "Some CPU @ 2.0GHz" {
		t.Errorf("header %v", h)
	}
	if len(rs) != 3 {
		t.Fatalf("%d results, want 3: %+v", len(rs), rs)
	}
	a1 := rs[0]
	if a1.Name != "BenchmarkA/postgres/n=1" || a1.Iterations != 3 || a1.Procs != 2 || a1.Metrics["read-us/batch"] != 400 || len(a1.Units) != 1 {
		t.Errorf("first result (repeated) = %+v", a1)
	}
	if r := Find(rs, "BenchmarkA/postgres/n=10"); r == nil || r.Metrics["read-us/batch"] != 1000 {
		t.Errorf("n=10 = %+v", r)
	}
	b := Find(rs, "BenchmarkB")
	if b == nil || b.Metrics["x/y"] != 5 || len(b.Metrics) != 1 || b.Procs != 16 {
		t.Errorf("BenchmarkB stops at the first value that is not a number: %+v", b)
	}
	if Find(rs, "BenchmarkC") != nil {
		t.Error("Find invented a result")
	}
	if Family("BenchmarkA/postgres/n=1") != "BenchmarkA" || Family("BenchmarkB") != "BenchmarkB" {
		t.Error("Family")
	}
}
