package rabbitpub_test

import (
	"log/slog"
	"testing"

	"github.com/jitoutbox/jitoutbox/internal/pubtest"
	"github.com/jitoutbox/jitoutbox/internal/tcpproxy"
	"github.com/jitoutbox/jitoutbox/relay/rabbitpub"
)

// TestRelayThroughBrokerOutage: the shared RabbitMQ behind a proxy that
// cuts every connection and refuses new ones for a few seconds while
// one-event aggregates trickle in: no attempt spent, the outage logged
// once, every event published once the network is back (pubtest.Outage).
func TestRelayThroughBrokerOutage(t *testing.T) {
	pubtest.Outage(t, func(t *testing.T) pubtest.Cut {
		b := newBroker(t)
		x := b.exchange()
		b.queue(x, "#")
		proxy, url := tcpproxy.NewURL(t, b.url)
		p := newPub(t, url, rabbitpub.WithExchange(x), rabbitpub.WithLogger(slog.New(slog.DiscardHandler)))
		return pubtest.Cut{Publisher: p,
			Down: func(testing.TB) { proxy.Refuse(); proxy.Cut() },
			Up:   func(testing.TB) { proxy.Resume() }}
	})
}
