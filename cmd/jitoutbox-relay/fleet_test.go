package main

import (
	"context"
	"database/sql"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jitoutbox/jitoutbox/relay"
)

// TestFleetReadyz: /readyz of a fleet is 503 until a table is served,
// then 200 with each failing table in the body; a source's database that
// does not answer, or the broker, make it 503.
func TestFleetReadyz(t *testing.T) {
	path := writeConfig(t, "sources:\n  - name: main\n    dialect: sqlite\n    dsn: file:x.db\n    tables: [a, b]\n"+
		"  - name: down\n    dialect: sqlite\n    dsn: file:y.db\n    tables: [outbox]\n")
	cfg, err := parseFlags([]string{"-config", path}, envOf(nil), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	up, err := sql.Open("sqlite", "file:"+t.TempDir()+"/up.db")
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	down, err := sql.Open("sqlite", "file:"+t.TempDir()+"/down.db")
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu        sync.Mutex
		states    []relay.TableState
		brokerErr error
	)
	set := func(s []relay.TableState, b error) {
		mu.Lock()
		defer mu.Unlock()
		states, brokerErr = s, b
	}
	tables := func() []relay.TableState { mu.Lock(); defer mu.Unlock(); return states }
	broker := check{name: "broker", fn: func(context.Context) error { mu.Lock(); defer mu.Unlock(); return brokerErr }}
	o := &observer{log: newLogger(cfg, io.Discard)}
	o.ready.setChecks(fleetReadyChecks(cfg, []*sql.DB{up, down}, tables, broker), cfg.secrets())
	srv := httptest.NewServer(o.handler())
	defer srv.Close()
	probe := func() (int, string) {
		o.ready.mu.Lock()
		o.ready.at = o.ready.at.AddDate(-1, 0, 0) // past the cache
		o.ready.mu.Unlock()
		return get(t, srv.URL+"/readyz", "")
	}

	set(nil, nil)
	if code, body := probe(); code != http.StatusServiceUnavailable || !strings.Contains(body, "tables: no table is served yet (0 known, 0 failing)") {
		t.Fatalf("before any table: %d %q", code, body)
	}
	bad := errors.New("schema at version 3, want 5\nrun -migrate")
	set([]relay.TableState{{Source: "main", Table: "a", Serving: true}, {Source: "main", Table: "b", Err: bad},
		{Source: "down", Table: "outbox"}}, nil)
	code, body := probe()
	if code != http.StatusOK || !strings.HasPrefix(body, "ready\n") ||
		!strings.Contains(body, "table: main/b: schema at version 3, want 5; run -migrate\n") || strings.Contains(body, "down/outbox") {
		t.Fatalf("one table served, one failing: %d %q", code, body)
	}
	set([]relay.TableState{{Source: "main", Table: "b", Err: bad}}, errors.New("NATS connection RECONNECTING"))
	code, body = probe()
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "broker: NATS connection RECONNECTING") ||
		!strings.Contains(body, "tables: no table is served yet (1 known, 1 failing)") || !strings.Contains(body, "table: main/b:") {
		t.Fatalf("broker down, no table served: %d %q", code, body)
	}
	set([]relay.TableState{{Source: "main", Table: "a", Serving: true}}, nil)
	_ = down.Close() // a closed pool answers no ping
	if code, body = probe(); code != http.StatusServiceUnavailable || !strings.Contains(body, "database down: ") || strings.Contains(body, "database main") {
		t.Fatalf("a source's database down: %d %q", code, body)
	}
}

// TestFleetMetricsServed: with sources, /metrics carries each table's
// series under its source and table labels, counters at 0 from the
// table's first batch hook.
func TestFleetMetricsServed(t *testing.T) {
	path := writeConfig(t, "sources:\n  - name: main\n    dialect: sqlite\n    dsn: file:x.db\n    patterns: [\"outbox_*\"]\n")
	cfg, err := parseFlags([]string{"-config", path, "-metrics-addr", "127.0.0.1:0"}, envOf(nil), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	log := newLogger(cfg, io.Discard)
	ctx, cancel := context.WithCancel(context.Background())
	obs, err := newObserver(ctx, cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan struct{})
	go func() { defer close(served); obs.serve(ctx) }()
	defer func() { cancel(); <-served }()

	hooks := fleetHooks(log, obs)
	h := hooks("main", "outbox_a").(metricHooks)
	h.Published(h.BatchStart(ctx, relay.BatchStartInfo{Size: 1}), relay.Message{Critical: true}, time.Millisecond)
	hooks("main", "outbox_b")
	_, body := get(t, "http://"+obs.ln.Addr().String()+"/metrics", "")
	for _, tc := range []struct {
		name, table, critical, value string
	}{
		{"jitoutbox_relay_published_total", "outbox_a", "true", "1"},
		{"jitoutbox_relay_published_total", "outbox_b", "true", "0"},
		{"jitoutbox_relay_dead_total", "outbox_a", "false", "0"},
	} {
		if got := sample(body, tc.name, `source="main"`, `table="`+tc.table+`"`, `critical="`+tc.critical+`"`); got != tc.value {
			t.Errorf("%s of main/%s critical=%s = %q, want %s", tc.name, tc.table, tc.critical, got, tc.value)
		}
	}
	if t.Failed() {
		t.Logf("metrics:\n%s", body)
	}
}

// sample returns the value of the sample of series name in a Prometheus
// text exposition whose labels hold each of labels, "" when there is none.
func sample(body, name string, labels ...string) string {
	for _, line := range strings.Split(body, "\n") {
		rest, ok := strings.CutPrefix(line, name+"{")
		if !ok {
			continue
		}
		lbls, value, _ := strings.Cut(rest, "} ")
		all := true
		for _, l := range labels {
			all = all && strings.Contains(","+lbls+",", ","+l+",")
		}
		if all {
			return value
		}
	}
	return ""
}
