package kafkapub_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/jitoutbox/jitoutbox/internal/pubtest"
	"github.com/jitoutbox/jitoutbox/relay"
	"github.com/jitoutbox/jitoutbox/relay/kafkapub"
)

// checkOutage asserts that every error is unavailable (an outage for the
// relay) and reads as a timeout.
func checkOutage(t *testing.T, errs []error, ackTimeout bool) {
	t.Helper()
	for i, err := range errs {
		if err == nil || relay.IsPermanent(err) || !errors.Is(err, context.DeadlineExceeded) || !relay.IsUnavailable(err) {
			t.Errorf("message %d: err = %v, want an unavailable timeout", i, err)
		}
		if ackTimeout != errors.Is(err, kafkapub.ErrAckTimeout) {
			t.Errorf("message %d: err = %v, ErrAckTimeout %v", i, err, !ackTimeout)
		}
	}
}

// TestUnreachableSeeds: with no broker reachable, every record of the batch
// times out with a retryable error, after the ack timeout and no later.
func TestUnreachableSeeds(t *testing.T) {
	pub, err := kafkapub.Open([]string{"127.0.0.1:1"}, kafkapub.WithAckTimeout(400*time.Millisecond),
		kafkapub.WithClientOptions(kgo.RetryBackoffFn(func(int) time.Duration { return 50 * time.Millisecond })))
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	start := time.Now()
	errs := publish(context.Background(), pub, testMessages("order", 4))
	if d := time.Since(start); d < 400*time.Millisecond || d > 5*time.Second {
		t.Errorf("Publish returned after %v, want the ack timeout", d)
	}
	checkOutage(t, errs, true)

	// A caller's deadline shorter than the ack timeout wins.
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start = time.Now()
	errs = publish(ctx, pub, testMessages("order", 2))
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Publish returned after %v, want ctx's deadline", d)
	}
	checkOutage(t, errs, false)
}

// TestBrokerClosed: after the cluster goes away, a batch fails whole with
// retryable errors within the ack timeout.
func TestBrokerClosed(t *testing.T) {
	ctx := ctxTimeout(t, 30*time.Second)
	c := newFake(t)
	cl := newClient(t, c.ListenAddrs())
	createTopic(t, ctx, cl, "outbox.order", 2, nil)
	pub, err := kafkapub.New(cl, kafkapub.WithAckTimeout(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	mustPublish(t, ctx, pub, testMessages("order", 3))
	c.Close()
	start := time.Now()
	errs := publish(ctx, pub, testMessages("order", 3))
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("Publish returned after %v", d)
	}
	checkOutage(t, errs, true)
}

// TestRelayThroughClusterOutage: the in-process cluster drops the
// connection of every request for a few seconds (as a broker that is down
// behind a load balancer) while one-event aggregates trickle in: no
// attempt spent, the outage logged once, every event published once the
// cluster answers again (pubtest.Outage). (Closing and restarting kfake
// would lose what a real cluster keeps across a restart: its producer
// state and topic ids.)
func TestRelayThroughClusterOutage(t *testing.T) {
	pubtest.Outage(t, func(t *testing.T) pubtest.Cut {
		prefix := randomName("kafkapub-outage-")
		c := newFake(t, kfake.SeedTopics(1, prefix+".order"))
		cl := newClient(t, c.ListenAddrs(), kgo.MetadataMinAge(kafkapub.OutageMetadataMinAge))
		pub, err := kafkapub.New(cl, kafkapub.WithTopicPrefix(prefix), kafkapub.WithAckTimeout(time.Second))
		if err != nil {
			t.Fatal(err)
		}
		var down atomic.Bool
		return pubtest.Cut{Publisher: pub,
			Down: func(testing.TB) {
				down.Store(true)
				c.Control(func(kmsg.Request) (kmsg.Response, error, bool) {
					if !down.Load() {
						c.DropControl()
						return nil, nil, false
					}
					c.KeepControl()
					return nil, errors.New("broker down"), true
				})
			},
			Up: func(testing.TB) { down.Store(false) }}
	})
}
