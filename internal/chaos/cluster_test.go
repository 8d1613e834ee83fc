package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jitoutbox/jitoutbox/internal/testnats"
)

// clusterReady bounds the wait for a restarted node to rejoin the cluster.
const clusterReady = 60 * time.Second

// jsCluster is a three-node JetStream cluster the run owns (embedded
// servers on loopback) with an R3 stream. Its outages kill a node as a
// crash would (the stream leader, or a follower) and restart it on the
// same ports and store.
type jsCluster struct {
	c          *testnats.Cluster
	stream     jetstream.Stream
	streamName string
	prefix     string
}

func newJSCluster(t *testing.T) broker {
	c := testnats.JSCluster(t, 3)
	js, err := jetstream.New(testnats.Connect(t, c.URL()))
	if err != nil {
		t.Fatal(err)
	}
	stream, prefix := testnats.Stream(t, js, func(cfg *jetstream.StreamConfig) { cfg.Replicas = 3 })
	return &jsCluster{c: c, stream: stream, streamName: stream.CachedInfo().Config.Name, prefix: prefix}
}

func (b *jsCluster) name() string {
	return "NATS JetStream cluster (3 embedded servers, R3 file stream)"
}

func (b *jsCluster) natsURL() string { return b.c.URL() }

func (b *jsCluster) relayArgs() []string {
	return []string{"-publisher", "jetstream", "-subject-prefix", b.prefix}
}

func (b *jsCluster) consume(ctx context.Context, rec *recorder) (func(), error) {
	return consumeStream(ctx, b.stream, rec)
}

// outage kills the stream's leader (two times in three) or a follower,
// keeps it down for down, restarts it and waits until it is back in the
// cluster. A killed leader's peers elect a new one after the raft election
// timeout; meanwhile publishes fail and the relays back off.
func (b *jsCluster) outage(ctx context.Context, t *testing.T, down time.Duration, rng *rand.Rand) string {
	lctx, cancel := context.WithTimeout(ctx, clusterReady)
	leader, err := b.c.StreamLeader(lctx, b.streamName)
	cancel()
	if err != nil {
		t.Fatalf("chaos: %v", err)
	}
	victim, role := leader, "leader"
	if rng.IntN(3) == 0 {
		victim, role = (leader+1+rng.IntN(2))%3, "follower"
	}
	b.c.Kill(victim)
	pause(ctx, down)
	b.c.Restart(victim)
	rctx, cancel := context.WithTimeout(ctx, clusterReady)
	defer cancel()
	start := time.Now()
	if err := b.c.WaitReady(rctx); err != nil {
		t.Fatalf("chaos: node %d did not rejoin: %v", victim, err)
	}
	return fmt.Sprintf("stream %s n%d killed for %v, restarted, back in the cluster after %v",
		role, victim, down.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
}

// stored returns the stream's message count once every replica holds the
// same number (a replica that missed messages while it was down catches up
// from the leader); it fails while they differ.
func (b *jsCluster) stored(ctx context.Context) (uint64, bool, error) {
	n, ok, err := streamMsgs(ctx, b.stream)
	if err != nil {
		return n, ok, err
	}
	var per []int
	for i := range b.c.N() {
		per = append(per, b.c.StreamMsgs(i, b.streamName))
	}
	if slices.Min(per) != int(n) || slices.Max(per) != int(n) {
		return n, ok, fmt.Errorf("the stream holds %d messages, its replicas %v", n, per)
	}
	return n, ok, nil
}

// maxDuplicates: as on one server, JetStream drops a re-published event
// (same Nats-Msg-Id) within the stream's duplicate window (2 minutes); the
// window's state is replicated with the stream, so a new leader keeps
// dropping them. Zero.
func (b *jsCluster) maxDuplicates(faults) int { return 0 }

// durable: an R3 file stream keeps acknowledged messages through the crash
// of a node, so the relays' start-up check must not warn.
func (b *jsCluster) durable() bool { return true }
