package rabbitpub_test

import (
	"context"
	"testing"

	"github.com/jitoutbox/jitoutbox/internal/pubtest"
	"github.com/jitoutbox/jitoutbox/relay"
	"github.com/jitoutbox/jitoutbox/relay/rabbitpub"
)

// TestEndToEndEveryDatabaseTwoRelays: on every database, two relays share
// the table and publish through rabbitpub; every committed event reaches the
// queue once, in per-aggregate order, and nothing more does.
func TestEndToEndEveryDatabaseTwoRelays(t *testing.T) {
	pubtest.EveryDatabase(t, 2, func(t *testing.T) pubtest.Broker {
		b := newBroker(t)
		x := b.exchange()
		q := b.queue(x, "order.#")
		return pubtest.Broker{
			Publisher: func(t *testing.T) relay.Publisher { return newPub(t, b.url, rabbitpub.WithExchange(x)) },
			Consume: func(t *testing.T, ctx context.Context, n int) []pubtest.Delivery {
				var out []pubtest.Delivery
				for _, m := range b.consume(q, n) {
					agg, _ := m.Headers[rabbitpub.HeaderAggregateID].(string)
					out = append(out, pubtest.Delivery{Aggregate: agg, Payload: string(m.Body), ID: m.MessageId})
				}
				if extra := b.depth(q); extra != 0 {
					t.Errorf("%d messages beyond the %d events", extra, n)
				}
				return out
			},
		}
	})
}
