package natspub

import (
	"context"
	"fmt"

	"github.com/nats-io/nats.go"

	"github.com/jitoutbox/jitoutbox/relay"
)

// Core publishes with core NATS.
//
// Core NATS is AT-MOST-ONCE. Publish sends every message of a batch and then
// flushes the connection once, so a message counts as delivered when the
// server has received it — not when any subscriber has. A subscriber that is
// not connected (or is too slow) misses the event for good, and the relay
// marks the event published all the same. Use [JetStream] when consumers must
// receive every event (at-least-once).
//
// A Core is safe for concurrent use.
type Core struct {
	nc   *nats.Conn
	opts *options
}

var _ relay.Publisher = (*Core)(nil)

// NewCore returns a core NATS publisher on nc. WithMaxPending and
// WithExpectStream do not apply to core NATS and make it fail.
func NewCore(nc *nats.Conn, opts ...Option) (*Core, error) {
	if nc == nil {
		return nil, fmt.Errorf("%w: nil *nats.Conn", ErrInvalidOption)
	}
	o, err := buildOptions(opts)
	if err != nil {
		return nil, err
	}
	if o.maxPendSet || o.expectStream != "" {
		return nil, fmt.Errorf("%w: WithMaxPending and WithExpectStream apply to JetStream only", ErrInvalidOption)
	}
	return &Core{nc: nc, opts: o}, nil
}

// Publish sends batch, then flushes once (bounded by ctx and the ack
// timeout). A message is recorded as delivered when the flush succeeded; on
// a flush error every sent message gets that (retryable) error.
func (c *Core) Publish(ctx context.Context, batch []relay.Message, errs []error) {
	if len(batch) == 0 {
		return
	}
	if err := ctx.Err(); err != nil {
		fill(errs, 0, fmt.Errorf("natspub: %w", err))
		return
	}
	if err := connError(c.nc); err != nil {
		fill(errs, 0, err)
		return
	}
	sent := make([]int, 0, len(batch))
	subjects := make([]string, len(batch))
	subs := subjectCache{opts: c.opts}
	for i := range batch {
		m := &batch[i]
		subject, err := subs.route(m)
		if err != nil {
			errs[i] = err
			continue
		}
		subjects[i] = subject
		if err := c.nc.PublishMsg(newMsg(subject, m, "", "", c.opts)); err != nil {
			errs[i] = publishError(m, subject, err)
			continue
		}
		sent = append(sent, i)
	}
	if len(sent) == 0 {
		return
	}
	fctx, cancel := context.WithTimeout(ctx, c.opts.ackTimeout)
	defer cancel()
	if err := c.nc.FlushWithContext(fctx); err != nil {
		if ctx.Err() == nil && fctx.Err() != nil {
			err = fmt.Errorf("%w: flush after %v: %w", ErrAckTimeout, c.opts.ackTimeout, err)
		}
		for _, i := range sent {
			errs[i] = publishError(&batch[i], subjects[i], err)
		}
	}
}
