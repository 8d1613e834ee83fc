// Package broker is the relay's publisher stage: it puts each wave of
// messages in the broker's hands and owns what the relay knows of the
// broker.
//
// A Stage publishes a wave whole when it is time-critical, or in the
// chunks a priority gate allows when it is bulk (relay/internal/priority),
// and reads the broker's answer: whether the wave found the broker
// unavailable (an outage, which spends no attempt), when the broker last
// acknowledged a message, and whether an outage in progress has ended. It
// logs an outage once when it starts and once when it ends, and the
// unavailability of the dead-letter destination likewise.
//
// Outages. A wave in which nothing was acknowledged and every message
// failed because the broker is unavailable is an outage, whatever its
// size. A publisher that does not classify its errors may return a plain
// timeout (context.DeadlineExceeded) for a broker that does not answer:
// such a wave is an outage when it held two or more messages, the broker
// is already in an outage, or it acknowledged nothing within the last two
// publish timeouts; a lone unclassified timeout while the broker
// acknowledges other events is an event the broker never answers (a
// poison event): its attempts count, so that it is dead-lettered in the
// end. The publishers of this module wrap their timeouts as unavailable
// and never reach that rule.
//
// The lanes of a run share one Stage; its state is behind its own lock,
// a leaf that calls nothing but the logger.
package broker

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/jitoutbox/jitoutbox/relay/internal/priority"
)

// Config wires a Stage. Every field is required.
type Config[M any] struct {
	// Publish is the broker's publisher: it records the outcome of
	// msgs[i] in errs[i] (nil: acknowledged), as relay.Publisher does.
	Publish func(ctx context.Context, msgs []M, errs []error)
	// Gate is shared by every stage publishing through the same
	// publisher (a relay's lanes, a fleet's tables).
	Gate *priority.Gate
	// Clock is the relay's clock (Config.Clock).
	Clock func() time.Time
	// PublishTimeout bounds a Publish call (Config.PublishTimeout).
	PublishTimeout time.Duration
	// Logger and Owner: where and as whom the stage logs.
	Logger *slog.Logger
	Owner  string
	// Unavailable and Permanent classify publish errors
	// (relay.IsUnavailable, relay.IsPermanent; Permanent wins).
	Unavailable, Permanent func(error) bool
}

// Stage publishes waves and keeps the broker's state. Make it with New.
type Stage[M any] struct {
	cfg Config[M]

	mu       sync.Mutex
	inOutage bool
	since    time.Time // when the outage in progress started
	probes   int       // waves of the outage in progress
	lastAck  time.Time // when the broker last acknowledged a message
	dlDown   bool      // the dead-letter destination was unavailable
}

// New returns a stage.
func New[M any](cfg Config[M]) *Stage[M] {
	return &Stage[M]{cfg: cfg}
}

// Answer is what a wave's publish says about the broker.
type Answer struct {
	// AckAt is when the publish returned (the relay's clock).
	AckAt time.Time
	// Outage: nothing was acknowledged and the wave found the broker
	// unavailable (see the package doc). The caller leaves the wave's rows
	// pending, without an attempt, and backs off.
	Outage bool
	// Stopping: ctx had ended when the publish returned; the caller
	// leaves the rows it could not confirm pending.
	Stopping bool
}

// Wave publishes msgs, recording each outcome in errs (len(msgs), zeroed),
// and reads the answer. ctx is the run's (its end means the relay stops);
// pctx bounds the publish (it is not cut by the stop: the broker may
// already hold the messages). A critical wave goes whole and tells the
// gate; a bulk wave goes in the chunks the gate allows, one after the
// other. After a chunk the broker refused whole as unavailable, or once
// pctx ends, the rest of the wave is not sent and gets that chunk's error,
// so that the wave reads as the outage (or the stop) it is.
func (s *Stage[M]) Wave(ctx, pctx context.Context, msgs []M, errs []error, critical bool) Answer {
	s.publish(pctx, msgs, errs, critical)
	a := Answer{AckAt: s.cfg.Clock(), Stopping: ctx.Err() != nil}
	acked := slices.Contains(errs, nil)
	s.mu.Lock()
	defer s.mu.Unlock()
	if !acked && !a.Stopping && s.isOutage(errs) {
		if !s.inOutage {
			s.cfg.Logger.WarnContext(ctx, "jitoutbox relay: broker outage; events stay pending without spending attempts, probing",
				"owner", s.cfg.Owner, "err", errs[0])
			s.inOutage = true
			s.since = a.AckAt
			s.probes = 0
		}
		s.probes++
		a.Outage = true
		return a
	}
	if acked {
		s.lastAck = a.AckAt
	}
	if s.inOutage && !a.Stopping && s.answered(errs) {
		s.cfg.Logger.InfoContext(ctx, "jitoutbox relay: broker recovered",
			"owner", s.cfg.Owner, "outage", a.AckAt.Sub(s.since).Round(time.Millisecond), "probes", s.probes)
		s.inOutage = false
	}
	return a
}

// publish puts a wave in the broker's hands (see Wave).
func (s *Stage[M]) publish(ctx context.Context, msgs []M, errs []error, critical bool) {
	g := s.cfg.Gate
	if critical {
		g.Critical(time.Now())
		s.cfg.Publish(ctx, msgs, errs)
		return
	}
	for off := 0; off < len(msgs); {
		start := time.Now()
		n := g.Chunk(start, len(msgs)-off)
		cerrs := errs[off : off+n]
		s.cfg.Publish(ctx, msgs[off:off+n], cerrs)
		g.Observe(n, time.Since(start))
		off += n
		if off == len(msgs) {
			return
		}
		var stop error
		if err := ctx.Err(); err != nil {
			stop = err
		} else if !slices.ContainsFunc(cerrs, func(err error) bool { return !s.cfg.Unavailable(err) }) {
			stop = cerrs[0]
		}
		if stop != nil {
			for i := off; i < len(errs); i++ {
				errs[i] = stop
			}
			return
		}
	}
}

// isOutage (called with mu held) reports whether a wave whose every
// message failed is a broker outage rather than trouble with these
// messages (see the package doc).
func (s *Stage[M]) isOutage(errs []error) bool {
	timeouts := 0
	for _, err := range errs {
		switch {
		case err == nil || s.cfg.Permanent(err):
			return false
		case s.cfg.Unavailable(err):
		case errors.Is(err, context.DeadlineExceeded):
			timeouts++
		default:
			return false
		}
	}
	if timeouts == 0 {
		return true
	}
	recent := !s.lastAck.IsZero() && s.cfg.Clock().Sub(s.lastAck) <= 2*s.cfg.PublishTimeout
	return len(errs) >= 2 || s.inOutage || !recent
}

// answered reports whether the broker answered in a wave: it acknowledged
// a message, or failed one for a reason other than its unavailability.
func (s *Stage[M]) answered(errs []error) bool {
	for _, err := range errs {
		if err == nil || !s.cfg.Unavailable(err) || s.cfg.Permanent(err) {
			return true
		}
	}
	return false
}

// InOutage reports whether the broker is in an outage: the hand-over lane
// leaves its rows to the read lane, which backs off and probes.
func (s *Stage[M]) InOutage() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inOutage
}

// DeadLetter records the outcome of a dead-letter publish: err is nil
// when the destination took the events, else the error of one it could
// not take because it was unavailable. It logs when the unavailability
// starts and when it ends.
func (s *Stage[M]) DeadLetter(ctx context.Context, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case err != nil && !s.dlDown:
		s.cfg.Logger.WarnContext(ctx, "jitoutbox relay: dead-letter publisher unavailable; dead events stay pending until it is back",
			"owner", s.cfg.Owner, "err", err)
		s.dlDown = true
	case err == nil && s.dlDown:
		s.cfg.Logger.InfoContext(ctx, "jitoutbox relay: dead-letter publisher available again", "owner", s.cfg.Owner)
		s.dlDown = false
	}
}
