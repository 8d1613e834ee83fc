package kafkapub_test

import (
	"context"
	"testing"

	"github.com/jitoutbox/jitoutbox/internal/pubtest"
	"github.com/jitoutbox/jitoutbox/relay"
	"github.com/jitoutbox/jitoutbox/relay/kafkapub"
)

// TestEndToEndEveryDatabaseTwoRelays: on every database, two relays share
// the table and publish to an in-process Kafka cluster (kfake); every
// committed event is consumed once, in per-aggregate order.
func TestEndToEndEveryDatabaseTwoRelays(t *testing.T) {
	pubtest.EveryDatabase(t, 2, func(t *testing.T) pubtest.Broker {
		c := newFake(t)
		cl := newClient(t, c.ListenAddrs())
		createTopic(t, t.Context(), cl, "outbox.order", 3, nil)
		return pubtest.Broker{
			Publisher: func(t *testing.T) relay.Publisher {
				pub, err := kafkapub.New(cl)
				if err != nil {
					t.Fatal(err)
				}
				return pub
			},
			Consume: func(t *testing.T, ctx context.Context, n int) []pubtest.Delivery {
				var out []pubtest.Delivery
				for _, rec := range consume(t, ctx, c.ListenAddrs(), n, "outbox.order") {
					out = append(out, pubtest.Delivery{Aggregate: string(rec.Key), Payload: string(rec.Value), ID: kafkapub.EventID(rec)})
				}
				return out
			},
		}
	})
}
