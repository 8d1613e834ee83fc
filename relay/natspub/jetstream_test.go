package natspub_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jitoutbox/jitoutbox/internal/testnats"
	"github.com/jitoutbox/jitoutbox/relay"
	"github.com/jitoutbox/jitoutbox/relay/natspub"
)

func newJetStreamPub(t *testing.T, js jetstream.JetStream, opts ...natspub.Option) *natspub.JetStream {
	t.Helper()
	p, err := natspub.NewJetStream(js, opts...)
	if err != nil {
		t.Fatalf("NewJetStream: %v", err)
	}
	return p
}

func publish(ctx context.Context, p relay.Publisher, batch []relay.Message) []error {
	errs := make([]error, len(batch))
	p.Publish(ctx, batch, errs)
	return errs
}

func requireAllOK(t *testing.T, errs []error) {
	t.Helper()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("errs[%d] = %v", i, err)
		}
	}
}

// readStream reads n messages from the stream in one fetch.
func readStream(t *testing.T, ctx context.Context, s jetstream.Stream, n int) []jetstream.Msg {
	t.Helper()
	cons, err := s.CreateConsumer(ctx, jetstream.ConsumerConfig{AckPolicy: jetstream.AckNonePolicy, InactiveThreshold: time.Minute})
	if err != nil {
		t.Fatalf("create consumer: %v", err)
	}
	b, err := cons.Fetch(n, jetstream.FetchMaxWait(5*time.Second))
	if err != nil {
		t.Fatalf("fetch: %v", err)
	}
	var out []jetstream.Msg
	for m := range b.Messages() {
		out = append(out, m)
	}
	if err := b.Error(); err != nil {
		t.Fatalf("fetch batch: %v", err)
	}
	return out
}

func streamMsgs(t *testing.T, ctx context.Context, s jetstream.Stream) uint64 {
	t.Helper()
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatalf("stream info: %v", err)
	}
	return info.State.Msgs
}

func TestJetStreamBatchAckedHeadersAndDedupe(t *testing.T) {
	ctx := ctxTimeout(t, 30*time.Second)
	_, js := newJS(t, testnats.URL(t))
	s, prefix := testnats.Stream(t, js)
	// A window smaller than the batch exercises the sliding window.
	p := newJetStreamPub(t, js, natspub.WithSubjectPrefix(prefix), natspub.WithMaxPending(16),
		natspub.WithExpectStream(s.CachedInfo().Config.Name))
	const n = 100
	batch := testMessages(n)

	requireAllOK(t, publish(ctx, p, batch))
	if got := streamMsgs(t, ctx, s); got != n {
		t.Fatalf("stream holds %d messages, want %d", got, n)
	}
	// The same batch again: the stream drops every message as a duplicate
	// (Nats-Msg-Id) and the publisher still reports success.
	requireAllOK(t, publish(ctx, p, batch))
	if got := streamMsgs(t, ctx, s); got != n {
		t.Fatalf("after republish stream holds %d messages, want %d (dedupe)", got, n)
	}

	byID := make(map[string]relay.Message, n)
	for _, m := range batch {
		byID[m.ID] = m
	}
	msgs := readStream(t, ctx, s, n)
	if len(msgs) != n {
		t.Fatalf("read %d messages, want %d", len(msgs), n)
	}
	for _, got := range msgs {
		id := got.Headers().Get(natspub.HeaderEventID)
		m, ok := byID[id]
		if !ok {
			t.Fatalf("unexpected message with event id %q", id)
		}
		delete(byID, id)
		if want := prefix + ".order.order.paid"; got.Subject() != want {
			t.Errorf("subject = %q, want %q", got.Subject(), want)
		}
		if !bytes.Equal(got.Data(), m.Payload) {
			t.Errorf("%s: data = %q, want %q", id, got.Data(), m.Payload)
		}
		checkHeaders(t, got.Headers(), m, true)
	}
}

func TestJetStreamMaxPayloadIsPermanentForThatMessageOnly(t *testing.T) {
	ctx := ctxTimeout(t, 30*time.Second)
	nc, js := newJS(t, testnats.URL(t))
	s, prefix := testnats.Stream(t, js)
	p := newJetStreamPub(t, js, natspub.WithSubjectPrefix(prefix))
	batch := testMessages(5)
	batch[2].Payload = make([]byte, nc.MaxPayload()+1)

	errs := publish(ctx, p, batch)
	for i, err := range errs {
		if i == 2 {
			if !relay.IsPermanent(err) || !errors.Is(err, nats.ErrMaxPayload) {
				t.Errorf("errs[2] = %v, want a permanent max payload error", err)
			}
			continue
		}
		if err != nil {
			t.Errorf("errs[%d] = %v, want nil", i, err)
		}
	}
	if got := streamMsgs(t, ctx, s); got != 4 {
		t.Fatalf("stream holds %d messages, want 4", got)
	}
}

func TestJetStreamStreamMaxMsgSizeIsPermanent(t *testing.T) {
	ctx := ctxTimeout(t, 30*time.Second)
	_, js := newJS(t, testnats.URL(t))
	_, prefix := testnats.Stream(t, js, func(c *jetstream.StreamConfig) { c.MaxMsgSize = 2048 })
	p := newJetStreamPub(t, js, natspub.WithSubjectPrefix(prefix))
	batch := testMessages(3)
	batch[1].Payload = make([]byte, 4096)
	errs := publish(ctx, p, batch)
	if errs[0] != nil || errs[2] != nil {
		t.Fatalf("errs = %v, want only errs[1] set", errs)
	}
	if !relay.IsPermanent(errs[1]) {
		t.Fatalf("errs[1] = %v, want permanent", errs[1])
	}
}

func TestJetStreamInvalidSubjectFromRouterIsPermanent(t *testing.T) {
	ctx := ctxTimeout(t, 30*time.Second)
	_, js := newJS(t, testnats.URL(t))
	s, prefix := testnats.Stream(t, js)
	router := func(m relay.Message) (string, error) {
		if m.AggregateID == "o-1" {
			return prefix + ".bad subject", nil
		}
		if m.AggregateID == "o-2" {
			return "", errors.New("lookup failed")
		}
		return prefix + ".x." + m.AggregateID, nil
	}
	p := newJetStreamPub(t, js, natspub.WithRouter(router))
	errs := publish(ctx, p, testMessages(4))
	if !relay.IsPermanent(errs[1]) || !errors.Is(errs[1], natspub.ErrInvalidSubject) {
		t.Errorf("errs[1] = %v, want permanent ErrInvalidSubject", errs[1])
	}
	if errs[2] == nil || relay.IsPermanent(errs[2]) || !strings.Contains(errs[2].Error(), "lookup failed") {
		t.Errorf("errs[2] = %v, want the router's (retryable) error", errs[2])
	}
	if errs[0] != nil || errs[3] != nil {
		t.Errorf("errs[0], errs[3] = %v, %v; want nil", errs[0], errs[3])
	}
	if got := streamMsgs(t, ctx, s); got != 2 {
		t.Fatalf("stream holds %d messages, want 2", got)
	}
}

func TestJetStreamNoStreamIsRetryable(t *testing.T) {
	ctx := ctxTimeout(t, 30*time.Second)
	_, js := newJS(t, testnats.URL(t))
	p := newJetStreamPub(t, js, natspub.WithSubjectPrefix(testnats.RandomName("nostream_")))
	errs := publish(ctx, p, testMessages(3))
	for i, err := range errs {
		if err == nil || relay.IsPermanent(err) {
			t.Errorf("errs[%d] = %v, want a retryable error", i, err)
		}
		if !errors.Is(err, jetstream.ErrNoStreamResponse) {
			t.Errorf("errs[%d] = %v, want ErrNoStreamResponse", i, err)
		}
	}
}

func TestJetStreamCancelledContext(t *testing.T) {
	_, js := newJS(t, testnats.URL(t))
	_, prefix := testnats.Stream(t, js)
	p := newJetStreamPub(t, js, natspub.WithSubjectPrefix(prefix))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	errs := publish(ctx, p, testMessages(3))
	for i, err := range errs {
		if !errors.Is(err, context.Canceled) || relay.IsPermanent(err) {
			t.Errorf("errs[%d] = %v, want retryable context.Canceled", i, err)
		}
	}
}

func TestJetStreamContextEndsWhileWaiting(t *testing.T) {
	// A subject without a stream whose no-responders retries take long
	// keeps acknowledgements pending; the context ends first.
	_, js := newJS(t, testnats.URL(t))
	p := newJetStreamPub(t, js, natspub.WithSubjectPrefix(testnats.RandomName("nostream_")), natspub.WithMaxPending(2))
	batch := testMessages(6)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	done := make(chan []error)
	go func() { done <- publish(ctx, p, batch) }()
	select {
	case errs := <-done:
		for i, err := range errs {
			if err == nil || relay.IsPermanent(err) {
				t.Errorf("errs[%d] = %v, want retryable error", i, err)
			}
		}
		if !errors.Is(errs[len(errs)-1], context.DeadlineExceeded) {
			t.Errorf("last error = %v, want context.DeadlineExceeded", errs[len(errs)-1])
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Publish did not return after its context ended")
	}
}

func TestJetStreamServerDownThenRestarted(t *testing.T) {
	ctx := ctxTimeout(t, 60*time.Second)
	srv := testnats.Server(t)
	reconnected := make(chan struct{}, 16)
	nc, js := newJS(t, srv.URL, nats.ReconnectHandler(func(*nats.Conn) { reconnected <- struct{}{} }))
	s, prefix := testnats.Stream(t, js)
	p := newJetStreamPub(t, js, natspub.WithSubjectPrefix(prefix), natspub.WithAckTimeout(2*time.Second))
	first := testMessages(10)
	requireAllOK(t, publish(ctx, p, first))

	// Shut the server down in the middle of a large batch: the router
	// blocks at message 1000 until the server is down. Every message is
	// then either confirmed or gets a retryable error, and Publish returns.
	const n, cut, window = 2000, 1000, 64
	second := testMessages(n)
	reached, down := make(chan struct{}), make(chan struct{})
	cutID := second[cut].ID
	router := func(m relay.Message) (string, error) {
		if m.ID == cutID {
			close(reached)
			<-down
		}
		return prefix + ".order.x", nil
	}
	p2 := newJetStreamPub(t, js, natspub.WithRouter(router), natspub.WithMaxPending(window), natspub.WithAckTimeout(2*time.Second))
	var errs []error
	var wg sync.WaitGroup
	wg.Go(func() { errs = publish(ctx, p2, second) })
	<-reached
	srv.Shutdown()
	close(down)
	wg.Wait()
	confirmed := 0
	for i, err := range errs {
		if err == nil {
			confirmed++
			if i >= cut {
				t.Errorf("errs[%d] = nil for a message sent after the shutdown", i)
			}
			continue
		}
		if relay.IsPermanent(err) {
			t.Fatalf("errs[%d] = %v, want retryable", i, err)
		}
	}
	// Messages up to cut-window had their acknowledgement awaited before
	// the router blocked.
	if confirmed < cut-window {
		t.Fatalf("%d confirmed, want at least %d", confirmed, cut-window)
	}
	t.Logf("%d of %d confirmed before the shutdown", confirmed, len(second))

	// While the server is down: retryable errors, promptly.
	start := time.Now()
	for i, err := range publish(ctx, p, testMessages(3)) {
		if err == nil || relay.IsPermanent(err) {
			t.Fatalf("while down: errs[%d] = %v, want retryable", i, err)
		}
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("Publish took %v while the server was down", d)
	}

	// Same port, same store: the client reconnects and publishing works;
	// republishing the whole second batch leaves each event once.
	srv.Restart(t)
	select {
	case <-reconnected:
	case <-ctx.Done():
		t.Fatal("client did not reconnect")
	}
	if !nc.IsConnected() {
		t.Fatalf("status after reconnect = %v", nc.Status())
	}
	requireAllOK(t, publish(ctx, p, second))
	if got, want := streamMsgs(t, ctx, s), uint64(len(first)+len(second)); got != want {
		t.Fatalf("stream holds %d messages, want %d", got, want)
	}
}

func TestJetStreamAckTimeoutIsRetryableDeadline(t *testing.T) {
	ctx := ctxTimeout(t, 30*time.Second)
	nc, js := newJS(t, testnats.URL(t))
	// A plain subscriber that never replies: the publishes have a responder
	// but never get an acknowledgement.
	prefix := testnats.RandomName("silent_")
	sub, err := nc.SubscribeSync(prefix + ".>")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sub.Unsubscribe() }()
	p := newJetStreamPub(t, js, natspub.WithSubjectPrefix(prefix), natspub.WithMaxPending(2),
		natspub.WithAckTimeout(200*time.Millisecond))
	start := time.Now()
	errs := publish(ctx, p, testMessages(5))
	for i, err := range errs {
		if !errors.Is(err, natspub.ErrAckTimeout) || !errors.Is(err, context.DeadlineExceeded) || relay.IsPermanent(err) {
			t.Errorf("errs[%d] = %v, want retryable ErrAckTimeout matching DeadlineExceeded", i, err)
		}
	}
	// The first timeout fails the messages not sent yet at once.
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Publish took %v", d)
	}
}

// TestJetStreamReservedUserHeaderNeverRefused: a row written by something
// other than txoutbox with a header the server reserves
// (Nats-Expected-Last-Subject-Sequence, which would make the stream refuse
// the message with error 10071 on every try) is published: the header is
// dropped, in a batch of one and in a larger one.
func TestJetStreamReservedUserHeaderNeverRefused(t *testing.T) {
	ctx := ctxTimeout(t, 30*time.Second)
	_, js := newJS(t, testnats.URL(t))
	s, prefix := testnats.Stream(t, js)
	p := newJetStreamPub(t, js, natspub.WithSubjectPrefix(prefix))
	batch := testMessages(3)
	for i := range batch {
		batch[i].Headers[jetstream.ExpectedLastSubjSeqHeader] = "999"
	}
	requireAllOK(t, publish(ctx, p, batch[:1]))
	requireAllOK(t, publish(ctx, p, batch[1:]))
	for _, m := range readStream(t, ctx, s, len(batch)) {
		if v := m.Headers().Get(jetstream.ExpectedLastSubjSeqHeader); v != "" {
			t.Errorf("stored message carries %s: %q", jetstream.ExpectedLastSubjSeqHeader, v)
		}
	}
}
