package bench

import (
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jitoutbox/jitoutbox/bench/internal/scalemodel"
	"github.com/jitoutbox/jitoutbox/internal/testnats"
	"github.com/jitoutbox/jitoutbox/notify"
	"github.com/jitoutbox/jitoutbox/relay"
	"github.com/jitoutbox/jitoutbox/relay/natspub"
)

var (
	scaleEvents  = flag.Int("scale.events", 20_000, "events per timed window of BenchmarkScaleModel (each window runs 40 to 1,000 batches)")
	scaleBatches = flag.String("scale.batches", "1,10,100,500", "batch sizes BenchmarkScaleModel measures each stage at (two or more: the model fits a fixed and a per-event cost)")
	scaleDBs     = flag.String("scale.dbs", "postgres,mysql,sqlite", "comma-separated databases BenchmarkScaleModel measures")
	scaleSamples = flag.Int("scale.samples", 1000, "messages BenchmarkScaleModel/jetstream/latency times")
	scaleDrain   = flag.Int("scale.drain", 50_000, "backlog of BenchmarkScaleModel's drains (1, 2 and 4 relays), measured next to the stages")
)

// BenchmarkScaleModel measures the per-stage costs the scaling model
// (bench/internal/scalemodel, bench/cmd/scalemodel, docs/scaling.md) is
// calibrated on, each stage alone in its own timed window, at several
// batch sizes (-scale.batches), so that a fixed cost per batch and a cost
// per event can be fitted:
//
//   - jetstream/batch=N: natspub publishing N messages to a file stream and
//     awaiting their acks (publish-µs/batch), with the CPU of the window
//     (cpu-µs/batch: the whole machine, mostly nats-server;
//     self-cpu-µs/batch: this process).
//   - <db>/latency: the in-process wake (notify.Local), a publish of one
//     message awaiting its ack, and the same to a consumer's receive, p50
//     and p99 in µs (wake-p50-us, ack-p50-us, deliver-p50-us, ...); then
//     <db>/critical/light: BenchmarkLatency's time-critical case at light
//     load (the relay in process; p50-ms, ...), the measured point of the
//     model's latency, side by side with its stages.
//   - <db>/<mode>/batch=N: the dialect's Read of N pending rows of the
//     partitions a session owns, then its fenced Mark of them (mode update:
//     published state; delete), read-µs/batch and mark-µs/batch, and the CPU
//     of the window. On PostgreSQL the window is repeated with the marks
//     on a connection with synchronous_commit off (mark-nosync-µs/batch):
//     the difference of the fixed costs is the WAL flush per commit.
//   - <db>/insert/batch=N: a producer's transaction of N events through
//     txoutbox (one multi-row INSERT, COMMIT), insert-µs/batch and CPU.
//   - .../fit: the fixed cost and the cost per event of each of the above
//     (least squares over the batch sizes, on relative errors) and the
//     fit's r2.
//   - <db>/<mode>/drain/relays=N: right after the stages, the relay's drain
//     of a -scale.drain backlog with N relays (batch 500): events/s, CPU
//     per event (self-cpu-µs/event: the relays' process), and
//     others-cores, the cores other programs kept busy meanwhile (the
//     machine's busy CPU less this process's and the database and broker
//     servers'; another program's work in those servers counts as ours):
//     the model's measured points, side by side with its calibration.
//
// The backlog is -drain.aggregates aggregates round-robin, as in
// BenchmarkDrain. Run with -benchtime=1x; each window handles -scale.events
// events (at least 40 and at most 1,000 batches). Stage times are the
// median of the window's calls (a shared machine's noise left out;
// name-mean-µs/batch gives the mean too).
func BenchmarkScaleModel(b *testing.B) {
	var sizes []int
	for _, f := range strings.Split(*scaleBatches, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			b.Fatalf("-scale.batches: %q is not a positive batch size", f)
		}
		sizes = append(sizes, n)
	}
	if len(slices.Compact(slices.Sorted(slices.Values(sizes)))) < 2 {
		b.Fatalf("-scale.batches: two or more different batch sizes are needed to fit a line (got %v)", sizes)
	}
	b.Run("jetstream", func(b *testing.B) { scaleJetStream(b, sizes) })
	for _, dbName := range strings.Split(*scaleDBs, ",") {
		b.Run(dbName, func(b *testing.B) { scaleDB(b, dbName, sizes) })
	}
}

// windowBatches is the number of batches of size n in one timed window.
func windowBatches(n int) int { return min(max(*scaleEvents/n, 40), 1000) }

// fitPoints collects (batch size, value) per unit for a fit line.
type fitPoints map[string][][2]float64

func (f fitPoints) add(unit string, n int, v float64) {
	f[unit] = append(f[unit], [2]float64{float64(n), v})
}

// report adds <name>-fixed-µs, <name>-µs/event and <name>-r2 of each unit
// ("read-µs/batch" is named "read") fitted over its batch sizes.
func (f fitPoints) report(b *testing.B) {
	for _, unit := range slices.Sorted(func(yield func(string) bool) {
		for k := range f {
			if !yield(k) {
				return
			}
		}
	}) {
		var ns, ys []float64
		for _, p := range f[unit] {
			ns, ys = append(ns, p[0]), append(ys, p[1])
		}
		l, r2, err := scalemodel.Fit(ns, ys)
		if err != nil {
			b.Fatal(err)
		}
		name := strings.TrimSuffix(strings.TrimSuffix(unit, "-µs/batch"), "/batch")
		b.ReportMetric(l.Fixed, name+"-fixed-µs")
		b.ReportMetric(l.PerEvent, name+"-µs/event")
		b.ReportMetric(r2, name+"-r2")
	}
	b.ReportMetric(0, "ns/op")
}

// serverMeter meters the CPU of the server a stage talks to: its
// processes on this machine (pids), or nothing when the server runs in
// this process (inProcess: its CPU is in self-cpu) or cannot be found.
type serverMeter struct {
	pids      []int
	inProcess bool
}

// window returns a fresh meter for one window; nil when nothing is metered.
func (s serverMeter) window() *procMeter {
	if s.inProcess || len(s.pids) == 0 {
		return nil
	}
	return newProcMeter(s.pids)
}

// cpuReport reports the meters per batch (cpu-µs/batch: the whole
// machine, other programs included; self-cpu-µs/batch: this process;
// server-cpu-µs/batch: the server's processes, 0 for a server in this
// process) and records them for the fit.
func cpuReport(b *testing.B, cpu *cpuMeter, srv *procMeter, sm serverMeter, fp fitPoints, n int) {
	cpu.report(b, "", "batch")
	if v, ok := cpu.perEvent(); ok {
		fp.add("cpu-µs/batch", n, v)
		fp.add("self-cpu-µs/batch", n, float64(cpu.self.Microseconds())/float64(cpu.events))
	}
	switch v, ok := srv.perEvent(); {
	case sm.inProcess:
		b.ReportMetric(0, "server-cpu-µs/batch")
		fp.add("server-cpu-µs/batch", n, 0)
	case ok:
		b.ReportMetric(v, "server-cpu-µs/batch")
		fp.add("server-cpu-µs/batch", n, v)
	}
}

// startMeters and stopMeters open and close a window on both meters.
func startMeters(cpu *cpuMeter, srv *procMeter) {
	cpu.start()
	if srv != nil {
		srv.start()
	}
}

func stopMeters(cpu *cpuMeter, srv *procMeter, batches int) {
	if srv != nil {
		srv.stop(batches)
	}
	cpu.stop(batches)
}

// durations are the times of one stage's calls in a window.
type durations []time.Duration

// median returns the median in µs: the stage's cost with the noise of a
// shared machine (other programs taking the CPU now and then) left out.
func (d durations) median() float64 {
	s := slices.Sorted(slices.Values(d))
	return float64(s[len(s)/2].Nanoseconds()) / 1e3
}

// mean returns the mean in µs.
func (d durations) mean() float64 {
	var t time.Duration
	for _, v := range d {
		t += v
	}
	return float64(t.Nanoseconds()) / 1e3 / float64(len(d))
}

// reportStage reports name-µs/batch (the median, which the fit uses) and
// name-mean-µs/batch.
func reportStage(b *testing.B, fp fitPoints, name string, n int, d durations) {
	b.ReportMetric(d.median(), name+"-µs/batch")
	b.ReportMetric(d.mean(), name+"-mean-µs/batch")
	fp.add(name+"-µs/batch", n, d.median())
}

func scaleJetStream(b *testing.B, sizes []int) {
	ctx := context.Background()
	_, js := benchJetStream(b)
	sm := serverMeter{inProcess: os.Getenv(testnats.EnvURL) == ""} // else testnats runs an embedded server
	if !sm.inProcess {
		sm.pids = natsServerPID(os.Getenv(testnats.EnvURL))
	}
	fp := fitPoints{}
	for _, n := range sizes {
		b.Run(fmt.Sprintf("batch=%d", n), func(b *testing.B) {
			_, prefix := testnats.Stream(b, js)
			pub, err := natspub.NewJetStream(js, natspub.WithSubjectPrefix(prefix))
			if err != nil {
				b.Fatal(err)
			}
			batches := windowBatches(n)
			var cpu cpuMeter
			srv := sm.window()
			var wall durations
			errs := make([]error, n)
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				msgs := make([]relay.Message, batches*n)
				for j := range msgs {
					now := time.Now()
					msgs[j] = relay.Message{ID: uuid.Must(uuid.NewV7()).String(), AggregateType: "order",
						AggregateID: "agg-" + strconv.Itoa(j%*drainAggregates), EventType: "order.placed",
						Payload: payload, ContentType: "application/json", CreatedAt: now, Attempt: 1}
				}
				b.StartTimer()
				startMeters(&cpu, srv)
				for k := range batches {
					t0 := time.Now()
					pub.Publish(ctx, msgs[k*n:(k+1)*n], errs)
					wall = append(wall, time.Since(t0))
					for _, err := range errs {
						if err != nil {
							b.Fatal(err)
						}
					}
				}
				stopMeters(&cpu, srv, batches)
			}
			reportStage(b, fp, "publish", n, wall)
			cpuReport(b, &cpu, srv, sm, fp, n)
		})
	}
	b.Run("fit", fp.report)
}

// scaleLatency times the in-process wake and a publish of one message to
// a consumer's receive, -scale.samples times each.
func scaleLatency(b *testing.B, js jetstream.JetStream) {
	ctx := context.Background()
	stream, prefix := testnats.Stream(b, js)
	subJS, err := jetstream.New(testnats.Connect(b, testnats.URL(b)))
	if err != nil {
		b.Fatal(err)
	}
	got := consumeEventIDs(b, ctx, subJS, stream.CachedInfo().Config.Name)
	pub, err := natspub.NewJetStream(js, natspub.WithSubjectPrefix(prefix))
	if err != nil {
		b.Fatal(err)
	}
	local := notify.NewLocal()
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	wake := notify.NewWakes()
	if err := local.Listen(lctx, wake); err != nil {
		b.Fatal(err)
	}
	wakeT, ackT, deliverT := &stageTimer{name: "wake"}, &stageTimer{name: "ack"}, &stageTimer{name: "deliver"}
	errs := make([]error, 1)
	for i := 0; i < b.N; i++ {
		for range *scaleSamples {
			time.Sleep(time.Millisecond) // idle between events, as at light load
			t0 := time.Now()
			local.Notify([]int{1})
			<-wake.C()
			wake.Take()
			wakeT.d = append(wakeT.d, time.Since(t0))
			now := time.Now()
			m := relay.Message{ID: uuid.Must(uuid.NewV7()).String(), AggregateType: "order", AggregateID: "agg-1",
				EventType: "order.placed", Payload: payload, ContentType: "application/json", CreatedAt: now, Attempt: 1}
			t0 = time.Now()
			pub.Publish(ctx, []relay.Message{m}, errs)
			ackT.d = append(ackT.d, time.Since(t0))
			if errs[0] != nil {
				b.Fatal(errs[0])
			}
			if id := <-got; id != m.ID {
				b.Fatalf("received %s, want %s", id, m.ID)
			}
			deliverT.d = append(deliverT.d, time.Since(t0))
		}
	}
	for _, st := range []*stageTimer{wakeT, ackT, deliverT} {
		st.report(b)
	}
	b.ReportMetric(0, "ns/op")
}
