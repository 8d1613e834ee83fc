package testnats

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// publishAcked publishes until the cluster acknowledges, retrying through
// elections and reconnects, and returns the ack.
func publishAcked(ctx context.Context, t *testing.T, js jetstream.JetStream, subject, id string) *jetstream.PubAck {
	t.Helper()
	for {
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		ack, err := js.Publish(pctx, subject, []byte(id), jetstream.WithMsgID(id))
		cancel()
		if err == nil {
			return ack
		}
		if ctx.Err() != nil {
			t.Fatalf("publish %s never acknowledged: %v", id, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestJSClusterR3SurvivesLeaderKill(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := JSCluster(t, 3)
	urls := c.URLs()
	if len(urls) != 3 || c.URL() != strings.Join(urls, ",") {
		t.Fatalf("URLs = %q, URL = %q", urls, c.URL())
	}
	nc := Connect(t, c.URL(), nats.RetryOnFailedConnect(true))
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	s, prefix := Stream(t, js, func(cfg *jetstream.StreamConfig) { cfg.Replicas = 3 })
	name := s.CachedInfo().Config.Name

	const before, after = 20, 5
	for i := range before {
		publishAcked(ctx, t, js, prefix+".a", fmt.Sprintf("m%d", i))
	}
	leader, err := c.StreamLeader(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("stream leader: server %d; killing it", leader)
	killed := time.Now()
	c.Kill(leader)
	c.Kill(leader) // harmless
	if c.Running(leader) {
		t.Fatalf("server %d still running after Kill", leader)
	}

	for i := range after {
		ack := publishAcked(ctx, t, js, prefix+".a", fmt.Sprintf("m%d", before+i))
		if i == 0 {
			t.Logf("first publish acknowledged %v after the kill", time.Since(killed).Round(time.Millisecond))
		}
		if ack.Stream != name || ack.Sequence != uint64(before+i+1) || ack.Duplicate {
			t.Fatalf("ack %+v, want stream %s sequence %d, not a duplicate", ack, name, before+i+1)
		}
	}
	next, err := c.StreamLeader(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	if next == leader {
		t.Fatalf("server %d leads the stream while killed", next)
	}
	t.Logf("new stream leader: server %d", next)

	c.Restart(leader)
	if !slices.Equal(c.URLs(), urls) {
		t.Fatalf("URLs changed across Restart: %q -> %q", urls, c.URLs())
	}
	if err := c.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	// The restarted server catches up: its replica holds every message and
	// is current with the stream's group.
	srv := c.Server(leader)
	for c.StreamMsgs(leader, name) != before+after || !srv.JetStreamIsStreamCurrent(globalAccount, name) {
		if ctx.Err() != nil {
			t.Fatalf("server %d holds %d of %d messages after restart (current=%v)",
				leader, c.StreamMsgs(leader, name), before+after, srv.JetStreamIsStreamCurrent(globalAccount, name))
		}
		time.Sleep(pollEvery)
	}
	for i := range c.N() {
		if got := c.StreamMsgs(i, name); got != before+after {
			t.Errorf("server %d holds %d messages, want %d", i, got, before+after)
		}
	}
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.Cluster == nil || info.Cluster.Name != c.Name() || len(info.Cluster.Replicas) != 2 {
		t.Fatalf("stream cluster info = %+v, want cluster %s with 2 followers", info.Cluster, c.Name())
	}
}

// A single server runs standalone and leads its streams; StreamLeader and
// WaitReady end with ctx when the cluster cannot answer.
func TestJSClusterSingleAndWaitsEndWithContext(t *testing.T) {
	c := JSCluster(t, 1)
	js, err := jetstream.New(Connect(t, c.URL()))
	if err != nil {
		t.Fatal(err)
	}
	s, _ := Stream(t, js)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if i, err := c.StreamLeader(ctx, s.CachedInfo().Config.Name); i != 0 || err != nil {
		t.Fatalf("StreamLeader = %d, %v; want 0", i, err)
	}
	if n := c.StreamMsgs(0, s.CachedInfo().Config.Name); n != 0 {
		t.Fatalf("StreamMsgs = %d, want 0", n)
	}
	ctx1, cancel1 := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel1()
	if i, err := c.StreamLeader(ctx1, "NO_SUCH_STREAM"); !errors.Is(err, context.DeadlineExceeded) || i != -1 {
		t.Fatalf("StreamLeader of a missing stream = %d, %v", i, err)
	}
	c.Kill(0)
	if n := c.StreamMsgs(0, s.CachedInfo().Config.Name); n != -1 {
		t.Fatalf("StreamMsgs of a killed server = %d, want -1", n)
	}
	ctx2, cancel2 := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel2()
	if err := c.WaitReady(ctx2); !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "no server is running") {
		t.Fatalf("WaitReady with every server killed = %v", err)
	}
	c.Restart(0)
	if err := c.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	if n := c.StreamMsgs(0, s.CachedInfo().Config.Name); n != 0 {
		t.Fatalf("StreamMsgs after Restart = %d, want 0", n)
	}
}
