package rabbitpub_test

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jitoutbox/jitoutbox/relay"
	"github.com/jitoutbox/jitoutbox/relay/rabbitpub"
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

// preflight runs p's Preflight with a logger writing to the returned buffer.
func preflight(t *testing.T, p relay.Publisher) (*syncBuffer, error) {
	t.Helper()
	buf := &syncBuffer{}
	log := slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	pf, ok := p.(relay.Preflighter)
	if !ok {
		t.Fatal("rabbitpub.Publisher does not implement relay.Preflighter")
	}
	err := pf.Preflight(ctxTimeout(t, 10*time.Second), relay.PreflightInfo{Owner: "t", LeaseDuration: time.Second, PublishTimeout: 5 * time.Second, Logger: log})
	return buf, err
}

func TestPreflightCleanSetupNoWarnings(t *testing.T) {
	b := newBroker(t)
	x := b.exchange()
	buf, err := preflight(t, newPub(t, b.url, rabbitpub.WithExchange(x)))
	if err != nil {
		t.Fatalf("Preflight: %v", err)
	}
	if strings.Contains(buf.String(), "WARN") {
		t.Errorf("warnings for a sound setup:\n%s", buf)
	}
}

func TestPreflightWarnsMissingExchange(t *testing.T) {
	b := newBroker(t)
	x := randomName("jitoutbox-test-missing-")
	buf, err := preflight(t, newPub(t, b.url, rabbitpub.WithExchange(x)))
	if err != nil {
		t.Fatalf("Preflight: %v", err)
	}
	out := buf.String()
	if !strings.Contains(out, "level=WARN") || !strings.Contains(out, "exchange not found") || !strings.Contains(out, x) {
		t.Errorf("no missing-exchange warning naming %s:\n%s", x, out)
	}
	if strings.Contains(out, "mandatory") {
		t.Errorf("mandatory warning without WithoutMandatory:\n%s", out)
	}
}

func TestPreflightWarnsWithoutMandatory(t *testing.T) {
	b := newBroker(t)
	x := b.exchange()
	buf, err := preflight(t, newPub(t, b.url, rabbitpub.WithExchange(x), rabbitpub.WithoutMandatory()))
	if err != nil {
		t.Fatalf("Preflight: %v", err)
	}
	out := buf.String()
	if !strings.Contains(out, "level=WARN") || !strings.Contains(out, "without the mandatory flag") {
		t.Errorf("no WithoutMandatory warning:\n%s", out)
	}
	if strings.Contains(out, "exchange not found") {
		t.Errorf("missing-exchange warning for an existing exchange:\n%s", out)
	}
}

func TestPreflightRouterExchange(t *testing.T) {
	b := newBroker(t)
	x := randomName("jitoutbox-test-missing-")
	router := func(relay.Message) (rabbitpub.Route, error) { return rabbitpub.Route{Exchange: x, Key: "k"}, nil }
	buf, err := preflight(t, newPub(t, b.url, rabbitpub.WithRouter(router)))
	if err != nil {
		t.Fatalf("Preflight: %v", err)
	}
	if !strings.Contains(buf.String(), "exchange not found") {
		t.Errorf("no missing-exchange warning for the router's exchange:\n%s", buf)
	}
	// The default exchange always exists: nothing to check.
	def := func(relay.Message) (rabbitpub.Route, error) { return rabbitpub.Route{Key: "q"}, nil }
	buf, err = preflight(t, newPub(t, b.url, rabbitpub.WithRouter(def)))
	if err != nil || strings.Contains(buf.String(), "WARN") {
		t.Errorf("default exchange: err %v, log:\n%s", err, buf)
	}
}

func TestPreflightUnreachableBrokerReturnsError(t *testing.T) {
	p := newPub(t, "amqp://guest:guest@127.0.0.1:1/", rabbitpub.WithExchange("x"), rabbitpub.WithDialTimeout(time.Second))
	_, err := preflight(t, p)
	if err == nil {
		t.Fatal("Preflight against no broker returned nil")
	}
	if strings.Contains(err.Error(), "guest:guest") {
		t.Errorf("error leaks the URL: %v", err)
	}
}
