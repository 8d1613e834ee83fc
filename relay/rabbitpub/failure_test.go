package rabbitpub_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/jitoutbox/jitoutbox/internal/tcpproxy"
	"github.com/jitoutbox/jitoutbox/relay"
	"github.com/jitoutbox/jitoutbox/relay/rabbitpub"
)

// publishAsync runs Publish in a goroutine; the returned function waits for
// it and returns the errors.
func publishAsync(ctx context.Context, p relay.Publisher, batch []relay.Message) func() []error {
	errs := make([]error, len(batch))
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.Publish(ctx, batch, errs)
	}()
	return func() []error { <-done; return errs }
}

// waitDepth waits until queue holds n ready messages: the broker has
// received a batch whose confirms a stalled proxy holds back.
func waitDepth(t *testing.T, b *broker, queue string, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for b.depth(queue) < n {
		if time.Now().After(deadline) {
			t.Fatalf("queue %s holds %d of %d messages", queue, b.depth(queue), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// safeBuffer is a bytes.Buffer for a logger written from several goroutines.
type safeBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *safeBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *safeBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestConnectionCut: a connection cut during a batch gives every
// unconfirmed message a retryable outage error; while the broker is
// unreachable Publish fails the same way; once it is back the publisher
// reconnects by itself.
func TestConnectionCut(t *testing.T) {
	ctx := ctxTimeout(t, 60*time.Second)
	b := newBroker(t)
	x := b.exchange()
	q := b.queue(x, "#")
	proxy, url := tcpproxy.NewURL(t, b.url)
	var logs safeBuffer
	p := newPub(t, url, rabbitpub.WithExchange(x), rabbitpub.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	noErrors(t, publish(ctx, p, testMessages(3)))
	b.consume(q, 3)

	proxy.StallDown()
	batch := testMessages(5)
	wait := publishAsync(ctx, p, batch)
	waitDepth(t, b, q, len(batch))
	proxy.Refuse()
	proxy.Cut()
	checkOutage := func(when string, errs []error) {
		t.Helper()
		for i, err := range errs {
			if !errors.Is(err, rabbitpub.ErrNotConnected) || relay.IsPermanent(err) || !relay.IsUnavailable(err) {
				t.Errorf("%s: errs[%d] = %v, want unavailable ErrNotConnected", when, i, err)
			}
		}
	}
	cutErrs := wait()
	if proxy.Cuts() == 0 {
		t.Errorf("Cut closed no connection: the publisher was not connected through the proxy")
	}
	t.Logf("cut: %v", cutErrs[0])
	checkOutage("cut mid-batch", cutErrs)
	b.consume(q, len(batch)) // delivered, but unconfirmed: the relay sends them again

	checkOutage("broker unreachable", publish(ctx, p, batch))
	if proxy.Refused() == 0 {
		t.Errorf("the publisher never tried to reconnect while the broker was unreachable")
	}

	proxy.Resume() // ends the stall and the refusal
	noErrors(t, publish(ctx, p, batch))
	if n := len(b.consume(q, len(batch))); n != len(batch) {
		t.Errorf("after reconnect: %d delivered", n)
	}
	if s := logs.String(); !strings.Contains(s, "reconnected") {
		t.Errorf("no reconnect logged: %q", s)
	} else if strings.Contains(s, "guest") || strings.Contains(s, url) {
		t.Errorf("log mentions the URL or its credentials: %q", s)
	}
}

// TestContextEnd: when ctx ends, every unconfirmed message gets ctx's
// error, and the next Publish works on a new connection.
func TestContextEnd(t *testing.T) {
	ctx := ctxTimeout(t, 60*time.Second)
	b := newBroker(t)
	x := b.exchange()
	q := b.queue(x, "#")
	proxy, url := tcpproxy.NewURL(t, b.url)
	p := newPub(t, url, rabbitpub.WithExchange(x))

	canceled, cancel := context.WithCancel(ctx)
	cancel()
	for i, err := range publish(canceled, p, testMessages(2)) {
		if !errors.Is(err, context.Canceled) {
			t.Errorf("canceled before: errs[%d] = %v", i, err)
		}
	}

	noErrors(t, publish(ctx, p, testMessages(1))) // connect before the stall
	b.consume(q, 1)
	proxy.StallDown()
	batch := testMessages(4)
	pctx, cancel := context.WithCancel(ctx)
	defer cancel()
	wait := publishAsync(pctx, p, batch)
	waitDepth(t, b, q, len(batch))
	cancel()
	for i, err := range wait() {
		if !errors.Is(err, context.Canceled) || relay.IsPermanent(err) {
			t.Errorf("canceled during: errs[%d] = %v, want context.Canceled", i, err)
		}
	}
	proxy.Resume()
	b.consume(q, len(batch))
	noErrors(t, publish(ctx, p, batch))
	b.consume(q, len(batch))
}

// TestConfirmTimeout: confirms that do not arrive in time give retryable
// errors that match context.DeadlineExceeded.
func TestConfirmTimeout(t *testing.T) {
	ctx := ctxTimeout(t, 60*time.Second)
	b := newBroker(t)
	x := b.exchange()
	b.queue(x, "#")
	proxy, url := tcpproxy.NewURL(t, b.url)
	p := newPub(t, url, rabbitpub.WithExchange(x), rabbitpub.WithConfirmTimeout(300*time.Millisecond))
	noErrors(t, publish(ctx, p, testMessages(1)))
	proxy.StallDown()
	errs := publish(ctx, p, testMessages(3))
	proxy.Resume()
	for i, err := range errs {
		if !errors.Is(err, rabbitpub.ErrConfirmTimeout) || !errors.Is(err, context.DeadlineExceeded) || relay.IsPermanent(err) {
			t.Errorf("errs[%d] = %v, want retryable ErrConfirmTimeout", i, err)
		}
	}
	noErrors(t, publish(ctx, p, testMessages(2)))
}

// TestNewDial: a DialFunc's connections are used, and one with automatic
// recovery is refused with a retryable error.
func TestNewDial(t *testing.T) {
	ctx := ctxTimeout(t, 30*time.Second)
	b := newBroker(t)
	x := b.exchange()
	b.queue(x, "#")
	p, err := rabbitpub.NewDial(func(context.Context) (*amqp.Connection, error) {
		return amqp.DialConfig(b.url, amqp.Config{Properties: amqp.Table{"connection_name": "rabbitpub test"}})
	}, rabbitpub.WithExchange(x))
	if err != nil {
		t.Fatal(err)
	}
	noErrors(t, publish(ctx, p, testMessages(2)))
	if err := p.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}

	p, err = rabbitpub.NewDial(func(context.Context) (*amqp.Connection, error) {
		return amqp.DialConfig(b.url, amqp.Config{Recovery: &amqp.Recovery{}})
	}, rabbitpub.WithExchange(x))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	for i, err := range publish(ctx, p, testMessages(2)) {
		if !errors.Is(err, rabbitpub.ErrRecoveryEnabled) || relay.IsPermanent(err) {
			t.Errorf("errs[%d] = %v, want retryable ErrRecoveryEnabled", i, err)
		}
	}
}

// TestBlockedWrite: a publish blocked on a socket write (the broker reads
// nothing) ends when the context does.
func TestBlockedWrite(t *testing.T) {
	ctx := ctxTimeout(t, 60*time.Second)
	b := newBroker(t)
	x := b.exchange()
	q := b.queue(x, "#")
	proxy, url := tcpproxy.NewURL(t, b.url)
	p := newPub(t, url, rabbitpub.WithExchange(x))
	noErrors(t, publish(ctx, p, testMessages(1)))
	b.consume(q, 1)
	proxy.Stall()
	batch := testMessages(64)
	for i := range batch {
		batch[i].Payload = make([]byte, 1<<20)
	}
	pctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	start := time.Now()
	errs := publish(pctx, p, batch)
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Publish returned after %v, 500ms after its context ended", d)
	}
	for i, err := range errs {
		if err == nil || relay.IsPermanent(err) {
			t.Errorf("errs[%d] = %v, want a retryable error", i, err)
		}
	}
	t.Logf("first: %v\nlast: %v", errs[0], errs[len(errs)-1])
	if !errors.Is(errs[len(errs)-1], context.DeadlineExceeded) {
		t.Errorf("last error = %v, want context.DeadlineExceeded", errs[len(errs)-1])
	}
	proxy.Resume()
	noErrors(t, publish(ctx, p, testMessages(2)))
}
