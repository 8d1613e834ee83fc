package relay

import (
	"context"
	"errors"
	"time"
)

// Broker outages. A wave in which nothing was acknowledged and every
// message failed because the broker is unavailable (IsUnavailable) is an
// outage, whatever its size: no attempt is counted, the batch's unpublished
// rows stay pending, and the read lane probes the broker again after a
// back-off of 100ms doubling up to outageProbeMax, so that every pending
// row goes within about that long once the broker is back. In a wave that
// is not an outage (something acknowledged, or the broker refused a
// message for a reason of its own), the unavailable messages stay pending
// without an attempt too, and are tried again after outageProbeMax.
//
// A publisher that does not classify its errors may return a plain
// timeout (context.DeadlineExceeded) for a broker that does not answer.
// Such a wave is an outage when it held two or more messages, the relay is
// already in an outage, or the broker acknowledged nothing within the last
// two publish timeouts; a lone unclassified timeout while the broker
// acknowledges other events is an event the broker never answers (a
// poison event): its attempts count, so that it is dead-lettered after
// MaxAttempts. The publishers of this module wrap their timeouts as
// unavailable and never reach that rule.

// outageProbeMax caps the back-off between probes of an unavailable broker
// (or PollInterval, if smaller).
const outageProbeMax = time.Second

// outageLimit returns the cap of the outage back-off.
func (rn *run) outageLimit() time.Duration {
	return min(outageProbeMax, rn.r.cfg.PollInterval)
}

// isOutage (called with rn.mu held) reports whether a wave whose every
// message failed is a broker outage rather than trouble with these
// messages (see above).
func (rn *run) isOutage(errs []error) bool {
	timeouts := 0
	for _, err := range errs {
		switch {
		case err == nil || IsPermanent(err):
			return false
		case IsUnavailable(err):
		case errors.Is(err, context.DeadlineExceeded):
			timeouts++
		default:
			return false
		}
	}
	if timeouts == 0 {
		return true
	}
	return len(errs) >= 2 || rn.inOutage || !rn.ackedRecently()
}

// ackedRecently (called with rn.mu held) reports whether the broker
// acknowledged a message within the last two publish timeouts.
func (rn *run) ackedRecently() bool {
	return !rn.lastAckAt.IsZero() && rn.r.cfg.Clock().Sub(rn.lastAckAt) <= 2*rn.r.cfg.PublishTimeout
}

// outageWave (called with rn.mu held) records a wave that found the broker
// unavailable: the first one starts the outage and logs it; each one is a
// probe and lengthens the back-off.
func (rn *run) outageWave(ctx context.Context, err error) {
	if !rn.inOutage {
		rn.r.cfg.Logger.WarnContext(ctx, "jitoutbox relay: broker outage; events stay pending without spending attempts, probing",
			"owner", rn.r.cfg.Owner, "err", err)
		rn.inOutage = true
		rn.outageSince = rn.r.cfg.Clock()
		rn.outageProbes = 0
	}
	rn.outageProbes++
	rn.trouble = nextTroubleDelay(rn.trouble, rn.outageLimit())
}

// endOutage (called with rn.mu held) ends an outage: the broker answered.
func (rn *run) endOutage(ctx context.Context) {
	rn.r.cfg.Logger.InfoContext(ctx, "jitoutbox relay: broker recovered",
		"owner", rn.r.cfg.Owner, "outage", rn.r.cfg.Clock().Sub(rn.outageSince).Round(time.Millisecond),
		"probes", rn.outageProbes)
	rn.inOutage = false
}

// answered reports whether the broker answered in a wave: it acknowledged
// a message, or failed one for a reason other than its unavailability.
func answered(errs []error) bool {
	for _, err := range errs {
		if err == nil || !IsUnavailable(err) || IsPermanent(err) {
			return true
		}
	}
	return false
}

// deadLetterUnavailable (called with rn.mu held) records that the
// dead-letter publisher was unavailable for some dead events: they stay
// pending (nothing is written for them) and the relay backs off as in an
// outage, so that each is dead-lettered, with its copy, once the
// dead-letter destination is back. It logs when this starts.
func (rn *run) deadLetterUnavailable(ctx context.Context, err error) {
	if !rn.dlUnavailable {
		rn.r.cfg.Logger.WarnContext(ctx, "jitoutbox relay: dead-letter publisher unavailable; dead events stay pending until it is back",
			"owner", rn.r.cfg.Owner, "err", err)
		rn.dlUnavailable = true
	}
	rn.trouble = nextTroubleDelay(rn.trouble, rn.outageLimit())
}

// deadLetterAvailable (called with rn.mu held) notes a dead-letter publish
// that went through, logging the end of its unavailability.
func (rn *run) deadLetterAvailable(ctx context.Context) {
	if rn.dlUnavailable {
		rn.r.cfg.Logger.InfoContext(ctx, "jitoutbox relay: dead-letter publisher available again", "owner", rn.r.cfg.Owner)
		rn.dlUnavailable = false
	}
}
