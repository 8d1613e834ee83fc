package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/jitoutbox/jitoutbox/internal/tcpproxy"
	"github.com/jitoutbox/jitoutbox/internal/testnats"
	"github.com/jitoutbox/jitoutbox/relay/kafkapub"
)

// kafkaPartitions is the partition count of the run's topic.
const kafkaPartitions = 8

// kafka is an in-process kfake cluster (one broker) behind a TCP proxy the
// run owns. The broker advertises the proxy's address in its metadata, so
// every client (the relay processes, which reach it by that address, and
// the test's consumer) goes through the proxy, which the run's outages
// cut, refuse or stall.
type kafka struct {
	proxy *tcpproxy.Proxy
	admin *kadm.Client
	cl    *kgo.Client
	topic string
	// prefix is the relays' -topic-prefix: events of aggregate type
	// "order" go to topic <prefix>.order.
	prefix string
}

// advertised is a listener that reports another address than its own: the
// proxy's, so that kfake's metadata sends clients through the proxy.
type advertised struct {
	net.Listener
	addr net.Addr
}

func (l advertised) Addr() net.Addr { return l.addr }

func newKafka(t *testing.T) broker {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	proxy := tcpproxy.New(t, ln.Addr().String())
	paddr, err := net.ResolveTCPAddr("tcp", proxy.Addr())
	if err != nil {
		t.Fatal(err)
	}
	used := false
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.ListenFn(func(string, string) (net.Listener, error) {
		if used {
			return nil, fmt.Errorf("chaos: kfake asked for a second listener")
		}
		used = true
		return advertised{Listener: ln, addr: paddr}, nil
	}))
	if err != nil {
		_ = ln.Close()
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	b := &kafka{proxy: proxy, prefix: testnats.RandomName("jitchaos-")}
	b.topic = b.prefix + ".order"
	cl, err := kgo.NewClient(kgo.SeedBrokers(proxy.Addr()), kgo.ConsumeTopics(b.topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(200*time.Millisecond),
		kgo.RetryBackoffFn(func(int) time.Duration { return 100 * time.Millisecond }))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	b.cl, b.admin = cl, kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	resp, err := b.admin.CreateTopic(ctx, kafkaPartitions, 1, nil, b.topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatalf("create topic %s: %v", b.topic, err)
	}
	return b
}

func (b *kafka) name() string {
	return fmt.Sprintf("Kafka (in-process kfake, one broker behind a TCP proxy; %d partitions)", kafkaPartitions)
}

func (b *kafka) natsURL() string { return "" }

func (b *kafka) relayArgs() []string {
	return []string{"-broker", "kafka", "-kafka", b.proxy.Addr(), "-topic-prefix", b.prefix}
}

// consume polls the topic from its start; a record's position is its
// partition and offset.
func (b *kafka) consume(ctx context.Context, rec *recorder) (func(), error) {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			fs := b.cl.PollFetches(ctx)
			fs.EachRecord(func(r *kgo.Record) {
				d := delivery{body: r.Value, pos: fmt.Sprintf("%d/%d", r.Partition, r.Offset)}
				for _, h := range r.Headers {
					switch h.Key {
					case kafkapub.HeaderEventID:
						d.id = string(h.Value)
					case kafkapub.HeaderAggregateID:
						d.agg = string(h.Value)
					}
				}
				rec.record(d)
			})
		}
	}()
	return func() {
		cancel()
		wg.Wait()
	}, nil
}

func (b *kafka) outage(ctx context.Context, _ *testing.T, down time.Duration, rng *rand.Rand) string {
	return proxyOutage(ctx, b.proxy, down, rng)
}

// stored sums the topic's high watermarks: the records it holds (no
// transactions, no compaction, so offsets have no gaps).
func (b *kafka) stored(ctx context.Context) (uint64, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	offs, err := b.admin.ListEndOffsets(ctx, b.topic)
	if err == nil {
		err = offs.Error()
	}
	if err != nil {
		return 0, false, fmt.Errorf("list end offsets: %w", err)
	}
	var n uint64
	offs.Each(func(o kadm.ListedOffset) { n += uint64(o.Offset) })
	return n, true, nil
}

// maxDuplicates: the relays' producers are idempotent, so the broker drops
// a producer's own retries of a record; but a record the relay publishes
// again (a new producer after a SIGKILL, a new owner after a lost
// session, a batch retried after its publish timed out) is a new record.
// See dupBound.
func (b *kafka) maxDuplicates(f faults) int { return dupBound(f) }

// durable: one kfake broker is replication factor 1; the relays are not
// told the topic (-kafka has no preflight topics), so they do not check.
func (b *kafka) durable() bool { return false }
