// Command latencyplot draws the latency distributions that BenchmarkLatency
// and BenchmarkWatermillLatency write with -latency.out as an SVG: one
// cumulative distribution per benchmark case on a logarithmic time axis
// (0.1 ms to 10 s), written by hand with no plotting dependency.
//
//	go run ./bench/cmd/latencyplot -o bench/results/latency.svg bench/results/latency.tsv[.gz]
package main

import (
	"bufio"
	"compress/gzip"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

const (
	width, height            = 900, 520
	left, right, top, bottom = 70, 290, 40, 60
	minMS, maxMS             = 0.1, 10000.0
)

var palette = []string{"#d62728", "#1f77b4", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"}

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

func xOf(ms float64) float64 {
	ms = min(max(ms, minMS), maxMS)
	return left + (math.Log10(ms)-math.Log10(minMS))/(math.Log10(maxMS)-math.Log10(minMS))*float64(width-left-right)
}

func yOf(frac float64) float64 { return float64(height-bottom) - frac*float64(height-top-bottom) }

func esc(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}

func label(name string) string {
	name = strings.TrimPrefix(name, "BenchmarkLatency/")
	if s, ok := strings.CutPrefix(name, "BenchmarkWatermillLatency/"); ok {
		return "watermill " + s
	}
	return "jitoutbox " + name
}

func draw(w io.Writer, title string, order []string, series map[string][]float64) {
	fmt.Fprintf(w, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", width, height, width, height)
	fmt.Fprintf(w, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(w, `<text x="%d" y="22" font-size="15" font-weight="bold">%s</text>`+"\n", left, esc(title))
	// Grid and axes.
	for e := int(math.Round(math.Log10(minMS))); e <= int(math.Round(math.Log10(maxMS))); e++ {
		ms := math.Pow10(e)
		x := xOf(ms)
		fmt.Fprintf(w, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/>`+"\n", x, top, x, height-bottom)
		lbl := strconv.FormatFloat(ms, 'g', 3, 64) + " ms"
		if ms >= 1000 {
			lbl = strconv.FormatFloat(ms/1000, 'g', 3, 64) + " s"
		}
		fmt.Fprintf(w, `<text x="%.1f" y="%d" text-anchor="middle">%s</text>`+"\n", x, height-bottom+18, lbl)
	}
	for _, q := range []float64{0, 0.25, 0.5, 0.75, 0.9, 1} {
		y := yOf(q)
		fmt.Fprintf(w, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>`+"\n", left, y, width-right, y)
		fmt.Fprintf(w, `<text x="%d" y="%.1f" text-anchor="end">%g%%</text>`+"\n", left-6, y+4, q*100)
	}
	fmt.Fprintf(w, `<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#333"/>`+"\n", left, top, width-left-right, height-top-bottom)
	fmt.Fprintf(w, `<text x="%d" y="%d" text-anchor="middle">commit returned → JetStream consumer received (log scale)</text>`+"\n", left+(width-left-right)/2, height-18)
	fmt.Fprintf(w, `<text transform="translate(16 %d) rotate(-90)" text-anchor="middle">fraction of events delivered</text>`+"\n", top+(height-top-bottom)/2)
	// One CDF per series.
	for i, name := range order {
		s := slices.Clone(series[name])
		slices.Sort(s)
		color := palette[i%len(palette)]
		var pts strings.Builder
		n := len(s)
		step := max(1, n/400)
		for j := 0; j < n; j += step {
			fmt.Fprintf(&pts, "%.1f,%.1f ", xOf(s[j]), yOf(float64(j+1)/float64(n)))
		}
		fmt.Fprintf(&pts, "%.1f,%.1f", xOf(s[n-1]), yOf(1))
		fmt.Fprintf(w, `<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>`+"\n", color, pts.String())
		ly := top + 10 + i*34
		p50, p99 := s[max(int(0.5*float64(n)+0.5)-1, 0)], s[max(int(0.99*float64(n)+0.5)-1, 0)]
		fmt.Fprintf(w, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="3"/>`+"\n", width-right+12, ly, width-right+32, ly, color)
		fmt.Fprintf(w, `<text x="%d" y="%d">%s</text>`+"\n", width-right+38, ly+4, esc(label(name)))
		fmt.Fprintf(w, `<text x="%d" y="%d" fill="#555" font-size="11">p50 %s, p99 %s, n=%d</text>`+"\n", width-right+38, ly+18, fmtMS(p50), fmtMS(p99), n)
	}
	fmt.Fprintln(w, `</svg>`)
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

func main() {
	out := flag.String("o", "latency.svg", "SVG file to write")
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
		f, err := os.Open(path)
		if err != nil {
			fail(err)
		}
		var r io.Reader = f
		if strings.HasSuffix(path, ".gz") {
			zr, zerr := gzip.NewReader(f)
			if zerr != nil {
				fail(fmt.Errorf("%s: %w", path, zerr))
			}
			r = zr
		}
		err = read(r, *kind, re, &order, series)
		f.Close()
		if err != nil {
			fail(err)
		}
	}
	if len(order) == 0 {
		fail(fmt.Errorf("no %s samples matching %q in %v", *kind, *match, flag.Args()))
	}
	f, err := os.Create(*out)
	if err != nil {
		fail(err)
	}
	bw := bufio.NewWriter(f)
	draw(bw, *title, order, series)
	if err := bw.Flush(); err != nil {
		fail(err)
	}
	if err := f.Close(); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "latencyplot:", err)
	os.Exit(1)
}
