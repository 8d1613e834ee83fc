//go:build unix

package bench

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
	"time"
)

// clockTicks is USER_HZ, the unit of /proc/stat: 100 on every Linux
// architecture Go supports.
const clockTicks = 100

// machineBusy returns the machine's busy CPU time since boot (Linux; false
// where there is no /proc/stat): all of
// /proc/stat's cpu line but idle and iowait.
func machineBusy() (time.Duration, bool) {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, false
	}
	line, _, _ := bytes.Cut(data, []byte{'\n'})
	fields := bytes.Fields(line)
	if len(fields) < 6 || string(fields[0]) != "cpu" {
		return 0, false
	}
	var busy int64
	// user nice system idle iowait irq softirq steal (guest is already in user)
	for i, f := range fields[1:] {
		if i >= 8 {
			break
		}
		v, err := strconv.ParseInt(string(f), 10, 64)
		if err != nil {
			return 0, false
		}
		if i == 3 || i == 4 {
			continue
		}
		busy += v
	}
	return time.Duration(busy) * time.Second / clockTicks, true
}

// selfCPU returns this process's user and system CPU time.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// selfSwitches returns the context switches of this process's threads,
// voluntary (a thread sleeping until woken) and not.
func selfSwitches() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return int64(ru.Nvcsw + ru.Nivcsw)
}

// procCPU returns the user and system CPU time of the processes pids
// (Linux /proc/<pid>/stat; false when one cannot be read).
func procCPU(pids []int) (time.Duration, bool) {
	var ticks int64
	for _, pid := range pids {
		data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return 0, false
		}
		// The command is in parentheses and may hold spaces: fields start
		// after the last ')'. utime and stime are fields 14 and 15.
		i := bytes.LastIndexByte(data, ')')
		if i < 0 {
			return 0, false
		}
		f := bytes.Fields(data[i+1:])
		if len(f) < 13 {
			return 0, false
		}
		for _, s := range f[11:13] {
			v, err := strconv.ParseInt(string(s), 10, 64)
			if err != nil {
				return 0, false
			}
			ticks += v
		}
	}
	return time.Duration(ticks) * time.Second / clockTicks, true
}

// findProcesses returns the pids of the processes whose command name is
// one of names (/proc/<pid>/comm).
func findProcesses(names ...string) []int {
	dirs, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		comm, err := os.ReadFile("/proc/" + d.Name() + "/comm")
		if err != nil {
			continue
		}
		name := string(bytes.TrimSpace(comm))
		for _, n := range names {
			if name == n {
				pids = append(pids, pid)
			}
		}
	}
	return pids
}

// procCPUEach returns the CPU time of each of pids that can be read.
func procCPUEach(pids []int) map[int]time.Duration {
	out := make(map[int]time.Duration, len(pids))
	for _, pid := range pids {
		if t, ok := procCPU([]int{pid}); ok {
			out[pid] = t
		}
	}
	return out
}
