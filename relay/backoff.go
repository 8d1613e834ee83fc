package relay

import (
	"math/rand/v2"
	"time"
)

// backoffSchedule is DefaultBackoff's schedule before jitter; later attempts
// use the last entry.
var backoffSchedule = [...]time.Duration{
	1 * time.Second,
	5 * time.Second,
	30 * time.Second,
	2 * time.Minute,
	5 * time.Minute,
}

// DefaultBackoff is the default Config.Backoff: about 1s after the first
// failed attempt, 5s after the second, 30s, 2m, then 5m for every later one,
// each with ±20% jitter so that relays do not retry in lock-step.
func DefaultBackoff(attempt int) time.Duration {
	i := min(max(attempt, 1), len(backoffSchedule)) - 1
	return jitter(backoffSchedule[i])
}

// jitter returns d scaled by a random factor in [0.8, 1.2).
func jitter(d time.Duration) time.Duration {
	if d <= 0 {
		return d
	}
	return time.Duration(float64(d) * (0.8 + 0.4*rand.Float64()))
}

// minTroubleDelay is the first delay after a broker outage or database error;
// it doubles with every further troubled cycle, up to the poll interval (a
// broker outage: up to outageProbeMax, outage.go).
const minTroubleDelay = 100 * time.Millisecond

// nextTroubleDelay returns the delay after prev (0 for the first trouble),
// capped at limit.
func nextTroubleDelay(prev, limit time.Duration) time.Duration {
	d := minTroubleDelay
	if prev > 0 {
		d = prev * 2
	}
	return min(d, max(limit, minTroubleDelay))
}
