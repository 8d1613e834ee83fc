//go:build !unix

package bench

import "time"

// machineBusy is not measured off Unix.
func machineBusy() (time.Duration, bool) { return 0, false }

// selfCPU is not measured off Unix.
func selfCPU() time.Duration { return 0 }
