package natspub

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jitoutbox/jitoutbox/internal/testnats"
	"github.com/jitoutbox/jitoutbox/relay"
)

// TestErrorClassification: the errors of the NATS client libraries and
// of the JetStream API map to unavailable (the broker cannot take
// messages now: no attempt spent), permanent (the message itself: dead at
// once) or plainly retryable.
func TestErrorClassification(t *testing.T) {
	type class int
	const (
		retryable class = iota
		unavailable
		permanent
	)
	api := func(code, errCode int, desc string) error {
		return fmt.Errorf("nats: %w", &jetstream.APIError{Code: code, ErrorCode: jetstream.ErrorCode(errCode), Description: desc})
	}
	cases := []struct {
		name string
		err  error
		want class
	}{
		{"not connected", fmt.Errorf("%w: %w", ErrNotConnected, nats.ErrDisconnected), unavailable},
		{"connection closed", nats.ErrConnectionClosed, unavailable},
		{"reconnecting", nats.ErrConnectionReconnecting, unavailable},
		{"draining", nats.ErrConnectionDraining, unavailable},
		{"no servers", nats.ErrNoServers, unavailable},
		{"no responders", nats.ErrNoResponders, unavailable},
		{"no stream response (no leader)", jetstream.ErrNoStreamResponse, unavailable},
		{"request timeout", nats.ErrTimeout, unavailable},
		{"ack timeout", fmt.Errorf("%w after 1s", ErrAckTimeout), unavailable},
		{"async publish timeout", jetstream.ErrAsyncPublishTimeout, unavailable},
		{"stalled", jetstream.ErrTooManyStalledMsgs, unavailable},
		{"relay's deadline", context.DeadlineExceeded, unavailable},
		{"reconnect buffer full", nats.ErrReconnectBufExceeded, unavailable},
		{"jetstream context closed", jetstream.ErrJetStreamPublisherClosed, unavailable},
		{"JetStream temporarily unavailable", api(503, 10008, "JetStream system temporarily unavailable"), unavailable},
		{"insufficient resources", api(503, 10023, "insufficient resources"), unavailable},
		{"stream full, discard new", api(503, 10077, "maximum messages exceeded"), unavailable},
		{"JetStream not enabled", jetstream.ErrJetStreamNotEnabled, unavailable},
		{"stream offline", api(500, 10118, "stream is offline"), unavailable},
		{"wrong last sequence", api(400, 10071, "wrong last sequence: 3"), permanent},
		{"wrong last sequence (R>1)", api(400, 10164, "wrong last sequence"), permanent},
		{"wrong last msg id", api(400, 10070, "wrong last msg ID: x"), permanent},
		{"message exceeds maximum", jetstream.ErrStreamMessageExceedsMaximum, permanent},
		{"header exceeds maximum", api(400, 10097, "header size exceeds maximum allowed of 64k"), permanent},
		{"invalid TTL", api(400, 10165, "invalid per-message TTL"), permanent},
		{"expected stream does not match", api(400, 10060, "expected stream does not match"), permanent},
		{"too large for the file store", api(503, 10077, "message too large"), permanent},
		{"max payload", nats.ErrMaxPayload, permanent},
		{"bad subject", nats.ErrBadSubject, permanent},
		{"cancelled", context.Canceled, retryable},
		{"duplicate in process", api(409, 10158, "duplicate message id is in process"), retryable},
		{"plain", errors.New("something else"), retryable},
	}
	m := &relay.Message{ID: "e1"}
	for _, c := range cases {
		err := publishError(m, "events.order", c.err)
		got := retryable
		if relay.IsUnavailable(err) {
			got = unavailable
		}
		if relay.IsPermanent(err) {
			if got == unavailable {
				t.Errorf("%s: %v is both unavailable and permanent", c.name, err)
			}
			got = permanent
		}
		if got != c.want {
			t.Errorf("%s: %v classified %d, want %d (0 retryable, 1 unavailable, 2 permanent)", c.name, err, got, c.want)
		}
		if !errors.Is(err, c.err) {
			t.Errorf("%s: %v does not wrap its cause", c.name, err)
		}
	}
	if err := connError(nil); err != nil {
		t.Errorf("connError(nil) = %v", err)
	}
}

// TestServerErrorsClassified: the errors a real server returns reach
// publishError as the types classified above: a wrong last sequence is
// permanent, a subject without a stream and a stopped server unavailable.
func TestServerErrorsClassified(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv := testnats.Server(t)
	nc := testnats.Connect(t, srv.URL, nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	_, prefix := testnats.Stream(t, js)
	m := &relay.Message{ID: "e1"}

	msg := nats.NewMsg(prefix + ".order.x")
	msg.Header.Set(jetstream.ExpectedLastSubjSeqHeader, "999")
	_, err = js.PublishMsg(ctx, msg)
	if err == nil {
		t.Fatal("a wrong expected last subject sequence was accepted")
	}
	if perr := publishError(m, msg.Subject, err); !relay.IsPermanent(perr) {
		t.Errorf("wrong last sequence: %v is not permanent", perr)
	}

	_, err = js.Publish(ctx, testnats.RandomName("nostream_")+".x", nil, jetstream.WithRetryAttempts(0))
	if perr := publishError(m, "nostream", err); err == nil || !relay.IsUnavailable(perr) {
		t.Errorf("no stream: %v is not unavailable", perr)
	}

	srv.Shutdown()
	p, err := NewJetStream(js, WithSubjectPrefix(prefix))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{1, 3} {
		errs := make([]error, n)
		batch := make([]relay.Message, n)
		for i := range batch {
			batch[i] = relay.Message{ID: fmt.Sprint("d", i), AggregateType: "order", EventType: "x"}
		}
		p.Publish(ctx, batch, errs)
		for i, err := range errs {
			if !relay.IsUnavailable(err) || relay.IsPermanent(err) {
				t.Errorf("server down, batch of %d: errs[%d] = %v, want unavailable", n, i, err)
			}
		}
	}
}
