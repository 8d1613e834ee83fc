package natspub_test

import (
	"testing"
	"time"

	"github.com/jitoutbox/jitoutbox/internal/pubtest"
	"github.com/jitoutbox/jitoutbox/internal/testnats"
	"github.com/jitoutbox/jitoutbox/relay/natspub"
)

// TestRelayThroughJetStreamOutage: an embedded server stopped for a few
// seconds while one-event aggregates trickle in, then restarted on the
// same port and store: no attempt spent, the outage logged once, every
// event published once the server is back (pubtest.Outage).
func TestRelayThroughJetStreamOutage(t *testing.T) {
	pubtest.Outage(t, func(t *testing.T) pubtest.Cut {
		srv := testnats.Server(t)
		_, js := newJS(t, srv.URL)
		_, prefix := testnats.Stream(t, js)
		p := newJetStreamPub(t, js, natspub.WithSubjectPrefix(prefix), natspub.WithAckTimeout(time.Second))
		return pubtest.Cut{Publisher: p, Down: func(testing.TB) { srv.Shutdown() }, Up: srv.Restart}
	})
}

// TestRelayThroughCoreOutage: the same with core NATS.
func TestRelayThroughCoreOutage(t *testing.T) {
	pubtest.Outage(t, func(t *testing.T) pubtest.Cut {
		srv := testnats.Server(t)
		nc, _ := newJS(t, srv.URL)
		p, err := natspub.NewCore(nc, natspub.WithSubjectPrefix(testnats.RandomName("core_")), natspub.WithAckTimeout(time.Second))
		if err != nil {
			t.Fatal(err)
		}
		return pubtest.Cut{Publisher: p, Down: func(testing.TB) { srv.Shutdown() }, Up: srv.Restart}
	})
}
