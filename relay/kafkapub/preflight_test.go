package kafkapub_test

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/jitoutbox/jitoutbox/relay"
	"github.com/jitoutbox/jitoutbox/relay/kafkapub"
)

// syncBuffer is a bytes.Buffer safe for concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// runPreflight runs p's Preflight with a logger writing to the returned
// buffer.
func runPreflight(t *testing.T, p relay.Publisher) (*syncBuffer, error) {
	t.Helper()
	buf := &syncBuffer{}
	log := slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	pf, ok := p.(relay.Preflighter)
	if !ok {
		t.Fatal("kafkapub.Publisher does not implement relay.Preflighter")
	}
	err := pf.Preflight(ctxTimeout(t, 10*time.Second), relay.PreflightInfo{Owner: "t", LeaseDuration: time.Second, PublishTimeout: 5 * time.Second, Logger: log})
	return buf, err
}

// createTopicRF creates topic with one partition, replication factor rf and
// min.insync.replicas isr ("" leaves the broker's default).
func createTopicRF(t *testing.T, cl *kgo.Client, topic string, rf int16, isr string) {
	t.Helper()
	var cfg map[string]*string
	if isr != "" {
		cfg = map[string]*string{"min.insync.replicas": &isr}
	}
	resp, err := kadm.NewClient(cl).CreateTopic(ctxTimeout(t, 10*time.Second), 1, rf, cfg, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatalf("create topic %s: %v", topic, err)
	}
}

func openPub(t *testing.T, seeds []string, opts ...kafkapub.Option) *kafkapub.Publisher {
	t.Helper()
	p, err := kafkapub.Open(seeds, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

func TestPreflightWarnsUnsafeTopic(t *testing.T) {
	c := newFake(t, kfake.NumBrokers(3))
	seeds := c.ListenAddrs()
	cl := newClient(t, seeds)
	weak, safe := randomName("weak-"), randomName("safe-")
	createTopicRF(t, cl, weak, 1, "")
	createTopicRF(t, cl, safe, 3, "2")

	buf, err := runPreflight(t, openPub(t, seeds, kafkapub.WithPreflightTopics(weak, safe)))
	if err != nil {
		t.Fatalf("Preflight: %v", err)
	}
	out := buf.String()
	for _, want := range []string{"replication factor 1 < 3", "min.insync.replicas 1 < 2"} {
		if !strings.Contains(out, "level=WARN") || !strings.Contains(out, want) {
			t.Errorf("no warning %q for %s:\n%s", want, weak, out)
		}
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "WARN") && strings.Contains(line, safe) {
			t.Errorf("warning for the safe topic %s: %s", safe, line)
		}
	}
}

func TestPreflightWarnsLowMinInsync(t *testing.T) {
	c := newFake(t, kfake.NumBrokers(3))
	seeds := c.ListenAddrs()
	topic := randomName("isr-")
	createTopicRF(t, newClient(t, seeds), topic, 3, "1")
	buf, err := runPreflight(t, openPub(t, seeds, kafkapub.WithPreflightTopics(topic)))
	if err != nil {
		t.Fatalf("Preflight: %v", err)
	}
	out := buf.String()
	if !strings.Contains(out, "min.insync.replicas 1 < 2") || strings.Contains(out, "replication factor") {
		t.Errorf("want only the min.insync.replicas warning:\n%s", out)
	}
}

func TestPreflightMissingTopic(t *testing.T) {
	c := newFake(t)
	topic := randomName("missing-")
	buf, err := runPreflight(t, openPub(t, c.ListenAddrs(), kafkapub.WithPreflightTopics(topic)))
	if err != nil {
		t.Fatalf("Preflight: %v", err)
	}
	if out := buf.String(); !strings.Contains(out, "topic not found") || !strings.Contains(out, topic) {
		t.Errorf("no missing-topic warning:\n%s", out)
	}
}

func TestPreflightSkippedWithoutTopics(t *testing.T) {
	c := newFake(t)
	buf, err := runPreflight(t, openPub(t, c.ListenAddrs()))
	if err != nil {
		t.Fatalf("Preflight: %v", err)
	}
	out := buf.String()
	if strings.Contains(out, "WARN") || !strings.Contains(out, "no topic to check") {
		t.Errorf("want a debug line and no warning:\n%s", out)
	}
}

func TestPreflightTopicsOptionValidates(t *testing.T) {
	if _, err := kafkapub.Open([]string{"127.0.0.1:1"}, kafkapub.WithPreflightTopics("bad topic")); err == nil {
		t.Fatal("invalid preflight topic accepted")
	}
}
