// Command latencyplot draws the latency distributions that BenchmarkLatency
// and BenchmarkWatermillLatency write with -latency.out: one cumulative
// distribution per benchmark case on a logarithmic time axis (0.1 ms to
// 10 s), with gonum.org/v1/plot. The output format follows the file
// extension of -o (.svg, .png, .pdf).
//
//	go run ./bench/cmd/latencyplot -o bench/results/latency.svg bench/results/latency.tsv[.gz]
//	go run ./bench/cmd/latencyplot -o bench/results/latency.png bench/results/latency.tsv[.gz]
package main

import (
	"bufio"
	"compress/gzip"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

const minMS, maxMS = 0.1, 10000.0

// read returns the samples in ms per benchmark name, in order of first
// appearance, for lines of the given kind whose name matches re.
func read(r io.Reader, kind string, re *regexp.Regexp, order *[]string, series map[string][]float64) error {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		if len(f) != 3 || f[1] != kind || !re.MatchString(f[0]) {
			continue
		}
		us, err := strconv.ParseFloat(f[2], 64)
		if err != nil {
			return fmt.Errorf("bad sample %q: %w", sc.Text(), err)
		}
		if _, ok := series[f[0]]; !ok {
			*order = append(*order, f[0])
		}
		series[f[0]] = append(series[f[0]], us/1000)
	}
	return sc.Err()
}

func label(name string) string {
	name = strings.TrimPrefix(name, "BenchmarkLatency/")
	if s, ok := strings.CutPrefix(name, "BenchmarkWatermillLatency/"); ok {
		return "watermill " + s
	}
	return "jitoutbox " + name
}

// cdf returns the cumulative distribution of samples (ms) as plot points,
// at most about 400 of them, clamped to the axis range.
func cdf(samples []float64) plotter.XYs {
	s := slices.Clone(samples)
	slices.Sort(s)
	n := len(s)
	step := max(1, n/400)
	var pts plotter.XYs
	for j := 0; j < n; j += step {
		pts = append(pts, plotter.XY{X: min(max(s[j], minMS), maxMS), Y: float64(j+1) / float64(n)})
	}
	return append(pts, plotter.XY{X: min(max(s[n-1], minMS), maxMS), Y: 1})
}

// quantile returns the q-quantile (nearest rank) of sorted samples.
func quantile(sorted []float64, q float64) float64 {
	return sorted[max(int(q*float64(len(sorted))+0.5)-1, 0)]
}

func fmtMS(ms float64) string {
	switch {
	case ms >= 1000:
		return strconv.FormatFloat(ms/1000, 'f', 2, 64) + " s"
	case ms >= 10:
		return strconv.FormatFloat(ms, 'f', 0, 64) + " ms"
	default:
		return strconv.FormatFloat(ms, 'f', 2, 64) + " ms"
	}
}

// msTicks labels the decades of the log axis in ms or s.
type msTicks struct{}

func (msTicks) Ticks(lo, hi float64) []plot.Tick {
	var out []plot.Tick
	for ms := minMS; ms <= maxMS*1.0001; ms *= 10 {
		if ms < lo*0.9999 || ms > hi*1.0001 {
			continue
		}
		lbl := strconv.FormatFloat(ms, 'g', 3, 64) + " ms"
		if ms >= 1000 {
			lbl = strconv.FormatFloat(ms/1000, 'g', 3, 64) + " s"
		}
		out = append(out, plot.Tick{Value: ms, Label: lbl})
	}
	return out
}

// build makes the plot: one CDF line per series, the legend naming each
// with its p50, p99 and count.
func build(title string, order []string, series map[string][]float64) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "commit returned → JetStream consumer received (log scale)"
	p.Y.Label.Text = "fraction of events delivered"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = msTicks{}
	p.X.Min, p.X.Max = minMS, maxMS
	// Room above the curves for the legend, so that it hides none of them.
	p.Y.Min, p.Y.Max = 0, 1+0.09*float64(len(order)+1)
	p.Y.Tick.Marker = plot.ConstantTicks([]plot.Tick{{Value: 0, Label: "0"}, {Value: 0.25, Label: "25%"},
		{Value: 0.5, Label: "50%"}, {Value: 0.75, Label: "75%"}, {Value: 0.9, Label: "90%"}, {Value: 1, Label: "100%"}})
	p.Add(plotter.NewGrid())
	p.Legend.Top = true
	p.Legend.Left = true
	for i, name := range order {
		s := slices.Clone(series[name])
		slices.Sort(s)
		line, err := plotter.NewLine(cdf(s))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		line.Color = plotutil.Color(i)
		line.Width = vg.Points(2)
		p.Add(line)
		p.Legend.Add(fmt.Sprintf("%s: p50 %s, p99 %s, n=%d", label(name), fmtMS(quantile(s, 0.5)), fmtMS(quantile(s, 0.99)), len(s)), line)
	}
	return p, nil
}

func main() {
	out := flag.String("o", "latency.svg", "file to write; the extension picks the format (.svg, .png, .pdf)")
	match := flag.String("match", `^Benchmark(Watermill)?Latency/postgres/.*/light$`, "regexp selecting the benchmark cases to draw")
	kind := flag.String("kind", "commit-recv", "sample kind to draw (commit-recv or commit-ack)")
	title := flag.String("title", "Commit-to-delivery latency, PostgreSQL + JetStream, 200 commits/s", "chart title")
	flag.Parse()
	re, err := regexp.Compile(*match)
	if err != nil {
		fail(err)
	}
	var order []string
	series := map[string][]float64{}
	for _, path := range flag.Args() {
		if err := readFile(path, *kind, re, &order, series); err != nil {
			fail(err)
		}
	}
	if len(order) == 0 {
		fail(fmt.Errorf("no %s samples matching %q in %v", *kind, *match, flag.Args()))
	}
	p, err := build(*title, order, series)
	if err != nil {
		fail(err)
	}
	if err := p.Save(9*vg.Inch, 5.2*vg.Inch, *out); err != nil {
		fail(err)
	}
}

// readFile reads one -latency.out file, gzipped when it ends in .gz.
func readFile(path, kind string, re *regexp.Regexp, order *[]string, series map[string][]float64) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		zr, err := gzip.NewReader(f)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		r = zr
	}
	return read(r, kind, re, order, series)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "latencyplot:", err)
	os.Exit(1)
}
