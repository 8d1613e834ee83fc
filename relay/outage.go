package relay

import "time"

// Broker outages. The broker stage (relay/internal/broker) tells a wave
// that found the broker unavailable (an outage, whatever the wave's size)
// from trouble with its messages, and logs the outage once when it starts
// and once when it ends. An outage spends no attempt: the batch's
// unpublished rows stay pending, and the read lane probes the broker
// again after a back-off of 100ms doubling up to outageProbeMax, so that
// every pending row goes within about that long once the broker is back.
// In a wave that is not an outage (something acknowledged, or the broker
// refused a message for a reason of its own), the unavailable messages
// stay pending without an attempt too, and are tried again after
// outageProbeMax. A dead-letter destination that is unavailable backs off
// the same way: its dead events stay pending until it is back.

// outageProbeMax caps the back-off between probes of an unavailable broker
// (or PollInterval, if smaller).
const outageProbeMax = time.Second

// outageLimit returns the cap of the outage back-off.
func (rn *run) outageLimit() time.Duration {
	return min(outageProbeMax, rn.r.cfg.PollInterval)
}

// backOff lengthens the back-off after a wave that found the broker (or
// the dead-letter destination) unavailable: each such wave is a probe.
func (rn *run) backOff() {
	rn.mu.Lock()
	defer rn.mu.Unlock()
	rn.trouble = nextTroubleDelay(rn.trouble, rn.outageLimit())
}
