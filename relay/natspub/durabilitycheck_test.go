package natspub_test

import (
	"context"
	"database/sql"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jitoutbox/jitoutbox/dialects/sqlite"
	"github.com/jitoutbox/jitoutbox/internal/testnats"
	"github.com/jitoutbox/jitoutbox/relay"
	"github.com/jitoutbox/jitoutbox/relay/natspub"
)

// logCapture is a slog.Handler that keeps every record.
type logCapture struct {
	mu   sync.Mutex
	recs []slog.Record
}

func (h *logCapture) Enabled(context.Context, slog.Level) bool { return true }
func (h *logCapture) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.recs = append(h.recs, r.Clone())
	return nil
}
func (h *logCapture) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *logCapture) WithGroup(string) slog.Handler      { return h }

// warnings returns "message: problem" for each warning.
func (h *logCapture) warnings() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, r := range h.recs {
		if r.Level < slog.LevelWarn {
			continue
		}
		s := r.Message
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "problem" || a.Key == "err" {
				s += ": " + a.Value.String()
			}
			return true
		})
		out = append(out, s)
	}
	return out
}

func preflightInfo(log *slog.Logger) relay.PreflightInfo {
	return relay.PreflightInfo{Owner: "test", LeaseDuration: 30 * time.Second, PublishTimeout: 5 * time.Second, Logger: log}
}

func TestCheckStreamAgainstServer(t *testing.T) {
	ctx := ctxTimeout(t, 30*time.Second)
	_, js := newJS(t, testnats.URL(t))
	mem, memPrefix := testnats.Stream(t, js, func(c *jetstream.StreamConfig) { c.Storage = jetstream.MemoryStorage })
	_, filePrefix := testnats.Stream(t, js)
	short, shortPrefix := testnats.Stream(t, js, func(c *jetstream.StreamConfig) { c.Duplicates = 10 * time.Second })
	name := func(s jetstream.Stream) string { return s.CachedInfo().Config.Name }

	cases := []struct {
		name string
		opts []natspub.Option
		want []string // substrings of the problems; nil: suitable
	}{
		{"memory by name", []natspub.Option{natspub.WithSubjectPrefix(memPrefix), natspub.WithExpectStream(name(mem))}, []string{"memory storage"}},
		{"memory by subject", []natspub.Option{natspub.WithSubjectPrefix(memPrefix)}, []string{"memory storage"}},
		{"file R1, sync unknown", []natspub.Option{natspub.WithSubjectPrefix(filePrefix)}, []string{"replicas 1 < 2"}},
		{"file R1, sync always", []natspub.Option{natspub.WithSubjectPrefix(filePrefix), natspub.WithServerSyncAlways()}, nil},
		{"short window", []natspub.Option{natspub.WithSubjectPrefix(shortPrefix), natspub.WithServerSyncAlways(), natspub.WithExpectStream(name(short))}, []string{"duplicate window 10s"}},
		{"no stream", []natspub.Option{natspub.WithSubjectPrefix(testnats.RandomName("none_"))}, []string{"no stream stores subject"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := newJetStreamPub(t, js, c.opts...)
			err := p.CheckStream(ctx, 90*time.Second)
			if c.want == nil {
				if err != nil {
					t.Fatalf("CheckStream = %v, want nil", err)
				}
			} else {
				var de *natspub.DurabilityError
				if !errors.Is(err, natspub.ErrNotDurable) || !errors.As(err, &de) {
					t.Fatalf("CheckStream = %v, want a *DurabilityError matching ErrNotDurable", err)
				}
				if len(de.Problems) != len(c.want) {
					t.Fatalf("problems = %q, want %q", de.Problems, c.want)
				}
				for i, w := range c.want {
					if !strings.Contains(de.Problems[i], w) {
						t.Errorf("problem %d = %q, want %q", i, de.Problems[i], w)
					}
				}
			}

			// Preflight logs one warning per problem and returns nil.
			h := &logCapture{}
			if err := p.Preflight(ctx, preflightInfo(slog.New(h))); err != nil {
				t.Fatalf("Preflight = %v", err)
			}
			if got := h.warnings(); len(got) != len(c.want) {
				t.Errorf("Preflight warnings = %q, want %d", got, len(c.want))
			}
		})
	}

	// The window check uses the relay's lease plus the outage allowance.
	p := newJetStreamPub(t, js, natspub.WithSubjectPrefix(filePrefix), natspub.WithServerSyncAlways(),
		natspub.WithOutageAllowance(2*time.Minute))
	h := &logCapture{}
	if err := p.Preflight(ctx, preflightInfo(slog.New(h))); err != nil {
		t.Fatal(err)
	}
	if got := h.warnings(); len(got) != 1 || !strings.Contains(got[0], "shorter than 2m30s") {
		t.Errorf("warnings with a 30s lease + 2m allowance and a 2m window = %q, want one about 2m30s", got)
	}
	off := newJetStreamPub(t, js, natspub.WithSubjectPrefix(memPrefix), natspub.WithoutDurabilityCheck())
	h = &logCapture{}
	if err := off.Preflight(ctx, preflightInfo(slog.New(h))); err != nil || len(h.warnings()) != 0 {
		t.Errorf("WithoutDurabilityCheck: Preflight = %v, warnings %q; want nil, none", err, h.warnings())
	}
	if _, err := natspub.NewJetStream(js, natspub.WithOutageAllowance(-time.Second)); !errors.Is(err, natspub.ErrInvalidOption) {
		t.Errorf("negative outage allowance: err = %v, want ErrInvalidOption", err)
	}
}

// signalPreflight wraps a JetStream publisher and reports when the relay's
// preflight has finished.
type signalPreflight struct {
	*natspub.JetStream
	done chan struct{}
}

func (s signalPreflight) Preflight(ctx context.Context, info relay.PreflightInfo) error {
	defer close(s.done)
	return s.JetStream.Preflight(ctx, info)
}

// newSQLiteRelay returns a relay over an empty, migrated SQLite table.
func newSQLiteRelay(t *testing.T, pub relay.Publisher, log *slog.Logger) *relay.Relay {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "preflight.db")+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	d, err := sqlite.New()
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Migrate(context.Background(), db); err != nil {
		t.Fatal(err)
	}
	r, err := relay.New(db, d, pub, relay.Config{Logger: log, PollInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestRelayWarnsAtStartup runs relays and checks that the start-up warning
// appears for a memory stream and not for a suitable one.
func TestRelayWarnsAtStartup(t *testing.T) {
	_, js := newJS(t, testnats.URL(t))
	_, memPrefix := testnats.Stream(t, js, func(c *jetstream.StreamConfig) { c.Storage = jetstream.MemoryStorage })
	_, filePrefix := testnats.Stream(t, js)
	for _, c := range []struct {
		name  string
		opts  []natspub.Option
		warns bool
	}{
		{"memory R1", []natspub.Option{natspub.WithSubjectPrefix(memPrefix)}, true},
		{"file R1 sync always", []natspub.Option{natspub.WithSubjectPrefix(filePrefix), natspub.WithServerSyncAlways()}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := &logCapture{}
			pub := signalPreflight{JetStream: newJetStreamPub(t, js, c.opts...), done: make(chan struct{})}
			r := newSQLiteRelay(t, pub, slog.New(h))
			ctx, cancel := context.WithCancel(context.Background())
			runErr := make(chan error, 1)
			go func() { runErr <- r.Run(ctx) }()
			select {
			case <-pub.done:
			case <-time.After(30 * time.Second):
				t.Fatal("preflight did not run")
			}
			cancel()
			if err := <-runErr; err != nil {
				t.Fatalf("Run = %v", err)
			}
			var got []string
			for _, w := range h.warnings() {
				if strings.Contains(w, "at-least-once") {
					got = append(got, w)
				}
			}
			if c.warns && (len(got) != 1 || !strings.Contains(got[0], "memory storage")) {
				t.Errorf("warnings = %q, want one about memory storage", got)
			}
			if !c.warns && len(got) != 0 {
				t.Errorf("warnings = %q, want none", got)
			}
		})
	}
}
