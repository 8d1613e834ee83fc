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
