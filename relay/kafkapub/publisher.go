package kafkapub

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/jitoutbox/jitoutbox/relay"
)

// Publisher produces outbox events to Kafka with a franz-go client, at least
// once: a record counts as delivered when the partition leader has
// acknowledged it with acks=all (every in-sync replica has it).
//
// The client must be an idempotent producer with acks=all, as a kgo.Client
// is by default: New refuses a client built with kgo.DisableIdempotentWrite,
// with acks other than kgo.AllISRAcks, or with a transactional id. The
// idempotent producer keeps the records of one partition in order across
// the client's internal retries, and the record key (the aggregate id) puts
// the events of one aggregate in one partition.
//
// A Publisher is safe for concurrent use.
type Publisher struct {
	cl         *kgo.Client
	owned      bool
	autoCreate bool
	opts       *options
}

var _ relay.Publisher = (*Publisher)(nil)

// New returns a publisher that produces through cl, which the caller keeps
// and closes. WithClientOptions does not apply and makes it fail.
func New(cl *kgo.Client, opts ...Option) (*Publisher, error) {
	if cl == nil {
		return nil, fmt.Errorf("%w: nil *kgo.Client", ErrInvalidOption)
	}
	o, err := buildOptions(opts)
	if err != nil {
		return nil, err
	}
	if len(o.clientOpts) > 0 {
		return nil, fmt.Errorf("%w: WithClientOptions applies to Open only", ErrInvalidOption)
	}
	return newPublisher(cl, false, o)
}

// Open builds a client for the seed brokers (host:port) with
// kgo.MetadataMinAge(OutageMetadataMinAge) and a retry back-off capped at
// OutageRetryBackoffMax (kgo.RetryBackoffFn), then the options of
// WithClientOptions, then kgo.RequiredAcks(kgo.AllISRAcks()); idempotent
// writes are on, as they are by default. The client connects lazily: Open
// does no I/O, and an unreachable cluster shows as unavailable errors from
// Publish. Close closes the client.
func Open(seeds []string, opts ...Option) (*Publisher, error) {
	if len(seeds) == 0 {
		return nil, fmt.Errorf("%w: no seed brokers", ErrInvalidOption)
	}
	o, err := buildOptions(opts)
	if err != nil {
		return nil, err
	}
	kopts := make([]kgo.Opt, 0, len(o.clientOpts)+3)
	kopts = append(kopts, kgo.SeedBrokers(seeds...), kgo.MetadataMinAge(OutageMetadataMinAge), kgo.RetryBackoffFn(outageRetryBackoff))
	kopts = append(kopts, o.clientOpts...)
	kopts = append(kopts, kgo.RequiredAcks(kgo.AllISRAcks()))
	cl, err := kgo.NewClient(kopts...)
	if err != nil {
		return nil, fmt.Errorf("%w: kafka client: %w", ErrInvalidOption, err)
	}
	p, err := newPublisher(cl, true, o)
	if err != nil {
		cl.Close()
		return nil, err
	}
	return p, nil
}

// OutageMetadataMinAge is the minimum time between the metadata loads of a
// client Open builds (kgo.MetadataMinAge; franz-go's default is 5s). After
// a broker outage the client produces again only once it has loaded the
// metadata anew, so the default would hold the relay's first probe after
// the cluster is back for up to 5s; a client given to New should set it
// likewise. A later kgo.MetadataMinAge in WithClientOptions overrides it.
const OutageMetadataMinAge = 500 * time.Millisecond

// OutageRetryBackoffMax caps the back-off between a client's retries of a
// failed request (kgo.RetryBackoffFn) in a client Open builds: from 250ms
// it doubles up to this, with ±20% jitter. franz-go's default grows to 5s,
// so that after an outage of a minute the first produce that could succeed
// waited up to 5s more; the relay probes an unavailable broker every second
// at most, and the client should not lag behind it. A later
// kgo.RetryBackoffFn in WithClientOptions overrides it.
const OutageRetryBackoffMax = 500 * time.Millisecond

// outageRetryBackoff is the RetryBackoffFn Open sets (see
// OutageRetryBackoffMax).
func outageRetryBackoff(fails int) time.Duration {
	d := 250 * time.Millisecond
	for i := 1; i < fails && d < OutageRetryBackoffMax; i++ {
		d *= 2
	}
	d = min(d, OutageRetryBackoffMax)
	return time.Duration(float64(d) * (0.8 + 0.4*rand.Float64()))
}

func newPublisher(cl *kgo.Client, owned bool, o *options) (*Publisher, error) {
	if acks, _ := cl.OptValue(kgo.RequiredAcks).(kgo.Acks); acks != kgo.AllISRAcks() {
		return nil, fmt.Errorf("%w: the client must require acknowledgement by all in-sync replicas: build it with kgo.RequiredAcks(kgo.AllISRAcks())", ErrInvalidOption)
	}
	if off, _ := cl.OptValue(kgo.DisableIdempotentWrite).(bool); off {
		return nil, fmt.Errorf("%w: the client must be an idempotent producer: drop kgo.DisableIdempotentWrite", ErrInvalidOption)
	}
	if v := cl.OptValues(kgo.TransactionalID); len(v) == 2 && v[1] == true {
		return nil, fmt.Errorf("%w: the client must not be transactional: drop kgo.TransactionalID", ErrInvalidOption)
	}
	autoCreate, _ := cl.OptValue(kgo.AllowAutoTopicCreation).(bool)
	return &Publisher{cl: cl, owned: owned, autoCreate: autoCreate, opts: o}, nil
}

// Close closes the client if Open built it, after the records it buffers
// are produced or failed; it does nothing for a client given to New.
func (p *Publisher) Close() {
	if p.owned {
		p.cl.Close()
	}
}

// Publish produces batch and records each message's outcome in errs. It
// returns when every record is acknowledged or failed, when the ack timeout
// expires (recording a retryable error wrapping [ErrAckTimeout] for the
// records not confirmed) or when ctx ends (recording ctx's error for them).
//
// A record that Publish stopped waiting for may still be in flight: the
// idempotent producer does not give up a record it has sent. If it lands
// after all, the relay's retry produces a second copy of that event;
// consumers that must process each event once deduplicate with [EventID].
//
// The broker answers for a whole batch of one partition, so a record too
// large for the topic (or one the broker finds invalid) fails every record
// it shares a produce batch with. When several records fail that way,
// Publish produces each of them again on its own, one after the other, and
// records those outcomes: only the offending record stays permanent.
func (p *Publisher) Publish(ctx context.Context, batch []relay.Message, errs []error) {
	if len(batch) == 0 {
		return
	}
	if err := ctx.Err(); err != nil {
		fill(errs, fmt.Errorf("kafkapub: %w", err))
		return
	}
	// The records' context: when it ends, the client drops those records
	// it has not sent yet.
	pctx, cancel := context.WithTimeout(ctx, p.opts.ackTimeout)
	defer cancel()
	topics := make([]string, len(batch))
	send := make([]int, 0, len(batch))
	routes := topicCache{opts: p.opts}
	for i := range batch {
		topic, err := routes.route(&batch[i])
		if err != nil {
			errs[i] = err
			continue
		}
		topics[i] = topic
		send = append(send, i)
	}
	if !p.produce(ctx, pctx, batch, errs, topics, send) {
		return
	}
	var suspects []int
	for _, i := range send {
		if sharedFailure(errs[i]) {
			suspects = append(suspects, i)
		}
	}
	if len(suspects) < 2 {
		return // a lone failure was its own
	}
	for k, i := range suspects {
		errs[i] = nil
		if !p.produce(ctx, pctx, batch, errs, topics, []int{i}) {
			cause := p.timeoutCause(ctx, pctx, pctx.Err())
			for _, j := range suspects[k+1:] {
				errs[j] = p.produceError(&batch[j], topics[j], cause)
			}
			return
		}
	}
}

// sharedFailure reports errors the broker gives every record of a produce
// batch for the fault of one of them.
func sharedFailure(err error) bool {
	return errors.Is(err, kerr.MessageTooLarge) || errors.Is(err, kerr.InvalidRecord)
}

// result is the outcome of one record.
type result struct {
	i   int
	err error
}

// produce produces batch[i] to topics[i] for each i of send and records the
// outcomes in errs. It reports false when pctx ended first, having recorded
// a retryable error for every record not confirmed.
func (p *Publisher) produce(ctx, pctx context.Context, batch []relay.Message, errs []error, topics []string, send []int) bool {
	// Room for every promise, so that a promise never blocks the client,
	// even one that fires after Publish has returned.
	done := make(chan result, len(send))
	pending := make(map[int]bool, len(send))
	for _, i := range send {
		pending[i] = true
		p.cl.Produce(pctx, newRecord(topics[i], &batch[i], p.opts), func(_ *kgo.Record, err error) {
			done <- result{i: i, err: err}
		})
	}
	record := func(r result) {
		delete(pending, r.i)
		if r.err != nil {
			errs[r.i] = p.produceError(&batch[r.i], topics[r.i], p.timeoutCause(ctx, pctx, r.err))
		}
	}
	for len(pending) > 0 {
		select {
		case r := <-done:
			record(r)
		case <-pctx.Done():
			for drained := false; !drained && len(pending) > 0; {
				select {
				case r := <-done:
					record(r)
				default:
					drained = true
				}
			}
			cause := p.timeoutCause(ctx, pctx, pctx.Err())
			for i := range pending {
				errs[i] = p.produceError(&batch[i], topics[i], cause)
			}
			return false
		}
	}
	return true
}

// timeoutCause returns ErrAckTimeout in place of err when err is the end of
// pctx, the ack timeout, and not of ctx, the caller's context.
func (p *Publisher) timeoutCause(ctx, pctx context.Context, err error) error {
	if ctx.Err() == nil && pctx.Err() != nil && errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w after %v", ErrAckTimeout, p.opts.ackTimeout)
	}
	return err
}
