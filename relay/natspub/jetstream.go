package natspub

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jitoutbox/jitoutbox/relay"
)

// JetStream publishes to JetStream streams, at least once: a message counts
// as delivered when the stream has acknowledged it (a duplicate
// acknowledgement included, see below).
//
// Messages are pipelined: up to WithMaxPending of them await their
// acknowledgement at once. Each carries Nats-Msg-Id = event id, so the stream
// drops a message the relay publishes again inside the stream's duplicate
// window (default 2 minutes) and acknowledges it with Duplicate set, which
// counts as delivered.
//
// Give jetstream.New a jetstream.WithPublishAsyncTimeout: when Publish stops
// waiting (ack timeout or context end) the library still tracks the message
// until its acknowledgement arrives, the connection reconnects, or that
// timeout fires.
//
// A JetStream is safe for concurrent use.
type JetStream struct {
	js   jetstream.JetStream
	opts *options
}

var _ relay.Publisher = (*JetStream)(nil)

// NewJetStream returns a publisher that publishes through js.
func NewJetStream(js jetstream.JetStream, opts ...Option) (*JetStream, error) {
	if js == nil {
		return nil, fmt.Errorf("%w: nil jetstream.JetStream", ErrInvalidOption)
	}
	o, err := buildOptions(opts)
	if err != nil {
		return nil, err
	}
	return &JetStream{js: js, opts: o}, nil
}

// inflight is a message awaiting its acknowledgement.
type inflight struct {
	i        int
	paf      jetstream.PubAckFuture
	subject  string
	deadline time.Time
}

// Publish publishes batch and records each message's outcome in errs. It
// returns when every message is acknowledged, failed or timed out, or when
// ctx ends (recording ctx's error for every message not yet confirmed).
func (p *JetStream) Publish(ctx context.Context, batch []relay.Message, errs []error) {
	if len(batch) == 0 {
		return
	}
	if err := ctx.Err(); err != nil {
		fill(errs, 0, fmt.Errorf("natspub: %w", err))
		return
	}
	nc := p.js.Conn()
	if err := connError(nc); err != nil {
		fill(errs, 0, err)
		return
	}
	if len(batch) == 1 {
		// The time-critical path often carries one event: a synchronous
		// publish skips the async machinery (future, flusher hand-off).
		errs[0] = p.publishOne(ctx, &batch[0])
		return
	}
	// failFast, once set (connection lost, an acknowledgement timed out),
	// is recorded for every message not sent yet.
	var failFast error
	window := min(p.opts.maxPending, len(batch))
	queue := make([]inflight, 0, window)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	// One option slice for the whole batch; the message id and the
	// expected stream travel as headers (newMsg).
	pubOpts := []jetstream.PublishOpt{jetstream.WithStallWait(p.opts.ackTimeout)}
	subs := subjectCache{opts: p.opts}

	for i := range batch {
		for len(queue) >= window {
			ok, timedOut := p.await(ctx, timer, queue[0], batch, errs)
			if !ok {
				p.abort(ctx, queue[1:], batch, errs, i)
				return
			}
			if timedOut && failFast == nil {
				failFast = errs[queue[0].i]
			}
			queue = queue[1:]
		}
		if ctx.Err() != nil {
			p.abort(ctx, queue, batch, errs, i)
			return
		}
		m := &batch[i]
		if failFast != nil {
			errs[i] = fmt.Errorf("natspub: event %s not sent: %w", m.ID, failFast)
			continue
		}
		if err := connError(nc); err != nil {
			// Do not fill the reconnect buffer with messages that would
			// only time out; the relay retries them.
			failFast = err
			errs[i] = err
			continue
		}
		subject, err := subs.route(m)
		if err != nil {
			errs[i] = err
			continue
		}
		paf, err := p.js.PublishMsgAsync(newMsg(subject, m, m.ID, p.opts.expectStream, p.opts), pubOpts...)
		if err != nil {
			errs[i] = publishError(m, subject, err)
			continue
		}
		queue = append(queue, inflight{i: i, paf: paf, subject: subject, deadline: time.Now().Add(p.opts.ackTimeout)})
	}
	for len(queue) > 0 {
		if ok, _ := p.await(ctx, timer, queue[0], batch, errs); !ok {
			p.abort(ctx, queue[1:], batch, errs, len(batch))
			return
		}
		queue = queue[1:]
	}
}

// publishOne publishes m and waits for its acknowledgement, bounded by the
// ack timeout.
func (p *JetStream) publishOne(ctx context.Context, m *relay.Message) error {
	subject, err := route(p.opts.router, m)
	if err != nil {
		return err
	}
	actx, cancel := context.WithTimeout(ctx, p.opts.ackTimeout)
	defer cancel()
	if _, err := p.js.PublishMsg(actx, newMsg(subject, m, m.ID, p.opts.expectStream, p.opts)); err != nil {
		if ctx.Err() == nil && actx.Err() != nil {
			err = fmt.Errorf("%w after %v", ErrAckTimeout, p.opts.ackTimeout)
		}
		return publishError(m, subject, err)
	}
	return nil
}

// await waits for f's outcome and records it. It reports ok false when ctx
// ended first (having recorded ctx's error for f), timedOut when f's ack
// timeout expired.
func (p *JetStream) await(ctx context.Context, timer *time.Timer, f inflight, batch []relay.Message, errs []error) (ok, timedOut bool) {
	m := &batch[f.i]
	timer.Reset(time.Until(f.deadline))
	select {
	case <-f.paf.Ok():
		errs[f.i] = nil
	case err := <-f.paf.Err():
		errs[f.i] = publishError(m, f.subject, err)
	case <-timer.C:
		errs[f.i] = publishError(m, f.subject, fmt.Errorf("%w after %v", ErrAckTimeout, p.opts.ackTimeout))
		return true, true
	case <-ctx.Done():
		if !resolved(f, m, errs) {
			errs[f.i] = publishError(m, f.subject, ctx.Err())
		}
		return false, false
	}
	return true, false
}

// abort records the outcome of messages already resolved in queue, ctx's
// error for the others and for batch[next:].
func (p *JetStream) abort(ctx context.Context, queue []inflight, batch []relay.Message, errs []error, next int) {
	cause := ctx.Err()
	if cause == nil {
		cause = context.Canceled
	}
	for _, f := range queue {
		if !resolved(f, &batch[f.i], errs) {
			errs[f.i] = publishError(&batch[f.i], f.subject, cause)
		}
	}
	for i := next; i < len(batch); i++ {
		errs[i] = fmt.Errorf("natspub: event %s not published: %w", batch[i].ID, cause)
	}
}

// resolved records f's outcome if it is already known, without waiting.
func resolved(f inflight, m *relay.Message, errs []error) bool {
	select {
	case <-f.paf.Ok():
		errs[f.i] = nil
		return true
	case err := <-f.paf.Err():
		errs[f.i] = publishError(m, f.subject, err)
		return true
	default:
		return false
	}
}

// subjectCache routes the messages of one Publish call. With the default
// router (DefaultRouter, or AggregateTypeRouter with Debezium) it remembers the subject of each (aggregate type, event type) pair, the
// only fields that router reads: a batch usually holds few pairs, and
// building and validating a subject is most of a message's routing cost.
// A custom router is called for every message.
type subjectCache struct {
	opts *options
	seen map[[2]string]string
}

// route returns m's subject as route does, from the cache when it can.
func (s *subjectCache) route(m *relay.Message) (string, error) {
	if !s.opts.defaultRouter {
		return route(s.opts.router, m)
	}
	k := [2]string{m.AggregateType, m.EventType}
	if subject, ok := s.seen[k]; ok {
		return subject, nil
	}
	subject, err := route(s.opts.router, m)
	if err != nil {
		return "", err
	}
	if s.seen == nil {
		s.seen = make(map[[2]string]string)
	}
	s.seen[k] = subject
	return subject, nil
}

// route returns m's validated subject, or the error to record for m.
func route(r Router, m *relay.Message) (string, error) {
	subject, err := r(*m)
	if err != nil {
		return "", fmt.Errorf("natspub: route event %s: %w", m.ID, err)
	}
	if err := ValidateSubject(subject); err != nil {
		return "", relay.Permanent(fmt.Errorf("natspub: route event %s: %w", m.ID, err))
	}
	return subject, nil
}
