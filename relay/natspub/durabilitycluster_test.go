package natspub_test

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jitoutbox/jitoutbox/internal/testnats"
	"github.com/jitoutbox/jitoutbox/relay/natspub"
)

// checkedMsg is the message of the check's Info record.
const checkedMsg = "jitoutbox natspub: stream durability checked"

// records returns the attributes of each record with message msg.
func (h *logCapture) records(msg string) []map[string]string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []map[string]string
	for _, r := range h.recs {
		if r.Message != msg {
			continue
		}
		m := map[string]string{"level": r.Level.String()}
		r.Attrs(func(a slog.Attr) bool {
			m[a.Key] = a.Value.String()
			return true
		})
		out = append(out, m)
	}
	return out
}

// TestPreflightOnCluster runs the start-up check against streams on a
// three-server JetStream cluster: a replicated file stream passes without a
// warning and the Info record says what was checked; a memory stream warns
// and names the fix.
func TestPreflightOnCluster(t *testing.T) {
	ctx := ctxTimeout(t, 2*time.Minute)
	c := testnats.JSCluster(t, 3)
	_, js := newJS(t, c.URL(), nats.RetryOnFailedConnect(true))
	servers := map[string]bool{"n0": true, "n1": true, "n2": true}

	for _, tc := range []struct {
		name     string
		storage  jetstream.StorageType
		replicas int
		warn     []string // substrings of the one expected warning; nil: none
		note     bool     // the replicas-2 availability note
	}{
		{"file R3", jetstream.FileStorage, 3, nil, false},
		{"file R2", jetstream.FileStorage, 2, nil, true},
		{"memory R1", jetstream.MemoryStorage, 1, []string{"memory storage", "recreate the stream with file storage and replicas 3"}, false},
		{"memory R3", jetstream.MemoryStorage, 3, []string{"memory storage", "file storage"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, prefix := testnats.Stream(t, js, func(cfg *jetstream.StreamConfig) {
				cfg.Storage = tc.storage
				cfg.Replicas = tc.replicas
			})
			name := s.CachedInfo().Config.Name
			if _, err := c.StreamLeader(ctx, name); err != nil {
				t.Fatal(err)
			}
			h := &logCapture{}
			p := newJetStreamPub(t, js, natspub.WithSubjectPrefix(prefix))
			if err := p.Preflight(ctx, preflightInfo(slog.New(h))); err != nil {
				t.Fatalf("Preflight = %v", err)
			}

			warnings := h.warnings()
			if tc.warn == nil && len(warnings) != 0 {
				t.Errorf("warnings = %q, want none", warnings)
			}
			if tc.warn != nil {
				if len(warnings) != 1 {
					t.Fatalf("warnings = %q, want one", warnings)
				}
				for _, w := range tc.warn {
					if !strings.Contains(warnings[0], w) {
						t.Errorf("warning %q does not contain %q", warnings[0], w)
					}
				}
			}
			if err := p.CheckStream(ctx, 90*time.Second); (err == nil) != (tc.warn == nil) {
				t.Errorf("CheckStream = %v, want an error: %v", err, tc.warn != nil)
			}

			recs := h.records(checkedMsg)
			if len(recs) != 1 {
				t.Fatalf("%d %q records, want one", len(recs), checkedMsg)
			}
			r := recs[0]
			t.Logf("check record: %v; warnings: %q", r, warnings)
			want := map[string]string{
				"level":         "INFO",
				"stream":        name,
				"storage":       strings.ToLower(tc.storage.String()),
				"replicas":      strconv.Itoa(tc.replicas),
				"at_least_once": strconv.FormatBool(tc.warn == nil),
				"problems":      "0",
			}
			if tc.warn != nil {
				want["problems"] = "1"
			}
			if tc.replicas > 1 {
				want["cluster"] = c.Name()
			}
			for k, v := range want {
				if r[k] != v {
					t.Errorf("%s = %q, want %q (record %v)", k, r[k], v, r)
				}
			}
			if !servers[r["leader"]] {
				t.Errorf("leader = %q, want one of the cluster's servers", r["leader"])
			}
			if tc.replicas > 1 && !strings.HasSuffix(r["followers_current"], "of "+strconv.Itoa(tc.replicas-1)) {
				t.Errorf("followers_current = %q, want \"N of %d\"", r["followers_current"], tc.replicas-1)
			}
			for _, k := range []string{"duplicate_window", "min_duplicate_window", "server_sync_always_declared", "checks"} {
				if r[k] == "" {
					t.Errorf("no %s in %v", k, r)
				}
			}
			if !strings.Contains(r["checks"], "replicas >= 2") {
				t.Errorf("checks = %q, want the rules", r["checks"])
			}
			if _, ok := r["note"]; ok != tc.note {
				t.Errorf("note = %q, want one: %v", r["note"], tc.note)
			}
		})
	}

	// A relay started on an R3 stream logs the check and no warning.
	_, prefix := testnats.Stream(t, js, func(cfg *jetstream.StreamConfig) { cfg.Replicas = 3 })
	h := &logCapture{}
	pub := signalPreflight{JetStream: newJetStreamPub(t, js, natspub.WithSubjectPrefix(prefix)), done: make(chan struct{})}
	r := newSQLiteRelay(t, pub, slog.New(h))
	rctx, cancel := context.WithCancel(ctx)
	runErr := make(chan error, 1)
	go func() { runErr <- r.Run(rctx) }()
	select {
	case <-pub.done:
	case <-ctx.Done():
		t.Fatal("preflight did not run")
	}
	cancel()
	if err := <-runErr; err != nil {
		t.Fatalf("Run = %v", err)
	}
	for _, w := range h.warnings() {
		if strings.Contains(w, "at-least-once") {
			t.Errorf("relay on an R3 stream warned: %q", w)
		}
	}
	if recs := h.records(checkedMsg); len(recs) != 1 || recs[0]["at_least_once"] != "true" || recs[0]["replicas"] != "3" {
		t.Errorf("relay on an R3 stream logged %v, want one check record with replicas 3, at_least_once true", recs)
	}
}
