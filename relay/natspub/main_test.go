package natspub_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/goleak"

	"github.com/jitoutbox/jitoutbox/internal/testnats"
	"github.com/jitoutbox/jitoutbox/relay"
	"github.com/jitoutbox/jitoutbox/relay/natspub"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// newJS returns a connection to url and a JetStream context on it with a
// bounded async ack timeout.
func newJS(t *testing.T, url string, opts ...nats.Option) (*nats.Conn, jetstream.JetStream) {
	t.Helper()
	nc := testnats.Connect(t, url, opts...)
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(1024), jetstream.WithPublishAsyncTimeout(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	return nc, js
}

// testMessages returns n messages with distinct aggregates and fresh ids.
func testMessages(n int) []relay.Message {
	run := testnats.RandomName("")
	created := time.Date(2026, 11, 22, 6, 30, 0, 123456789, time.UTC)
	out := make([]relay.Message, n)
	for i := range out {
		out[i] = relay.Message{
			ID:            fmt.Sprintf("evt-%s-%04d", run, i),
			AggregateType: "order",
			AggregateID:   fmt.Sprintf("o-%d", i),
			EventType:     "order.paid",
			Payload:       fmt.Appendf(nil, `{"n":%d}`, i),
			ContentType:   "application/json",
			Headers:       map[string]string{"X-Trace": fmt.Sprintf("trace-%d", i)},
			CreatedAt:     created.Add(time.Duration(i) * time.Millisecond),
			Attempt:       1,
		}
		if i%2 == 0 {
			out[i].IdempotencyKey = fmt.Sprintf("idem-%d", i)
		}
	}
	return out
}

func ctxTimeout(t *testing.T, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// checkHeaders asserts that msg carries m's jitoutbox headers.
func checkHeaders(t *testing.T, h nats.Header, m relay.Message, wantMsgID bool) {
	t.Helper()
	want := map[string]string{
		natspub.HeaderEventID:       m.ID,
		natspub.HeaderEventType:     m.EventType,
		natspub.HeaderAggregateType: m.AggregateType,
		natspub.HeaderAggregateID:   m.AggregateID,
		natspub.HeaderCreatedAt:     m.CreatedAt.UTC().Format(time.RFC3339Nano),
		natspub.HeaderContentType:   m.ContentType,
		"X-Trace":                   m.Headers["X-Trace"],
	}
	if m.IdempotencyKey != "" {
		want[natspub.HeaderIdempotencyKey] = m.IdempotencyKey
	} else if _, ok := h[natspub.HeaderIdempotencyKey]; ok {
		t.Errorf("%s: unexpected %s header", m.ID, natspub.HeaderIdempotencyKey)
	}
	if wantMsgID {
		want[natspub.HeaderMsgID] = m.ID
	} else if _, ok := h[natspub.HeaderMsgID]; ok {
		t.Errorf("%s: unexpected %s header", m.ID, natspub.HeaderMsgID)
	}
	for k, v := range want {
		if got := h.Get(k); got != v {
			t.Errorf("%s: header %s = %q, want %q", m.ID, k, got, v)
		}
	}
}
