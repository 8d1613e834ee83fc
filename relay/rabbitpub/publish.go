package rabbitpub

import (
	"context"
	"fmt"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/jitoutbox/jitoutbox/relay"
)

// inflight is a published message awaiting its confirm.
type inflight struct {
	i     int
	route Route
	dc    *amqp.DeferredConfirmation
}

// Publish publishes batch on the publisher's confirm-mode channel and
// records each message's outcome in errs. It returns when every message is
// confirmed, returned or failed, when the confirm timeout passes, or when
// ctx ends (recording ctx's error for every message not yet confirmed).
//
// A message the broker returns as unroutable gets a permanent error
// wrapping ErrUnroutable, and one published to a missing exchange a
// permanent error wrapping ErrExchangeNotFound; a lost connection gives
// every unconfirmed message an unavailable error (relay.IsUnavailable)
// wrapping ErrNotConnected, and the next Publish connects again.
func (p *Publisher) Publish(ctx context.Context, batch []relay.Message, errs []error) {
	if len(batch) == 0 {
		return
	}
	select {
	case p.turn <- struct{}{}:
	case <-ctx.Done():
		fill(errs, fmt.Errorf("rabbitpub: %w", ctx.Err()))
		return
	}
	defer func() { <-p.turn }()
	if err := ctx.Err(); err != nil {
		fill(errs, fmt.Errorf("rabbitpub: %w", err))
		return
	}
	s, err := p.session(ctx)
	if err != nil {
		fill(errs, classify(err))
		return
	}
	if err := s.blockedError(); err != nil {
		fill(errs, classify(err))
		return
	}
	wctx, cancel := context.WithTimeout(ctx, p.opts.confirmTimeout)
	defer cancel()
	// A publish is a socket write that ignores ctx: it blocks when the
	// broker stops reading (a resource alarm, a stalled network). If wctx
	// ends meanwhile, closing the connection's socket ends the write.
	guarded := make(chan struct{})
	stop := context.AfterFunc(wctx, func() {
		defer close(guarded)
		_ = s.conn.CloseDeadline(time.Now())
	})
	pending, ids := p.send(ctx, wctx, s, batch, errs)
	if !stop() {
		<-guarded
	}
	if !p.await(ctx, wctx, s, batch, errs, pending, ids) {
		p.discard(s)
	}
}

// send publishes the messages of batch in order, recording routing and
// publish errors in errs, and returns the published messages with the index
// of each by event id. wctx is ctx bounded by the confirm timeout. It stops
// at the first publish error: the channel is unusable then, and every
// message not sent yet gets that error.
func (p *Publisher) send(ctx, wctx context.Context, s *session, batch []relay.Message, errs []error) ([]inflight, map[string]int) {
	pending := make([]inflight, 0, len(batch))
	ids := make(map[string]int, len(batch))
	for i := range batch {
		m := &batch[i]
		r, err := p.opts.router(*m)
		if err != nil {
			errs[i] = msgError(m, r, err)
			continue
		}
		if err := validateRoute(r); err != nil {
			errs[i] = msgError(m, r, err)
			continue
		}
		pub, err := newPublishing(m, p.opts.ce)
		if err != nil {
			errs[i] = msgError(m, r, err)
			continue
		}
		dc, err := s.ch.PublishWithDeferredConfirmWithContext(wctx, r.Exchange, r.Key, p.opts.mandatory, false, pub)
		if err != nil {
			if wctx.Err() == nil {
				err = p.sendError(s, m, r, err)
			} else {
				err = waitError(ctx, m, r, p.opts.confirmTimeout)
			}
			errs[i] = err
			for j := i + 1; j < len(batch); j++ {
				if errs[j] == nil {
					errs[j] = fmt.Errorf("rabbitpub: publish event %s: not sent after an earlier failure: %w", batch[j].ID, err)
				}
			}
			break
		}
		if dc == nil {
			// Only when the channel is not in confirm mode, which
			// openSession makes sure it is.
			errs[i] = msgError(m, r, fmt.Errorf("%w: channel not in confirm mode", ErrChannelClosed))
			continue
		}
		pending = append(pending, inflight{i: i, route: r, dc: dc})
		ids[m.ID] = i
		// Take the returns that have arrived so far, so that the client
		// library never waits on a full buffer while we publish.
		s.drainReturns(batch, errs, ids)
	}
	return pending, ids
}

// sendError classifies a failed publish call: the channel or connection has
// closed (the usual cause), or the write failed.
func (p *Publisher) sendError(s *session, m *relay.Message, r Route, err error) error {
	if s.ch.IsClosed() || s.conn.IsClosed() {
		return closedError(m, r, s.conn.IsClosed(), s.closeCause())
	}
	return msgError(m, r, fmt.Errorf("%w: %w", ErrNotConnected, err))
}

// await waits for the confirms of pending in publish order, reading the
// returns as they come. RabbitMQ sends a message's basic.return before its
// basic.ack on the channel and the client library delivers them in that
// order, so a return is in s.returns by the time its confirm is done. It
// reports false when it stopped with messages unconfirmed (ctx ended or the
// confirm timeout passed): the session must then be discarded.
func (p *Publisher) await(ctx, wctx context.Context, s *session, batch []relay.Message, errs []error, pending []inflight, ids map[string]int) bool {
	returns := s.returns
	for k, f := range pending {
		for waiting := true; waiting; {
			select {
			case ret, ok := <-returns:
				if !ok {
					returns = nil // the channel closed; confirms end too
					continue
				}
				s.onReturn(&ret, batch, errs, ids)
			case <-f.dc.Done():
				waiting = false
			case <-wctx.Done():
				for _, g := range pending[k:] {
					if errs[g.i] == nil && !g.dc.Acked() {
						errs[g.i] = waitError(ctx, &batch[g.i], g.route, p.opts.confirmTimeout)
					}
				}
				return false
			}
		}
		s.drainReturns(batch, errs, ids)
		if errs[f.i] != nil || f.dc.Acked() {
			continue // returned (permanent) or confirmed
		}
		m := &batch[f.i]
		if s.ch.IsClosed() || s.conn.IsClosed() {
			errs[f.i] = closedError(m, f.route, s.conn.IsClosed(), s.closeCause())
			continue
		}
		errs[f.i] = msgError(m, f.route, ErrNacked)
	}
	return true
}

// drainReturns records the returns already delivered, without waiting.
func (s *session) drainReturns(batch []relay.Message, errs []error, ids map[string]int) {
	for {
		select {
		case ret, ok := <-s.returns:
			if !ok {
				return
			}
			s.onReturn(&ret, batch, errs, ids)
		default:
			return
		}
	}
}

// onReturn records a returned message's permanent error. A return whose
// message id is not in the batch (none is expected) is ignored.
func (s *session) onReturn(ret *amqp.Return, batch []relay.Message, errs []error, ids map[string]int) {
	i, ok := ids[ret.MessageId]
	if !ok {
		return
	}
	errs[i] = returnError(&batch[i], ret)
}
