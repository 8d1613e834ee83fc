package natspub_test

import (
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jitoutbox/jitoutbox/internal/cetest"
	"github.com/jitoutbox/jitoutbox/internal/testnats"
	"github.com/jitoutbox/jitoutbox/relay"
	"github.com/jitoutbox/jitoutbox/relay/cloudevents"
	"github.com/jitoutbox/jitoutbox/relay/natspub"
)

const ceSource = "https://orders.example.com/jitoutbox"

// ceMessages are testMessages with the cases the mapping treats apart:
// trace context (with and without tracestate), a binary payload, no
// payload, no content type.
func ceMessages(n int) []relay.Message {
	batch := testMessages(n)
	batch[0].Headers["traceparent"] = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	batch[0].Headers["tracestate"] = "vendor=v1"
	batch[1].Headers["traceparent"] = "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-00"
	batch[2].Payload, batch[2].ContentType = []byte{0, 1, 0xfe, 0xff}, "application/octet-stream"
	batch[3].Payload = nil
	batch[4].ContentType = ""
	return batch
}

// TestCloudEventsDecodedBySDK publishes with the CloudEvents option, in
// both modes, on JetStream and core NATS, and decodes what arrives with the
// CloudEvents Go SDK (binding.ToEvent over the NATS binding's header names,
// see internal/cetest): every event equals what was published.
func TestCloudEventsDecodedBySDK(t *testing.T) {
	for _, mode := range []cloudevents.Mode{cloudevents.Binary, cloudevents.Structured} {
		t.Run("JetStream/"+mode.String(), func(t *testing.T) {
			ctx := ctxTimeout(t, 30*time.Second)
			_, js := newJS(t, testnats.URL(t))
			s, prefix := testnats.Stream(t, js)
			p := newJetStreamPub(t, js, natspub.WithSubjectPrefix(prefix), natspub.CloudEvents(ceSource, mode))
			batch := ceMessages(8)
			requireAllOK(t, publish(ctx, p, batch))
			byID := map[string]relay.Message{}
			for _, m := range batch {
				byID[m.ID] = m
			}
			msgs := readStream(t, ctx, s, len(batch))
			if len(msgs) != len(batch) {
				t.Fatalf("read %d messages, want %d", len(msgs), len(batch))
			}
			for _, got := range msgs {
				checkCloudEvent(t, got.Headers(), got.Data(), mode, byID)
			}
			if len(byID) != 0 {
				t.Errorf("%d events not received", len(byID))
			}
		})
		t.Run("Core/"+mode.String(), func(t *testing.T) {
			ctx := ctxTimeout(t, 30*time.Second)
			url := testnats.URL(t)
			pubConn, subConn := testnats.Connect(t, url), testnats.Connect(t, url)
			prefix := testnats.RandomName("core_")
			batch := ceMessages(8)
			ch := make(chan *nats.Msg, len(batch))
			sub, err := subConn.ChanSubscribe(prefix+".>", ch)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = sub.Unsubscribe() }()
			if err := subConn.FlushWithContext(ctx); err != nil {
				t.Fatal(err)
			}
			p, err := natspub.NewCore(pubConn, natspub.WithSubjectPrefix(prefix), natspub.CloudEvents(ceSource, mode))
			if err != nil {
				t.Fatal(err)
			}
			requireAllOK(t, publish(ctx, p, batch))
			byID := map[string]relay.Message{}
			for _, m := range batch {
				byID[m.ID] = m
			}
			for len(byID) > 0 {
				select {
				case got := <-ch:
					checkCloudEvent(t, got.Header, got.Data, mode, byID)
				case <-ctx.Done():
					t.Fatalf("%d events not received", len(byID))
				}
			}
		})
	}
}

// checkCloudEvent decodes one received message with the SDK, compares it
// with the published message of its id (removed from byID) and checks that
// jitoutbox's own headers are still there.
func checkCloudEvent(t *testing.T, h nats.Header, data []byte, mode cloudevents.Mode, byID map[string]relay.Message) {
	t.Helper()
	flat := cetest.Flatten(h)
	ev := cetest.Decode(t, &cetest.Message{Headers: flat, Prefix: cloudevents.PrefixNATS,
		ContentType: flat[cloudevents.HeaderContentType], Body: data}, mode)
	m, ok := byID[ev.ID()]
	if !ok {
		t.Fatalf("unexpected event %q", ev.ID())
	}
	delete(byID, ev.ID())
	cetest.Check(t, ev, ceSource, m)
	if natspub.EventID(&nats.Msg{Header: h}) != m.ID || flat[natspub.HeaderAggregateType] != m.AggregateType ||
		flat[natspub.HeaderMsgID] != "" && flat[natspub.HeaderMsgID] != m.ID {
		t.Errorf("%s: jitoutbox headers %v", m.ID, flat)
	}
	// No value twice: binary mode leaves out the jitoutbox headers that the
	// ce- headers repeat; structured mode keeps them.
	for _, k := range []string{natspub.HeaderEventID, natspub.HeaderEventType, natspub.HeaderAggregateID, natspub.HeaderCreatedAt} {
		if _, ok := flat[k]; ok == (mode == cloudevents.Binary) {
			t.Errorf("%s: %s mode, header %s present: %v", m.ID, mode, k, ok)
		}
	}
	if _, ok := flat[natspub.HeaderContentType]; ok {
		t.Errorf("%s: both %s and %s headers", m.ID, natspub.HeaderContentType, cloudevents.HeaderContentType)
	}
}

func TestCloudEventsOptionRefused(t *testing.T) {
	nc := testnats.Connect(t, testnats.Server(t).URL)
	for _, src := range []string{"", "not a uri", "1x:y", "/a%zz", "x#a#b"} {
		_, err := natspub.NewCore(nc, natspub.CloudEvents(src, cloudevents.Binary))
		if !errors.Is(err, cloudevents.ErrInvalidSource) || !errors.Is(err, natspub.ErrInvalidOption) {
			t.Errorf("source %q: %v, want ErrInvalidSource and ErrInvalidOption", src, err)
		}
	}
	if _, err := natspub.NewCore(nc, natspub.CloudEvents("/x", cloudevents.Mode(9))); !errors.Is(err, cloudevents.ErrInvalidMode) {
		t.Errorf("bad mode: %v", err)
	}
	if _, err := natspub.NewCore(nc, natspub.CloudEvents("/x", cloudevents.Binary), natspub.Debezium()); !errors.Is(err, natspub.ErrInvalidOption) {
		t.Errorf("with Debezium: %v", err)
	}
}
