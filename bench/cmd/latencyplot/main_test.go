package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The plot reads -latency.out lines, draws one CDF per case, and writes SVG
// and PNG files that are what their extensions say.
func TestPlotWritesSVGAndPNG(t *testing.T) {
	in := "BenchmarkLatency/postgres/critical/light\tcommit-recv\t350\n" +
		"BenchmarkLatency/postgres/critical/light\tcommit-recv\t420\n" +
		"BenchmarkLatency/postgres/critical/light\tcommit-ack\t300\n" +
		"BenchmarkWatermillLatency/postgres/poll-1s/light\tcommit-recv\t540000\n" +
		"BenchmarkLatency/mysql/critical/light\tcommit-recv\t900\n"
	var order []string
	series := map[string][]float64{}
	re := regexp.MustCompile(`^Benchmark(Watermill)?Latency/postgres/.*/light$`)
	if err := read(strings.NewReader(in), "commit-recv", re, &order, series); err != nil {
		t.Fatal(err)
	}
	if len(order) != 2 || len(series[order[0]]) != 2 || series[order[0]][0] != 0.35 {
		t.Fatalf("series %v %v: want 2 postgres cases, the first with 0.35 and 0.42 ms", order, series)
	}
	p, err := build("t", order, series)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for ext, magic := range map[string][]byte{".svg": []byte("<svg"), ".png": []byte("\x89PNG")} {
		path := filepath.Join(dir, "latency"+ext)
		if err := p.Save(400, 300, path); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(b[:min(len(b), 512)], magic) {
			t.Errorf("%s does not start like a %s file", path, ext)
		}
	}
}
