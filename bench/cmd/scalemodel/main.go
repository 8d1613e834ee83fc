// Command scalemodel calibrates jitoutbox's scaling model on benchmark
// output and prints, in markdown, the calibration table, the predicted
// events/s and time-critical latency of a deployment, where each limit
// sits and what to do at it, and the model's predictions against the
// drains and latencies measured in the same files.
//
//	go test -run '^$' -bench '^(BenchmarkScaleModel|BenchmarkDrainScaling|BenchmarkLatency)$' -benchtime=1x ./bench/ > run.txt
//	go run ./bench/cmd/scalemodel -db postgres -relays 1,2,4,8 -cores 2 run.txt
//	go run ./bench/cmd/scalemodel -db postgres -shards 4 -db-cores 16 -relays 4 -broker-cores 24 -replicas 3 run.txt
//
// The model (bench/internal/scalemodel) is fitted on BenchmarkScaleModel's
// per-stage lines; its two relay terms (overlap of the stages, the relay's
// own CPU per event) on one measured drain, BenchmarkDrainScaling's one
// relay of -calibrate (default: -db and -mode). See docs/scaling.md.
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/jitoutbox/jitoutbox/bench/internal/benchparse"
	"github.com/jitoutbox/jitoutbox/bench/internal/scalemodel"
)

// options are the command's flags.
type options struct {
	db, mode, calibrate string
	relays              []int
	scenario            scalemodel.Scenario
	files               []string
}

// errUsage marks a bad flag or argument.
var errUsage = errors.New("usage")

func parseFlags(args []string, stderr io.Writer) (options, error) {
	fs := flag.NewFlagSet("scalemodel", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	s := &o.scenario
	fs.StringVar(&o.db, "db", "postgres", "database whose calibration predicts: postgres, mysql or sqlite")
	fs.StringVar(&o.mode, "mode", "update", "mark mode: update (published state) or delete")
	fs.StringVar(&o.calibrate, "calibrate", "", "db/mode of the one-relay drain (BenchmarkDrainScaling) the relay terms are calibrated on (default: -db/-mode)")
	relays := fs.String("relays", "1,2,4,8", "relay counts to predict (comma-separated)")
	fs.IntVar(&s.Partitions, "partitions", 64, "partitions of the outbox table")
	fs.IntVar(&s.Batch, "batch", 500, "relay BatchSize")
	fs.Float64Var(&s.Cores, "cores", 0, "cores of the one machine everything runs on (0: the benchmark's GOMAXPROCS)")
	fs.IntVar(&s.Aggregates, "aggregates", 1000, "aggregates the events are spread over (the benchmarks' agg-0..; 0: many)")
	fs.Float64Var(&s.HotShare, "hot", 0, "share of all events of the busiest aggregate (0: none hotter)")
	fs.IntVar(&s.ProducerBatch, "producer-batch", 0, "producers on the same cores, committing this many events a transaction (0: a drain)")
	fs.IntVar(&s.Shards, "shards", 0, "a cluster: this many databases, each on its own machine with its own relay group (0: one machine)")
	fs.Float64Var(&s.DBCores, "db-cores", 0, "cluster: cores of each database machine")
	fs.Float64Var(&s.BrokerCores, "broker-cores", 0, "cluster: cores of the broker cluster (0: not a limit)")
	fs.IntVar(&s.Replicas, "replicas", 1, "cluster: the stream's replicas")
	fs.Float64Var(&s.RTT, "rtt", 200, "cluster: network round trip between machines, µs (an assumption: not measured here)")
	if err := fs.Parse(args); err != nil {
		return o, fmt.Errorf("%w: %w", errUsage, err)
	}
	for _, f := range strings.Split(*relays, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return o, fmt.Errorf("%w: -relays: %q is not a positive count", errUsage, f)
		}
		o.relays = append(o.relays, n)
	}
	if o.calibrate == "" {
		o.calibrate = o.db + "/" + o.mode
	}
	o.files = fs.Args()
	if len(o.files) == 0 {
		return o, fmt.Errorf("%w: give the benchmark output files to read", errUsage)
	}
	return o, nil
}

// load reads every file's benchmark lines.
func load(files []string) ([]*benchparse.Result, error) {
	var all []*benchparse.Result
	for _, path := range files {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		rs, _, err := benchparse.Parse(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		all = append(all, rs...)
	}
	return all, nil
}

func run(args []string, stdout, stderr io.Writer) error {
	o, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	results, err := load(o.files)
	if err != nil {
		return err
	}
	m, err := newModel(results, o)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(stdout)
	defer w.Flush()
	return m.write(w)
}

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "scalemodel:", err)
		if errors.Is(err, errUsage) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}
