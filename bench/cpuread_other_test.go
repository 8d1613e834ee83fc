//go:build !unix

package bench

import "time"

// machineBusy is not measured off Unix.
func machineBusy() (time.Duration, bool) { return 0, false }

// selfCPU is not measured off Unix.
func selfCPU() time.Duration { return 0 }

// selfSwitches is not measured off Unix.
func selfSwitches() int64 { return 0 }

// procCPU is not measured off Unix.
func procCPU([]int) (time.Duration, bool) { return 0, false }

// findProcesses finds nothing off Unix.
func findProcesses(...string) []int { return nil }

// procCPUEach reads nothing off Unix.
func procCPUEach([]int) map[int]time.Duration { return nil }
