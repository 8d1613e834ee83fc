package main

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/jitoutbox/jitoutbox/internal/testnats"
)

// recordHandler sends every log record's level and message to a channel.
type recordHandler struct{ ch chan<- slog.Record }

func (h recordHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h recordHandler) Handle(_ context.Context, r slog.Record) error {
	h.ch <- r
	return nil
}
func (h recordHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h recordHandler) WithGroup(string) slog.Handler      { return h }

// TestNATSCloseIsNotADisconnect: a lost server is a WARN with its error; the
// relay's own Close after SIGTERM is a debug line, with no WARN (it used to
// log "NATS disconnected; reconnecting" with err=<nil>).
func TestNATSCloseIsNotADisconnect(t *testing.T) {
	srv := testnats.Server(t)
	records := make(chan slog.Record, 64)
	nc, err := connectNATS(config{natsURL: srv.URL, natsName: "test"}, slog.New(recordHandler{records}))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	next := func(want string) slog.Record {
		t.Helper()
		timeout := time.After(10 * time.Second)
		for {
			select {
			case r := <-records:
				if strings.Contains(r.Message, want) {
					return r
				}
				if r.Level >= slog.LevelWarn {
					t.Fatalf("unexpected %s %q while waiting for %q", r.Level, r.Message, want)
				}
			case <-timeout:
				t.Fatalf("no log record %q", want)
			}
		}
	}
	next("NATS connected")

	srv.Restart(t) // a real loss still warns, and the relay reconnects
	if r := next("NATS disconnected; reconnecting"); r.Level != slog.LevelWarn {
		t.Fatalf("disconnect logged at %s, want WARN", r.Level)
	}
	next("NATS reconnected")

	nc.Close() // what run does after SIGTERM
	if r := next("NATS connection closed"); r.Level != slog.LevelDebug {
		t.Fatalf("close logged at %s, want DEBUG", r.Level)
	}
	select {
	case r := <-records:
		t.Fatalf("after close: %s %q", r.Level, r.Message)
	case <-time.After(200 * time.Millisecond):
	}
}
