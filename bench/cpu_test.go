package bench

import (
	"os"
	"runtime"
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

	t0           time.Time
	busy0, self0 time.Duration
	ok           bool
}

// start opens a window.
func (m *cpuMeter) start() {
	m.t0 = time.Now()
	m.busy0, m.ok = machineBusy()
	m.self0 = selfCPU()
}

// stop closes the window opened by start; events were handled in it.
func (m *cpuMeter) stop(events int) {
	busy, ok := machineBusy()
	m.ok = m.ok && ok
	m.wall += time.Since(m.t0)
	m.busy += busy - m.busy0
	m.self += selfCPU() - m.self0
	m.events += events
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
// windows).
func (m *cpuMeter) report(b *testing.B, prefix, unit string) {
	busy, ok := m.perEvent()
	if !ok || m.wall <= 0 {
		return
	}
	b.ReportMetric(busy, prefix+"cpu-µs/"+unit)
	b.ReportMetric(float64(m.self.Microseconds())/float64(m.events), prefix+"self-cpu-µs/"+unit)
	b.ReportMetric(m.busy.Seconds()/(m.wall.Seconds()*float64(runtime.NumCPU())), prefix+"cpu-busy")
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
