package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jitoutbox/jitoutbox/internal/testnats"
	"github.com/jitoutbox/jitoutbox/relay/natspub"
)

// broker is where the relays publish and where the run's consumer reads:
// NATS JetStream (one embedded server, or a three-node cluster), RabbitMQ
// or Kafka. Each run owns its broker, or at least everything it stops or
// cuts, so the shared servers are never stopped.
type broker interface {
	// name names the broker in the summary.
	name() string
	// natsURL is the NATS URL (or comma-separated URLs) the relays and the
	// test's wake notifier connect to, or "" when the broker is not NATS
	// (the run then starts an embedded NATS server for the wakes).
	natsURL() string
	// relayArgs are the relay's broker flags (-broker and what it needs).
	relayArgs() []string
	// consume starts a consumer that hands every delivery to rec, and
	// returns the function that stops it.
	consume(ctx context.Context, rec *recorder) (stop func(), err error)
	// outage makes the broker unavailable for about down and brings it
	// back (a restart, a node kill, cut connections) and says what it did.
	outage(ctx context.Context, t *testing.T, down time.Duration, rng *rand.Rand) string
	// stored returns how many messages the broker holds for the run; ok is
	// false when the broker cannot tell (a queue empties as it is
	// consumed).
	stored(ctx context.Context) (n uint64, ok bool, err error)
	// maxDuplicates bounds the duplicate deliveries of a run that did f
	// (the doc of each implementation says why).
	maxDuplicates(f faults) int
	// durable reports whether the relays' start-up durability check
	// (relay.Preflighter) must pass without a warning.
	durable() bool
}

// faults is what a run did to the relays and the broker, for the
// duplicate bound of brokers that do not drop duplicates.
type faults struct {
	kills, leaves, cuts, outages int
	relays, batch                int
	maxDown, publishTimeout      time.Duration
}

// dupBound bounds the duplicates a broker that does not deduplicate may
// hold. A relay has at most one batch published and not yet marked (the
// read lane publishes a batch, then marks it; the hand-over lane is idle,
// the producers run in the test process without a relay), so:
//   - a SIGKILLed or leaving relay's successor publishes at most that batch
//     again;
//   - a cut of the relays' database connections ends every relay's
//     ownership: each may leave one batch to be published again;
//   - an outage of at most maxDown loses at most the confirms of every
//     relay's batch attempts during it, one attempt per publish timeout
//     plus the one in flight when it began.
func dupBound(f faults) int {
	attempts := 1 + int(f.maxDown/f.publishTimeout)
	return f.batch * (f.kills + f.leaves + f.relays*f.cuts + f.relays*f.outages*attempts)
}

// delivery is one message as the consumer received it.
type delivery struct {
	id, agg string // the event id and aggregate id headers
	body    []byte
	// pos is the message's position in the broker (a stream sequence, a
	// partition and offset), to tell a consumer-side redelivery of one
	// stored message from a second stored copy; "" when the broker has no
	// stable position (a queue).
	pos string
}

// jetStream is one embedded NATS server with JetStream, owned by the run;
// its outage is a stop and a start on the same port and store.
type jetStream struct {
	srv    *testnats.Embedded
	stream jetstream.Stream
	prefix string
}

func newJetStream(t *testing.T) broker {
	srv := testnats.Server(t)
	js, err := jetstream.New(testnats.Connect(t, srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	stream, prefix := testnats.Stream(t, js)
	return &jetStream{srv: srv, stream: stream, prefix: prefix}
}

func (b *jetStream) name() string    { return "NATS JetStream (one embedded server)" }
func (b *jetStream) natsURL() string { return b.srv.URL }

func (b *jetStream) relayArgs() []string {
	return []string{"-publisher", "jetstream", "-subject-prefix", b.prefix}
}

func (b *jetStream) consume(ctx context.Context, rec *recorder) (func(), error) {
	return consumeStream(ctx, b.stream, rec)
}

func (b *jetStream) outage(ctx context.Context, t *testing.T, down time.Duration, _ *rand.Rand) string {
	brokerOutage(ctx, t, b.srv, down)
	return fmt.Sprintf("server stopped for %v", down.Round(time.Millisecond))
}

func (b *jetStream) stored(ctx context.Context) (uint64, bool, error) {
	return streamMsgs(ctx, b.stream)
}

// maxDuplicates: JetStream drops a re-published event (same Nats-Msg-Id)
// inside the stream's duplicate window (2 minutes here), and every
// re-publish in this harness happens within seconds (outages of at most
// 3 s), so the expected number is zero; anything else is a defect to
// explain.
func (b *jetStream) maxDuplicates(faults) int { return 0 }

// durable: one server acknowledges before fsync, so the relays rightly warn
// that the stream cannot guarantee at-least-once delivery through a crash
// of the machine (the run restarts the server cleanly).
func (b *jetStream) durable() bool { return false }

// consumeStream starts an ordered consumer on stream that hands every
// message to rec.
func consumeStream(ctx context.Context, stream jetstream.Stream, rec *recorder) (func(), error) {
	cons, err := stream.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{})
	if err != nil {
		return nil, fmt.Errorf("ordered consumer: %w", err)
	}
	cc, err := cons.Consume(func(m jetstream.Msg) {
		d := delivery{id: m.Headers().Get(natspub.HeaderEventID), agg: m.Headers().Get(natspub.HeaderAggregateID), body: m.Data()}
		if md, err := m.Metadata(); err == nil && md.Sequence.Stream != 0 {
			d.pos = strconv.FormatUint(md.Sequence.Stream, 10)
		}
		rec.record(d)
	})
	if err != nil {
		return nil, fmt.Errorf("consume: %w", err)
	}
	return cc.Stop, nil
}

// streamMsgs returns the number of messages in stream.
func streamMsgs(ctx context.Context, stream jetstream.Stream) (uint64, bool, error) {
	ictx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	info, err := stream.Info(ictx)
	if err != nil {
		return 0, false, fmt.Errorf("stream info: %w", err)
	}
	return info.State.Msgs, true, nil
}
