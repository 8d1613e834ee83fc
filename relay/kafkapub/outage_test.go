package kafkapub_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/jitoutbox/jitoutbox/relay"
	"github.com/jitoutbox/jitoutbox/relay/kafkapub"
)

// checkOutage asserts that every error is retryable and reads as a timeout,
// as the relay expects of an outage.
func checkOutage(t *testing.T, errs []error, ackTimeout bool) {
	t.Helper()
	for i, err := range errs {
		if err == nil || relay.IsPermanent(err) || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("message %d: err = %v, want a retryable timeout", i, err)
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
