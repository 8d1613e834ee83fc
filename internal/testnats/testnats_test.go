package testnats

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestServerRestartKeepsStreamAndURL(t *testing.T) {
	e := Server(t)
	nc := Connect(t, e.URL)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	s, prefix := Stream(t, js)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := js.Publish(ctx, prefix+".a", []byte("x")); err != nil {
		t.Fatalf("publish: %v", err)
	}
	url := e.URL
	e.Restart(t)
	if e.URL != url {
		t.Fatalf("URL changed across restart: %s -> %s", url, e.URL)
	}
	// The client reconnects on its own to the same port.
	for !nc.IsConnected() {
		if ctx.Err() != nil {
			t.Fatal("client did not reconnect")
		}
		time.Sleep(10 * time.Millisecond)
	}
	// A request sent in the moment between the reconnect and the restarted
	// server's JetStream answering is lost, not queued: ask again, each try
	// with its own short deadline, until the test's deadline.
	var info *jetstream.StreamInfo
	for {
		tctx, tcancel := context.WithTimeout(ctx, time.Second)
		var err error
		info, err = s.Info(tctx)
		tcancel()
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("stream info after restart: %v", err)
		}
	}
	if info.State.Msgs != 1 {
		t.Fatalf("stream has %d messages after restart, want 1", info.State.Msgs)
	}
}

func TestURLAndStreamIsolation(t *testing.T) {
	nc := Connect(t, URL(t))
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	s1, p1 := Stream(t, js)
	s2, p2 := Stream(t, js)
	if s1.CachedInfo().Config.Name == s2.CachedInfo().Config.Name || p1 == p2 {
		t.Fatalf("streams collide: %s/%s and %s/%s", s1.CachedInfo().Config.Name, p1, s2.CachedInfo().Config.Name, p2)
	}
}

func TestWithMaxPayload(t *testing.T) {
	e := Server(t, WithMaxPayload(1024))
	nc := Connect(t, e.URL)
	if got := nc.MaxPayload(); got != 1024 {
		t.Fatalf("MaxPayload = %d, want 1024", got)
	}
}
