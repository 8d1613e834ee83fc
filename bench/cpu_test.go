package bench

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

// cpuMeter adds up, over timed windows, the CPU time the whole machine was
// busy (every process: the database server, the broker and this one, from
// /proc/stat) and the CPU time of this process (getrusage). Divided by the
// events of the windows, they say what an event costs in CPU: on a machine
// whose cores are all busy, cores / machine CPU per event is the ceiling of
// any rate, whichever process spends the time. Off Linux it reports nothing.
type cpuMeter struct {
	wall, busy, self time.Duration
	events           int
	// switches counts this process's context switches over the windows
	// (getrusage, all its threads): a thread that sleeps and is woken
	// again, which CPU time per event says less steadily on a machine
	// whose load varies.
	switches int64
	// servers, when set, also meters the database and broker servers of
	// this machine (every process named as one: servers), each kind
	// apart: what the machine spent besides them and this process is
	// other programs'.
	servers bool
	split   *serverSplit

	t0           time.Time
	busy0, self0 time.Duration
	switches0    int64
	ok           bool
}

// serverNames are the command names of the servers the benchmarks use.
var serverNames = []string{"postgres", "mariadbd", "mysqld", "nats-server"}

// start opens a window.
func (m *cpuMeter) start() {
	m.t0 = time.Now()
	m.busy0, m.ok = machineBusy()
	m.self0 = selfCPU()
	m.switches0 = selfSwitches()
	if m.servers {
		if m.split == nil {
			m.split = newServerSplit(serverNames...)
		}
		m.split.start()
	}
}

// stop closes the window opened by start; events were handled in it.
func (m *cpuMeter) stop(events int) {
	busy, ok := machineBusy()
	m.ok = m.ok && ok
	m.wall += time.Since(m.t0)
	m.busy += busy - m.busy0
	m.self += selfCPU() - m.self0
	m.switches += selfSwitches() - m.switches0
	m.events += events
	if m.servers {
		m.split.stop()
	}
}

// busyFraction returns the machine's busy fraction of all its cores over
// the windows.
func (m *cpuMeter) busyFraction() float64 {
	if m.wall <= 0 {
		return 0
	}
	return m.busy.Seconds() / (m.wall.Seconds() * float64(runtime.NumCPU()))
}

// others returns the cores other programs kept busy over the windows:
// the machine's busy CPU less this process's and the servers' (only with
// servers set; false otherwise).
func (m *cpuMeter) others() (float64, bool) {
	if !m.servers || !m.ok || m.wall <= 0 {
		return 0, false
	}
	return max(m.busy-m.self-m.split.total(), 0).Seconds() / m.wall.Seconds(), true
}

// perEvent returns the machine's CPU microseconds per event, false when
// nothing was metered.
func (m *cpuMeter) perEvent() (float64, bool) {
	if !m.ok || m.events == 0 {
		return 0, false
	}
	return float64(m.busy.Microseconds()) / float64(m.events), true
}

// report adds <prefix>cpu-µs/<unit> (the whole machine),
// <prefix>self-cpu-µs/<unit> (this process: the relays or the bare loop,
// the client libraries and the benchmark's own bookkeeping) and
// <prefix>cpu-busy (the machine's busy fraction of all its cores over the
// windows); with servers set, it logs each server's share per unit.
func (m *cpuMeter) report(b *testing.B, prefix, unit string) {
	busy, ok := m.perEvent()
	if !ok || m.wall <= 0 {
		return
	}
	b.ReportMetric(busy, prefix+"cpu-µs/"+unit)
	b.ReportMetric(float64(m.self.Microseconds())/float64(m.events), prefix+"self-cpu-µs/"+unit)
	b.ReportMetric(m.busyFraction(), prefix+"cpu-busy")
	if m.servers {
		b.Logf("%scpu-µs/%s by server: %s", prefix, unit, m.split.perEvent(m.events))
	}
}

// TestCPUMeter checks the meter on Linux: a window in which this process
// spins for 200 ms of CPU reports at least half of it, for the machine and
// for the process.
func TestCPUMeter(t *testing.T) {
	if _, ok := machineBusy(); !ok {
		t.Skip("no /proc/stat on this system")
	}
	var m cpuMeter
	m.start()
	for start := selfCPU(); selfCPU()-start < 200*time.Millisecond; {
	}
	m.stop(1)
	if !m.ok {
		t.Fatal("meter not ok after a window on Linux")
	}
	if m.self < 100*time.Millisecond || m.busy < 100*time.Millisecond {
		t.Fatalf("spun 200 ms of CPU; meter says self %v, machine %v", m.self, m.busy)
	}
	if v, ok := m.perEvent(); !ok || v < 100e3 {
		t.Fatalf("perEvent = %v, %v; want >= 100000 µs for one event", v, ok)
	}
	if _, ok := m.others(); ok {
		t.Fatal("others() without servers metered")
	}
	// With the servers metered, this process's spinning is not others'.
	sm := cpuMeter{servers: true}
	sm.start()
	for start := selfCPU(); selfCPU()-start < 200*time.Millisecond; {
	}
	sm.stop(1)
	if o, ok := sm.others(); !ok || o < 0 || o > float64(runtime.NumCPU()) {
		t.Fatalf("others = %v, %v; want a core count", o, ok)
	}
}

// procMeter adds up, over timed windows, the CPU time of server processes
// (the broker, a database server, or one PostgreSQL backend), so that what
// the server spends for this benchmark is told apart from what other
// programs on a shared machine spend. A server shared with others (one
// mysqld, one nats-server) still counts their work too.
type procMeter struct {
	pids   []int
	total  time.Duration
	events int
	t0     time.Duration
	ok     bool
}

// newProcMeter meters pids; with none, the meter is never ok.
func newProcMeter(pids []int) *procMeter { return &procMeter{pids: pids, ok: len(pids) > 0} }

func (m *procMeter) start() {
	t, ok := procCPU(m.pids)
	m.t0, m.ok = t, m.ok && ok
}

func (m *procMeter) stop(events int) {
	t, ok := procCPU(m.pids)
	m.ok = m.ok && ok
	m.total += t - m.t0
	m.events += events
}

// perEvent returns the processes' CPU µs per event, false when not metered.
func (m *procMeter) perEvent() (float64, bool) {
	if m == nil || !m.ok || m.events == 0 {
		return 0, false
	}
	return float64(m.total.Microseconds()) / float64(m.events), true
}

// TestProcMeter checks the process meter on Linux against this process:
// spinning 200 ms of CPU is counted, at least half of it.
func TestProcMeter(t *testing.T) {
	if _, ok := procCPU([]int{os.Getpid()}); !ok {
		t.Skip("no /proc/<pid>/stat on this system")
	}
	m := newProcMeter([]int{os.Getpid()})
	m.start()
	for start := selfCPU(); selfCPU()-start < 200*time.Millisecond; {
	}
	m.stop(1)
	if v, ok := m.perEvent(); !ok || v < 100e3 {
		t.Fatalf("perEvent = %v, %v; want >= 100000 µs for 200 ms of CPU", v, ok)
	}
	if newProcMeter(nil).ok {
		t.Fatal("a meter without processes is ok")
	}
}

// serverSplit adds up, over timed windows, the CPU of each kind of server
// process (by command name), to say where a benchmark's machine CPU went.
// A process that started in a window (a PostgreSQL backend for a new
// connection) counts whole; one that ended in it is left out.
type serverSplit struct {
	names []string
	t0    map[int]time.Duration
	by    map[string]time.Duration
}

func newServerSplit(names ...string) *serverSplit {
	return &serverSplit{names: names, by: map[string]time.Duration{}}
}

func (s *serverSplit) start() { s.t0 = procCPUEach(findProcesses(s.names...)) }

func (s *serverSplit) stop() {
	for _, name := range s.names {
		for pid, t := range procCPUEach(findProcesses(name)) {
			s.by[name] += t - s.t0[pid]
		}
	}
}

// total returns the CPU of every kind of server together.
func (s *serverSplit) total() time.Duration {
	var t time.Duration
	for _, d := range s.by {
		t += d
	}
	return t
}

// perEvent formats each server's CPU µs per event, "name N" pairs.
func (s *serverSplit) perEvent(events int) string {
	var b strings.Builder
	for _, name := range s.names {
		if events > 0 {
			fmt.Fprintf(&b, " %s %.0f", name, float64(s.by[name].Microseconds())/float64(events))
		}
	}
	return strings.TrimSpace(b.String())
}
