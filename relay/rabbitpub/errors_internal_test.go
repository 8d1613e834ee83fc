package rabbitpub

import (
	"context"
	"errors"
	"fmt"
	"net"
	"syscall"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/jitoutbox/jitoutbox/relay"
)

// TestErrorClassification: what the client library and the broker report
// maps to unavailable (the broker cannot take messages now: no attempt
// spent), permanent (dead at once) or plainly retryable.
func TestErrorClassification(t *testing.T) {
	m := &relay.Message{ID: "e1"}
	r := Route{Exchange: "events", Key: "order.placed"}
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	type class int
	const (
		retryable class = iota
		unavailable
		permanent
	)
	cases := []struct {
		name string
		err  error
		want class
	}{
		{"connection refused", classify(fmt.Errorf("%w: connect: %w", ErrNotConnected, refused)), unavailable},
		{"connection reset", classify(fmt.Errorf("%w: connect: %w", ErrNotConnected, syscall.ECONNRESET)), unavailable},
		{"blocked", classify(fmt.Errorf("%w: the broker blocked the connection: %s", ErrNotConnected, "low on memory")), unavailable},
		{"publish on a closed channel", msgError(m, r, amqp.ErrClosed), unavailable},
		{"publisher closed", classify(ErrClosed), unavailable},
		{"confirm timeout", waitError(context.Background(), m, r, time.Second), unavailable},
		{"relay's deadline", msgError(m, r, context.DeadlineExceeded), unavailable},
		{"connection lost", closedError(m, r, true, &amqp.Error{Code: amqp.ConnectionForced, Reason: "CONNECTION_FORCED - broker forced connection closure with reason 'shutdown'"}), unavailable},
		{"connection closed by the client", closedError(m, r, true, nil), unavailable},
		{"channel closed, node stopping", closedError(m, r, false, &amqp.Error{Code: amqp.ConnectionForced, Reason: "CONNECTION_FORCED"}), unavailable},
		{"channel closed, internal error", closedError(m, r, false, &amqp.Error{Code: amqp.InternalError, Reason: "INTERNAL_ERROR"}), unavailable},
		{"channel closed without a reason", closedError(m, r, false, nil), unavailable},
		{"missing exchange", closedError(m, r, false, &amqp.Error{Code: amqp.NotFound, Reason: "NOT_FOUND - no exchange 'events' in vhost '/'"}), permanent},
		{"another message's missing exchange", closedError(m, r, false, &amqp.Error{Code: amqp.NotFound, Reason: "NOT_FOUND - no exchange 'other' in vhost '/'"}), retryable},
		{"another message refused", closedError(m, r, false, &amqp.Error{Code: amqp.PreconditionFailed, Reason: "PRECONDITION_FAILED - invalid message"}), retryable},
		{"nacked", msgError(m, r, ErrNacked), retryable},
		{"unroutable", returnError(m, &amqp.Return{ReplyCode: amqp.NoRoute, ReplyText: "NO_ROUTE"}), permanent},
		{"cancelled", msgError(m, r, context.Canceled), retryable},
	}
	for _, c := range cases {
		got := retryable
		if relay.IsUnavailable(c.err) {
			got = unavailable
		}
		if relay.IsPermanent(c.err) {
			if got == unavailable {
				t.Errorf("%s: %v is both unavailable and permanent", c.name, c.err)
			}
			got = permanent
		}
		if got != c.want {
			t.Errorf("%s: %v classified %d, want %d (0 retryable, 1 unavailable, 2 permanent)", c.name, c.err, got, c.want)
		}
	}
	if !errors.Is(classify(fmt.Errorf("%w: %w", ErrNotConnected, refused)), syscall.ECONNREFUSED) {
		t.Error("classify lost the cause")
	}
}

// TestPublishingDropsReservedHeaders: user headers RabbitMQ refuses as
// strings ("CC", "BCC") are dropped; others, "x-" ones included, are kept.
func TestPublishingDropsReservedHeaders(t *testing.T) {
	m := relay.Message{ID: "e1", AggregateType: "order", AggregateID: "o-1", EventType: "order.placed",
		Headers: map[string]string{"CC": "a", "BCC": "b", "cc": "kept", "x-delay": "kept"}}
	p, err := newPublishing(&m, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"CC", "BCC"} {
		if v, ok := p.Headers[k]; ok {
			t.Errorf("header %s = %v kept", k, v)
		}
	}
	for _, k := range []string{"cc", "x-delay"} {
		if p.Headers[k] != "kept" {
			t.Errorf("header %s dropped", k)
		}
	}
}
