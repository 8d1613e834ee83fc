package natspub_test

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jitoutbox/jitoutbox/internal/testnats"
	"github.com/jitoutbox/jitoutbox/relay"
	"github.com/jitoutbox/jitoutbox/relay/natspub"
)

func TestCoreSubscriberReceivesAll(t *testing.T) {
	ctx := ctxTimeout(t, 30*time.Second)
	url := testnats.URL(t)
	pubConn := testnats.Connect(t, url)
	subConn := testnats.Connect(t, url)
	prefix := testnats.RandomName("core_")
	const n = 50
	ch := make(chan *nats.Msg, n+1)
	sub, err := subConn.ChanSubscribe(prefix+".>", ch)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sub.Unsubscribe() }()
	if err := subConn.FlushWithContext(ctx); err != nil {
		t.Fatal(err)
	}

	p, err := natspub.NewCore(pubConn, natspub.WithSubjectPrefix(prefix))
	if err != nil {
		t.Fatal(err)
	}
	batch := testMessages(n)
	batch[3].Payload = make([]byte, pubConn.MaxPayload()+1) // permanent, others go through
	errs := publish(ctx, p, batch)
	for i, err := range errs {
		if i == 3 {
			if !relay.IsPermanent(err) || !errors.Is(err, nats.ErrMaxPayload) {
				t.Errorf("errs[3] = %v, want permanent max payload", err)
			}
		} else if err != nil {
			t.Errorf("errs[%d] = %v", i, err)
		}
	}
	byID := make(map[string]relay.Message, n)
	for i, m := range batch {
		if i != 3 {
			byID[m.ID] = m
		}
	}
	for len(byID) > 0 {
		select {
		case got := <-ch:
			m, ok := byID[natspub.EventID(got)]
			if !ok {
				t.Fatalf("unexpected message %q", natspub.EventID(got))
			}
			delete(byID, m.ID)
			if got.Subject != prefix+".order.order.paid" || !bytes.Equal(got.Data, m.Payload) {
				t.Errorf("%s: subject %q data %q", m.ID, got.Subject, got.Data)
			}
			checkHeaders(t, got.Header, m, false)
		case <-ctx.Done():
			t.Fatalf("%d messages not received", len(byID))
		}
	}
}

func TestCoreDisconnectedAndClosed(t *testing.T) {
	ctx := ctxTimeout(t, 30*time.Second)
	srv := testnats.Server(t)
	nc := testnats.Connect(t, srv.URL)
	p, err := natspub.NewCore(nc, natspub.WithAckTimeout(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	requireAllOK(t, publish(ctx, p, testMessages(2)))

	srv.Shutdown()
	for nc.IsConnected() { // the client notices the lost connection
		if ctx.Err() != nil {
			t.Fatal("client still connected")
		}
		time.Sleep(5 * time.Millisecond)
	}
	for i, err := range publish(ctx, p, testMessages(3)) {
		if err == nil || relay.IsPermanent(err) || !errors.Is(err, natspub.ErrNotConnected) {
			t.Errorf("disconnected: errs[%d] = %v, want retryable ErrNotConnected", i, err)
		}
	}
	nc.Close()
	for i, err := range publish(ctx, p, testMessages(2)) {
		if !errors.Is(err, nats.ErrConnectionClosed) || relay.IsPermanent(err) {
			t.Errorf("closed: errs[%d] = %v, want retryable ErrConnectionClosed", i, err)
		}
	}
}

func TestCoreRejectsJetStreamOptions(t *testing.T) {
	nc := testnats.Connect(t, testnats.URL(t))
	for _, o := range []natspub.Option{natspub.WithMaxPending(5), natspub.WithExpectStream("S")} {
		if _, err := natspub.NewCore(nc, o); !errors.Is(err, natspub.ErrInvalidOption) {
			t.Errorf("err = %v, want ErrInvalidOption", err)
		}
	}
}
