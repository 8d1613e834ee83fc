package kafkapub_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/goleak"

	"github.com/jitoutbox/jitoutbox/relay"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// brokersEnv names the optional variable with a real cluster's seed brokers
// (comma-separated host:port).
const brokersEnv = "JITOUTBOX_KAFKA_BROKERS"

// target is a cluster a test runs against.
type target struct {
	name  string
	seeds []string
	fake  *kfake.Cluster // nil for a real cluster
}

// newFake starts an in-process cluster closed at the test's end.
func newFake(t *testing.T, opts ...kfake.Opt) *kfake.Cluster {
	t.Helper()
	c, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(1)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// targets returns an in-process cluster and, when JITOUTBOX_KAFKA_BROKERS is
// set, the real cluster it names.
func targets(t *testing.T) []target {
	t.Helper()
	c := newFake(t)
	ts := []target{{name: "kfake", seeds: c.ListenAddrs(), fake: c}}
	if env := os.Getenv(brokersEnv); env != "" {
		seeds := strings.Split(env, ",")
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := newClient(t, seeds).Ping(ctx); err != nil {
			t.Fatalf("%s is set but its cluster cannot be reached: %v", brokersEnv, err)
		}
		ts = append(ts, target{name: "env", seeds: seeds})
	}
	return ts
}

// eachTarget runs fn as a subtest on every target.
func eachTarget(t *testing.T, fn func(t *testing.T, tg target)) {
	t.Helper()
	for _, tg := range targets(t) {
		t.Run(tg.name, func(t *testing.T) { fn(t, tg) })
	}
}

// newClient returns a client for seeds, closed at the test's end.
func newClient(t *testing.T, seeds []string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(seeds...)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// randomName returns prefix followed by random hex, unique per test run.
func randomName(prefix string) string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

// createTopic creates topic with partitions and configs through cl.
func createTopic(t *testing.T, ctx context.Context, cl *kgo.Client, topic string, partitions int32, configs map[string]string) {
	t.Helper()
	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, partitions, -1
	for k, v := range configs {
		c := kmsg.NewCreateTopicsRequestTopicConfig()
		c.Name, c.Value = k, kmsg.StringPtr(v)
		rt.Configs = append(rt.Configs, c)
	}
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatalf("create topic %s: %v", topic, err)
	}
	for _, r := range resp.Topics {
		if err := kerr.ErrorForCode(r.ErrorCode); err != nil && err != kerr.TopicAlreadyExists {
			t.Fatalf("create topic %s: %v", topic, err)
		}
	}
}

// consume reads n records from topics, from their start.
func consume(t *testing.T, ctx context.Context, seeds []string, n int, topics ...string) []*kgo.Record {
	t.Helper()
	cl := newClient(t, seeds, kgo.ConsumeTopics(topics...), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	var out []*kgo.Record
	for len(out) < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consumed %d of %d records: %v", len(out), n, ctx.Err())
		}
		fs.EachError(func(topic string, p int32, err error) { t.Logf("fetch %s/%d: %v", topic, p, err) })
		out = append(out, fs.Records()...)
	}
	cl.Close()
	return out
}

func ctxTimeout(t *testing.T, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// testMessages returns n messages of aggregate type aggType with distinct
// aggregates and fresh ids.
func testMessages(aggType string, n int) []relay.Message {
	run := randomName("")
	created := time.Date(2026, 11, 22, 6, 30, 0, 123456789, time.UTC)
	out := make([]relay.Message, n)
	for i := range out {
		out[i] = relay.Message{
			ID:            fmt.Sprintf("evt-%s-%04d", run, i),
			AggregateType: aggType,
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

// publish runs pub.Publish on batch and returns the errors.
func publish(ctx context.Context, pub relay.Publisher, batch []relay.Message) []error {
	errs := make([]error, len(batch))
	pub.Publish(ctx, batch, errs)
	return errs
}

// mustPublish publishes batch and fails the test on any error.
func mustPublish(t *testing.T, ctx context.Context, pub relay.Publisher, batch []relay.Message) {
	t.Helper()
	for i, err := range publish(ctx, pub, batch) {
		if err != nil {
			t.Fatalf("message %d (%s): %v", i, batch[i].ID, err)
		}
	}
}
