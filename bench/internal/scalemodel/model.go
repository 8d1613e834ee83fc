// Package scalemodel is jitoutbox's scaling model: the relay's work on a
// batch of n events is three stages (read the pending rows, publish them
// and await the broker's acks, mark them published), each costing a fixed
// time per batch plus a time per event, in wall time and in CPU. Calibrated
// on BenchmarkScaleModel's measurements (see Calibrate) and on one measured
// drain (CalibrateDrain), it predicts the events/s and the time-critical
// latency of N relays over P partitions on C cores, on one database or on a
// cluster of databases (a sharded outbox, one relay group per shard), and
// names the limit that binds: the relay pipeline, partition skew, a hot
// aggregate, CPU (database, broker, relays), the WAL/redo flush, the broker.
//
// Times are in microseconds, rates in events per second.
package scalemodel

import (
	"errors"
	"fmt"
	"math"
	"strconv"
)

// Linear is the cost of a batch of n events: Fixed + PerEvent·n.
type Linear struct {
	Fixed, PerEvent float64
}

// At returns the cost of a batch of n events.
func (l Linear) At(n float64) float64 { return l.Fixed + l.PerEvent*n }

// Sub returns l − m, term by term.
func (l Linear) Sub(m Linear) Linear { return Linear{l.Fixed - m.Fixed, l.PerEvent - m.PerEvent} }

// Add returns l + m, term by term.
func (l Linear) Add(m Linear) Linear { return Linear{l.Fixed + m.Fixed, l.PerEvent + m.PerEvent} }

// String formats l as "12.3 + 4.56·n".
func (l Linear) String() string {
	return strconv.FormatFloat(l.Fixed, 'f', 1, 64) + " + " + strconv.FormatFloat(l.PerEvent, 'f', 2, 64) + "·n"
}

// ErrFit is returned (wrapped) by Fit when the points cannot determine a
// line.
var ErrFit = errors.New("scalemodel: cannot fit")

// Fit fits cost = Fixed + PerEvent·n to the points (ns[i], costs[i]) by
// least squares on relative errors (each point weighted by 1/cost²), so
// that the small batches, which set the fixed cost, count as much as the
// large ones, which set the cost per event. It needs at least two
// distinct batch sizes. r2 is the weighted coefficient of determination
// (1 for points on a line).
func Fit(ns, costs []float64) (l Linear, r2 float64, err error) {
	if len(ns) != len(costs) || len(ns) < 2 {
		return Linear{}, 0, fmt.Errorf("%w: %d batch sizes and %d costs (want two or more of each)", ErrFit, len(ns), len(costs))
	}
	w := make([]float64, len(ns))
	var sw, sx, sy float64
	for i := range ns {
		w[i] = 1
		if costs[i] != 0 {
			w[i] = 1 / (costs[i] * costs[i])
		}
		sw += w[i]
		sx += w[i] * ns[i]
		sy += w[i] * costs[i]
	}
	mx, my := sx/sw, sy/sw
	var sxx, sxy, syy float64
	for i := range ns {
		dx, dy := ns[i]-mx, costs[i]-my
		sxx += w[i] * dx * dx
		sxy += w[i] * dx * dy
		syy += w[i] * dy * dy
	}
	if sxx == 0 {
		return Linear{}, 0, fmt.Errorf("%w: every point has batch size %g (want two or more sizes)", ErrFit, mx)
	}
	l.PerEvent = sxy / sxx
	l.Fixed = my - l.PerEvent*mx
	r2 = 1
	if syy > 0 {
		r2 = sxy * sxy / (sxx * syy)
	}
	return l, r2, nil
}

// CPU is a stage's CPU per batch: Machine is every process of the machine
// (database server, broker, client), Client the measuring process alone
// (the dialect's or the publisher's client code).
type CPU struct {
	Machine, Client Linear
}

// Server returns the CPU spent outside the client: by the database server
// for the read and mark, by the broker for the publish.
func (c CPU) Server() Linear { return c.Machine.Sub(c.Client) }

// Calibration holds one database's (and mode's) measured stage costs.
type Calibration struct {
	// DB is the database ("postgres", "mysql", "sqlite"), Mode "update"
	// (published rows marked) or "delete".
	DB, Mode string
	// Read and Mark are the wall times of the dialect's Read of n pending
	// rows of owned partitions and of its fenced Mark of n rows (one
	// commit each).
	Read, Mark Linear
	// DBWork is the CPU of read + mark.
	DBWork CPU
	// Publish is the wall time of publishing n messages to JetStream and
	// awaiting their acks (natspub); Broker its CPU.
	Publish Linear
	Broker  CPU
	// Insert is the wall time of a producer's transaction of n events
	// (txoutbox's multi-row INSERT and COMMIT); Producer its CPU.
	Insert   Linear
	Producer CPU
	// Flush is the part of a commit spent waiting for the WAL flush (the
	// mark with synchronous_commit on, less the same with it off); 0 when
	// the database does not let one session turn it off (then the mark's
	// fixed cost is its upper bound).
	Flush float64
	// Wake is the in-process wake (p50), Deliver a JetStream publish of
	// one message to a consumer's receive (p50).
	Wake, Deliver float64

	// Overlap and RelayCPU come from one measured drain (CalibrateDrain).
	// Overlap is how much of the stages the relay overlaps: a batch's
	// cycle is (1−Overlap)·(read + publish + mark) + Overlap·max(publish,
	// read + mark), plus RelayWall·n.
	Overlap float64
	// RelayWall is the relay's own time per event on its batch's path
	// (its code beyond the dialect and the publisher): the relay process's
	// CPU per event in the drain less the stages' client CPU.
	RelayWall float64
	// RelayCPU is the CPU per event the relay adds to the machine's beyond
	// the stages' own.
	RelayCPU float64
}

// Scenario is a deployment to predict.
type Scenario struct {
	// Relays share the outbox table of one database (per shard), which has
	// Partitions partitions.
	Relays, Partitions int
	// Batch is the relay's BatchSize (the events of a full batch).
	Batch int
	// Cores is the machine's core count when everything (database,
	// broker, relays) runs on one machine, as in the benchmarks.
	Cores float64
	// Aggregates is the number of aggregates the events are spread over,
	// named agg-0, agg-1, ... of type "order" as the benchmarks' backlog:
	// their partitions are computed. 0 means many (no skew from them).
	Aggregates int
	// HotShare is the share of all events that belong to the busiest
	// aggregate (0: none hotter than the others).
	HotShare float64
	// ProducerBatch, when > 0, adds the producers' CPU to the machine's:
	// a sustained rate where producers commit ProducerBatch events per
	// transaction on the same cores (0: a drain of a backlog).
	ProducerBatch int

	// Shards > 0 predicts a cluster: Shards databases, each on its own
	// machine with DBCores cores and its own table and relay group of
	// Relays relays; relays and brokers run on other machines.
	Shards  int
	DBCores float64
	// BrokerCores is the broker cluster's cores (0: not a limit), Replicas
	// the stream's replication (1 when 0): each replica stores every
	// message. RTT is the network round trip between machines (µs), added
	// to the ack and delivery of a replicated stream.
	BrokerCores float64
	Replicas    int
	RTT         float64
}

// Limit is the rate one resource allows.
type Limit struct {
	// Name is the limit: "relay pipeline", "partition skew", "hot
	// aggregate", "CPU", "database CPU", "WAL/redo flush", "broker".
	Name string
	// EventsPerSec is the most the resource allows (+Inf: no bound).
	EventsPerSec float64
	// Detail explains the figure, Advice what raises it.
	Detail, Advice string
}

// Prediction is what Predict returns.
type Prediction struct {
	// EventsPerSec is the smallest limit, Binding its name.
	EventsPerSec float64
	Binding      string
	// Limits are every limit computed, in a fixed order.
	Limits []Limit
	// EffectiveRelays is the relays that share the work evenly enough to
	// count (min(Relays, Partitions), times the partition balance).
	EffectiveRelays float64
	// CycleMicros is one relay's time per full batch.
	CycleMicros float64
	// CriticalP50 is the time-critical latency at light load, Commit to
	// the consumer, with the relay in the committing process (hand-over);
	// CriticalP50Remote when it is woken from another process (it reads
	// the row first).
	CriticalP50, CriticalP50Remote float64
}

// Advice per limit: what to do when it binds.
const (
	advicePipeline = "a larger batch (the fixed costs are paid once per batch), more relays up to the partition count"
	adviceSkew     = "more partitions than relays (8 or more per relay): a relay's share is then close to 1/N"
	adviceHot      = "split the aggregate (its events are published in order, one wave at a time, by one relay); nothing else helps"
	adviceCPU      = "more cores, or move the broker and the relays off the database's machine; DELETE marks cost the database less"
	adviceDBCPU    = "shard the outbox across databases (one relay group each); per shard, larger batches"
	adviceFlush    = "larger batches (one flush per batch); faster fsync; group commit (PostgreSQL commit_delay)"
	adviceWriter   = "one writer at a time (SQLite): larger batches, or a server database"
	adviceBroker   = "more broker nodes or streams spread over them; each replica costs a copy"
)

// Validate reports what makes s unusable.
func (s Scenario) Validate() error {
	switch {
	case s.Relays <= 0 || s.Partitions <= 0 || s.Batch <= 0:
		return fmt.Errorf("scalemodel: relays, partitions and batch must be positive (got %d, %d, %d)", s.Relays, s.Partitions, s.Batch)
	case s.Shards == 0 && s.Cores <= 0:
		return fmt.Errorf("scalemodel: one machine needs its cores (got %g)", s.Cores)
	case s.Shards > 0 && s.DBCores <= 0:
		return fmt.Errorf("scalemodel: a cluster needs each database's cores (got %g)", s.DBCores)
	case s.HotShare < 0 || s.HotShare > 1:
		return fmt.Errorf("scalemodel: the hot share is a fraction (got %g)", s.HotShare)
	}
	return nil
}

// cycle returns one relay's time per batch of n events published in
// `waves` waves (the k-th event of each aggregate waits for the acks of
// the (k−1)-th): every wave after the first pays the publish's fixed cost
// again.
func (c Calibration) cycle(n float64, waves int, rtt float64) float64 {
	r, m := c.Read.At(n), c.Mark.At(n)
	p := c.Publish.At(n) + float64(waves-1)*c.Publish.Fixed + float64(waves)*rtt
	serial := r + p + m
	overlapped := math.Max(p, r+m)
	return (1-c.Overlap)*serial + c.Overlap*overlapped + c.RelayWall*n
}

// perEventCPU returns the machine CPU per event of a drain with batch n.
func (c Calibration) perEventCPU(n float64) float64 {
	return (c.DBWork.Machine.At(n)+c.Broker.Machine.At(n))/n + c.RelayCPU
}

// Predict computes the limits of s with c and the rate they allow.
func Predict(c Calibration, s Scenario) (Prediction, error) {
	if err := s.Validate(); err != nil {
		return Prediction{}, err
	}
	n := float64(s.Batch)
	active := min(s.Relays, s.Partitions)
	rtt := 0.0
	if s.Shards > 0 && max(s.Replicas, 1) > 1 {
		rtt = s.RTT
	}
	var p Prediction
	add := func(l Limit) { p.Limits = append(p.Limits, l) }

	// The relays, each with an equal share: the pipeline.
	loads, aggsPer := relayLoads(s, active)
	wavesEven := 1
	if s.Aggregates > 0 {
		wavesEven = int(math.Ceil(n / math.Max(float64(s.Aggregates)/float64(active), 1)))
	}
	p.CycleMicros = c.cycle(n, wavesEven, rtt)
	pipe := float64(active) * n / p.CycleMicros * 1e6
	add(Limit{Name: "relay pipeline", EventsPerSec: pipe, Advice: advicePipeline,
		Detail: fmt.Sprintf("%d relays (of %d; %d partitions) × %g events per %.0f µs cycle (%d publish waves)",
			active, s.Relays, s.Partitions, n, p.CycleMicros, wavesEven)})

	// Partition skew: the drain ends with its most loaded relay.
	skew := math.Inf(1)
	p.EffectiveRelays = float64(active)
	if len(loads) > 0 {
		skew = math.Inf(1)
		for r, load := range loads {
			if load == 0 {
				continue
			}
			waves := 1
			if aggsPer[r] > 0 {
				waves = int(math.Ceil(n / math.Max(float64(aggsPer[r]), 1)))
			}
			skew = math.Min(skew, n/c.cycle(n, waves, rtt)*1e6/load)
		}
		maxLoad := 0.0
		for _, l := range loads {
			maxLoad = math.Max(maxLoad, l)
		}
		p.EffectiveRelays = 1 / maxLoad
		add(Limit{Name: "partition skew", EventsPerSec: skew, Advice: adviceSkew,
			Detail: fmt.Sprintf("the busiest relay carries %.1f%% of the events (even: %.1f%%): %.2f effective relays",
				100*maxLoad, 100/float64(active), p.EffectiveRelays)})
	}

	// A hot aggregate: one relay publishes it, one wave per event.
	if s.HotShare > 0 {
		load := s.HotShare + (1-s.HotShare)/float64(active)
		inRelay := s.HotShare / load
		waves := max(int(math.Ceil(inRelay*n)), 1)
		hot := n / c.cycle(n, waves, rtt) * 1e6 / load
		add(Limit{Name: "hot aggregate", EventsPerSec: hot, Advice: adviceHot,
			Detail: fmt.Sprintf("one aggregate has %.1f%% of the events: its relay needs %d publish waves per batch", 100*s.HotShare, waves)})
	}

	// CPU and the flush.
	cpuEvent := c.perEventCPU(n)
	if s.Shards == 0 {
		what := "database, broker and relays"
		if s.ProducerBatch > 0 {
			k := float64(s.ProducerBatch)
			cpuEvent += c.Producer.Machine.At(k) / k
			what += fmt.Sprintf(", and producers (%d events a transaction)", s.ProducerBatch)
		}
		add(Limit{Name: "CPU", EventsPerSec: s.Cores * 1e6 / cpuEvent, Advice: adviceCPU,
			Detail: fmt.Sprintf("%g cores / %.1f µs of CPU per event (%s)", s.Cores, cpuEvent, what)})
	} else {
		dbEvent := c.DBWork.Server().At(n) / n
		if s.ProducerBatch > 0 {
			k := float64(s.ProducerBatch)
			dbEvent += c.Producer.Server().At(k) / k
		}
		add(Limit{Name: "database CPU", EventsPerSec: float64(s.Shards) * s.DBCores * 1e6 / dbEvent, Advice: adviceDBCPU,
			Detail: fmt.Sprintf("%d shards × %g cores / %.1f µs of database CPU per event", s.Shards, s.DBCores, dbEvent)})
		if s.BrokerCores > 0 {
			reps := float64(max(s.Replicas, 1))
			be := c.Broker.Server().At(n) / n * reps
			add(Limit{Name: "broker", EventsPerSec: s.BrokerCores * 1e6 / be, Advice: adviceBroker,
				Detail: fmt.Sprintf("%g broker cores / %.1f µs of broker CPU per event (%g replicas)", s.BrokerCores, be, reps)})
		}
	}
	add(c.flushLimit(n, active))

	shards := float64(max(s.Shards, 1))
	p.EventsPerSec = math.Inf(1)
	for i, l := range p.Limits {
		if l.Name == "relay pipeline" || l.Name == "partition skew" || l.Name == "hot aggregate" || l.Name == "WAL/redo flush" {
			p.Limits[i].EventsPerSec *= shards // one relay group, one WAL per shard
			if shards > 1 {
				p.Limits[i].Detail += fmt.Sprintf(", × %g shards", shards)
			}
		}
		if p.Limits[i].EventsPerSec < p.EventsPerSec {
			p.EventsPerSec, p.Binding = p.Limits[i].EventsPerSec, l.Name
		}
	}
	p.CriticalP50 = c.Wake + c.Deliver + rtt
	p.CriticalP50Remote = p.CriticalP50 + c.Read.At(1)
	return p, nil
}

// flushLimit is the WAL/redo flush's bound: each relay's mark of a batch
// commits and waits for one flush; concurrent commits share a flush (group
// commit), so at most one flush per relay batch is paid. SQLite runs one
// writer at a time: its marks queue.
func (c Calibration) flushLimit(n float64, relays int) Limit {
	if c.DB == "sqlite" {
		return Limit{Name: "WAL/redo flush", EventsPerSec: n / c.Mark.At(n) * 1e6, Advice: adviceWriter,
			Detail: fmt.Sprintf("one writer: marks of %g events take %.0f µs each, whatever the relays", n, c.Mark.At(n))}
	}
	f, how := c.Flush, "measured"
	if f <= 0 {
		f, how = c.Mark.Fixed, "upper bound: the mark's fixed cost"
	}
	if f <= 0 {
		return Limit{Name: "WAL/redo flush", EventsPerSec: math.Inf(1), Detail: "no flush cost measured", Advice: adviceFlush}
	}
	return Limit{Name: "WAL/redo flush", EventsPerSec: float64(relays) * n / f * 1e6, Advice: adviceFlush,
		Detail: fmt.Sprintf("%d relays × %g events per flush of %.0f µs (%s)", relays, n, f, how)}
}

// CalibrateDrain sets RelayWall, RelayCPU and Overlap from one measured
// drain of scenario s (usually one relay on this machine, the benchmarks'
// backlog): its rate and the relay process's CPU per event. The relay's
// own work per event, beyond the stages' client code, is its CPU less the
// stages' client CPU: it is RelayWall (on the batch's path) and RelayCPU
// (added to the machine's); the servers' share is taken as the stages
// measured it, as a shared machine's CPU meter also counts other programs.
// Overlap is then solved from the rate and kept in [0, 1] (clamped says it
// had to be).
func (c *Calibration) CalibrateDrain(s Scenario, rate, relayCPU float64) (clamped bool, err error) {
	if err := s.Validate(); err != nil {
		return false, err
	}
	if rate <= 0 {
		return false, fmt.Errorf("scalemodel: calibrate on a drain rate > 0 (got %g)", rate)
	}
	n := float64(s.Batch)
	c.RelayWall = math.Max(relayCPU-(c.DBWork.Client.At(n)+c.Broker.Client.At(n))/n, 0)
	c.RelayCPU = c.RelayWall
	active := min(s.Relays, s.Partitions)
	loads, aggsPer := relayLoads(s, active)
	waves, load := 1, 1/float64(active)
	for r, l := range loads { // the busiest relay sets the drain's end
		if r == 0 || l > load {
			load = l
			waves = max(int(math.Ceil(n/math.Max(float64(aggsPer[r]), 1))), 1)
		}
	}
	measured := n / (rate * load) * 1e6 // the busiest relay's cycle
	c.Overlap = 0
	serial := c.cycle(n, waves, 0)
	c.Overlap = 1
	overlapped := c.cycle(n, waves, 0)
	c.Overlap = 0
	if serial > overlapped {
		c.Overlap = (serial - measured) / (serial - overlapped)
	}
	if c.Overlap < 0 || c.Overlap > 1 {
		c.Overlap, clamped = math.Min(math.Max(c.Overlap, 0), 1), true
	}
	return clamped, nil
}
