// Package testnats gives jitoutbox's tests a NATS server with JetStream:
// an embedded nats-server (Server) that a test may shut down and start again,
// or the shared server named by JITOUTBOX_NATS_URL (URL), a cluster of
// embedded servers whose members a test kills and restarts (JSCluster), and
// per-test streams with random names (Stream) so tests sharing a server
// never collide.
package testnats

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// EnvURL names the environment variable with the shared server's URL.
const EnvURL = "JITOUTBOX_NATS_URL"

// Option adjusts the embedded server's options before it starts.
type Option func(*server.Options)

// WithMaxPayload sets the server's max_payload in bytes.
func WithMaxPayload(n int32) Option { return func(o *server.Options) { o.MaxPayload = n } }

// Embedded is a running (or shut down) embedded nats-server.
type Embedded struct {
	// URL is the client URL ("nats://127.0.0.1:PORT"); it stays the same
	// across Restart.
	URL string
	// Server is the current server instance.
	Server *server.Server

	opts *server.Options
}

// Server starts an embedded nats-server with JetStream (file storage in
// t.TempDir()) on a random loopback port. It is shut down when the test ends.
func Server(t testing.TB, opts ...Option) *Embedded {
	t.Helper()
	o := &server.Options{
		Host:      "127.0.0.1",
		Port:      server.RANDOM_PORT,
		JetStream: true,
		StoreDir:  t.TempDir(),
		NoLog:     true,
		NoSigs:    true,
	}
	for _, opt := range opts {
		opt(o)
	}
	e := &Embedded{opts: o}
	e.start(t)
	addr, ok := e.Server.Addr().(*net.TCPAddr)
	if !ok {
		t.Fatalf("testnats: unexpected listener address %v", e.Server.Addr())
	}
	o.Port = addr.Port // Restart reuses the port, so clients reconnect to it.
	e.URL = fmt.Sprintf("nats://127.0.0.1:%d", addr.Port)
	t.Cleanup(e.Shutdown)
	return e
}

func (e *Embedded) start(t testing.TB) {
	t.Helper()
	o := *e.opts
	s, err := server.NewServer(&o)
	if err != nil {
		t.Fatalf("testnats: new server: %v", err)
	}
	s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		s.Shutdown()
		s.WaitForShutdown()
		t.Fatalf("testnats: embedded server not ready")
	}
	e.Server = s
}

// Shutdown stops the server and waits until all its goroutines have ended.
// It may be called more than once.
func (e *Embedded) Shutdown() {
	if e.Server == nil {
		return
	}
	e.Server.Shutdown()
	e.Server.WaitForShutdown()
}

// Restart shuts the server down (if it is running) and starts a new one on
// the same port with the same store directory, as after an outage: streams
// and their messages survive.
func (e *Embedded) Restart(t testing.TB) {
	t.Helper()
	e.Shutdown()
	e.start(t)
}

// URL returns $JITOUTBOX_NATS_URL when it is set, failing the test when that
// server cannot be reached; otherwise it starts an embedded server and
// returns its URL.
func URL(t testing.TB) string {
	t.Helper()
	if u := os.Getenv(EnvURL); u != "" {
		nc, err := nats.Connect(u, nats.Timeout(5*time.Second), nats.NoReconnect())
		if err != nil {
			t.Fatalf("testnats: %s is set but the server cannot be reached: %v", EnvURL, err)
		}
		nc.Close()
		return u
	}
	return Server(t).URL
}

// Connect connects to url, failing the test on error, and closes the
// connection when the test ends. opts come after testnats' defaults
// (a name, short reconnect waits, unlimited reconnects).
func Connect(t testing.TB, url string, opts ...nats.Option) *nats.Conn {
	t.Helper()
	all := append([]nats.Option{
		nats.Name("jitoutbox-test " + t.Name()),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(50 * time.Millisecond),
		nats.ReconnectJitter(0, 0),
		nats.Timeout(5 * time.Second),
	}, opts...)
	nc, err := nats.Connect(url, all...)
	if err != nil {
		t.Fatalf("testnats: connect: %v", err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// RandomName returns prefix followed by 12 random hex digits (a valid
// stream name and subject token).
func RandomName(prefix string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// Stream creates a stream with a random name that stores the subjects under
// a random prefix ("<prefix>.>"), deleted when the test ends. configure may
// adjust the config (storage, limits, duplicate window) before creation; it
// must keep Name and Subjects. It returns the stream and the subject prefix.
// The deletion runs before the cleanups registered earlier (such as
// Connect's), so js's connection is still open then.
func Stream(t testing.TB, js jetstream.JetStream, configure ...func(*jetstream.StreamConfig)) (jetstream.Stream, string) {
	t.Helper()
	prefix := RandomName("test_")
	cfg := jetstream.StreamConfig{
		Name:     strings.ToUpper(RandomName("TEST_")),
		Subjects: []string{prefix + ".>"},
		Storage:  jetstream.FileStorage,
	}
	for _, c := range configure {
		c(&cfg)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := js.CreateStream(ctx, cfg)
	// A cluster that has just elected its meta leader may not have heard
	// from every peer yet: a replicated stream finds "no suitable peers"
	// (JetStream error 10005) for a moment. Try again until the deadline.
	for err != nil && strings.Contains(err.Error(), "err_code=10005") && ctx.Err() == nil {
		time.Sleep(100 * time.Millisecond)
		s, err = js.CreateStream(ctx, cfg)
	}
	if err != nil {
		t.Fatalf("testnats: create stream %s: %v", cfg.Name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := js.DeleteStream(ctx, cfg.Name); err != nil {
			t.Logf("testnats: delete stream %s: %v", cfg.Name, err)
		}
	})
	return s, prefix
}
