package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/jitoutbox/jitoutbox/internal/e2e/relayproc"
	"github.com/jitoutbox/jitoutbox/internal/tcpproxy"
	"github.com/jitoutbox/jitoutbox/internal/testdb"
	"github.com/jitoutbox/jitoutbox/internal/testnats"
	"github.com/jitoutbox/jitoutbox/relay"
	"github.com/jitoutbox/jitoutbox/txoutbox"
)

// metricRef finds the jitoutbox series a PromQL expression names.
var metricRef = regexp.MustCompile(`\bjitoutbox_[a-z0-9_]+`)

// shippedSeries returns every series deploy/prometheus/alerts.yml and
// deploy/grafana/jitoutbox.json name.
func shippedSeries(t *testing.T) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	b, err := os.ReadFile("../../deploy/prometheus/alerts.yml")
	if err != nil {
		t.Fatal(err)
	}
	var rules struct {
		Groups []struct {
			Rules []struct {
				Expr string `yaml:"expr"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	if err := yaml.Unmarshal(b, &rules); err != nil {
		t.Fatal(err)
	}
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			for _, n := range metricRef.FindAllString(r.Expr, -1) {
				names[n] = true
			}
		}
	}
	if b, err = os.ReadFile("../../deploy/grafana/jitoutbox.json"); err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatal(err)
	}
	for _, p := range dash.Panels {
		for _, q := range p.Targets {
			for _, n := range metricRef.FindAllString(q.Expr, -1) {
				names[n] = true
			}
		}
	}
	if len(names) < 15 {
		t.Fatalf("only %d series in the shipped rules and dashboard: %v", len(names), names)
	}
	return names
}

// exposed reports whether a Prometheus text exposition has a sample of
// series name.
func exposed(body, name string) bool {
	for _, line := range strings.Split(body, "\n") {
		if rest, ok := strings.CutPrefix(line, name); ok && (strings.HasPrefix(rest, "{") || strings.HasPrefix(rest, " ")) {
			return true
		}
	}
	return false
}

// get returns the status and body of GET url, with token as bearer when
// set.
func get(t *testing.T, url, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, string(b)
}

// TestObserverExportsShippedSeries: the relay's own exporter set-up emits,
// under their exact names, every series the shipped alert rules and
// dashboard query, once each kind of event happened (fed here through the
// hooks the relay calls, and a stats callback); the token guards /metrics
// only.
func TestObserverExportsShippedSeries(t *testing.T) {
	const token = "0123456789abcdef-token"
	log := newLogger(config{}, io.Discard)
	ctx, cancel := context.WithCancel(context.Background())
	obs, err := newObserver(ctx, config{metricsAddr: "127.0.0.1:0", metricsToken: token}, log)
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan struct{})
	go func() { defer close(served); obs.serve(ctx) }()
	defer func() { cancel(); <-served }()

	h := metricHooks{batchLogger: batchLogger{log: log}, m: obs.metrics}
	for _, crit := range []bool{true, false} {
		h.Published(ctx, relay.Message{Critical: crit}, time.Millisecond)
		h.DeadLettered(ctx, relay.Message{Critical: crit}, errors.New("x"))
	}
	h.BatchEnd(h.BatchStart(ctx, relay.BatchStartInfo{Size: 1}), relay.BatchEndInfo{Retried: 1, Released: 1, Err: errors.New("db")})
	reg, err := obs.metrics.ObserveStats(func(context.Context) (relay.Stats, error) {
		return relay.Stats{Pending: 1, Dead: 1, LiveRelays: 1, OwnedPartitions: 1, Partitions: 1, LastCleanup: time.Now()}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = reg.Unregister() }()

	base := "http://" + obs.ln.Addr().String()
	if code, _ := get(t, base+"/metrics", ""); code != http.StatusUnauthorized {
		t.Fatalf("/metrics without the token: %d, want 401", code)
	}
	if code, _ := get(t, base+"/metrics", "wrong-token-0123456789"); code != http.StatusUnauthorized {
		t.Fatalf("/metrics with a wrong token: %d, want 401", code)
	}
	code, body := get(t, base+"/metrics", token)
	if code != http.StatusOK {
		t.Fatalf("/metrics: %d", code)
	}
	for n := range shippedSeries(t) {
		if !exposed(body, n) {
			t.Errorf("/metrics lacks %s, which the shipped rules or dashboard use", n)
		}
	}
	if code, _ := get(t, base+"/healthz", ""); code != http.StatusOK {
		t.Fatalf("/healthz: %d", code)
	}
	if code, body := get(t, base+"/readyz", ""); code != http.StatusServiceUnavailable || !strings.Contains(body, "starting") {
		t.Fatalf("/readyz before the relay is set up: %d %q, want 503 starting", code, body)
	}
	if t.Failed() {
		t.Logf("metrics:\n%s", body)
	}
}

// TestEndpointsOnServers runs the command against PostgreSQL and MariaDB
// (behind a TCP proxy the test cuts) and an embedded NATS server (which it
// stops): /metrics shows the published events and every series of the
// shipped rules and dashboard (but the last cleanup's time),
// /healthz answers 200, /readyz 200 when healthy, 503 while the database is
// unreachable, 200 again once it is back, and 503 once the broker is down.
func TestEndpointsOnServers(t *testing.T) {
	for _, target := range testdb.Targets() {
		if target.Dialect == "sqlite" || target.Name == "postgres-pgx" {
			continue
		}
		t.Run(target.Name, func(t *testing.T) {
			db, dsn := target.Open(t)
			proxy, proxied := tcpproxy.NewURL(t, dsn)
			srv := testnats.Server(t)
			r := startRun(t, "-dialect", target.Dialect, "-dsn", proxied, "-migrate", "-nats", srv.URL, "-publisher", "core",
				"-wake", "none", "-poll", "100ms", "-rebalance", "1s", "-metrics-addr", "127.0.0.1:0")
			base := "http://" + serverAddr(t, r.log)
			waitStatus(t, base+"/readyz", http.StatusOK, r.log)

			ob, err := txoutbox.New(db, testdb.NewDialect(t, target.Dialect))
			if err != nil {
				t.Fatal(err)
			}
			for i := range 5 {
				tx, err := ob.Begin(context.Background(), nil)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := tx.Add(txoutbox.Event{AggregateType: "order", AggregateID: strconv.Itoa(i), EventType: "placed", Payload: []byte(`{}`)}); err != nil {
					t.Fatal(err)
				}
				if err := tx.Commit(); err != nil {
					t.Fatal(err)
				}
			}
			deadline := time.Now().Add(30 * time.Second)
			var body string
			for {
				_, body = get(t, base+"/metrics", "")
				if strings.Contains(body, `jitoutbox_relay_published_total{critical="false"`) && strings.Contains(body, "jitoutbox_outbox_backlog") &&
					metricSum(body, "jitoutbox_relay_published_total") >= 5 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("/metrics does not show 5 published events:\n%s\n%s", body, r.log.String())
				}
				time.Sleep(100 * time.Millisecond)
			}
			// Every series the shipped rules and dashboard use, but the last
			// cleanup's time (observed once a cleanup has run); the counters
			// of events that did not happen are there at 0.
			shipped := shippedSeries(t)
			delete(shipped, "jitoutbox_relay_cleanup_last_success_seconds")
			for n := range shipped {
				if !exposed(body, n) {
					t.Errorf("/metrics lacks %s, which the shipped rules or dashboard use", n)
				}
			}
			for _, n := range []string{"jitoutbox_relay_commit_to_ack_seconds_bucket", "jitoutbox_outbox_backlog",
				"jitoutbox_outbox_oldest_pending_age_seconds", "jitoutbox_outbox_dead_rows", "jitoutbox_outbox_live_relays",
				"jitoutbox_outbox_partitions", "jitoutbox_outbox_owned_partitions", "jitoutbox_outbox_blocked_aggregates",
				"jitoutbox_outbox_published_rows", "jitoutbox_outbox_cleanup_lag_seconds", "jitoutbox_outbox_rows_past_retention"} {
				if !exposed(body, n) {
					t.Errorf("/metrics lacks %s", n)
				}
			}
			if code, _ := get(t, base+"/healthz", ""); code != http.StatusOK {
				t.Fatalf("/healthz: %d", code)
			}

			proxy.Refuse()
			proxy.Cut()
			if body := waitStatus(t, base+"/readyz", http.StatusServiceUnavailable, r.log); !strings.Contains(body, "database:") {
				t.Fatalf("/readyz with the database cut does not name it: %q", body)
			}
			if code, _ := get(t, base+"/healthz", ""); code != http.StatusOK {
				t.Fatalf("/healthz with the database cut: %d, want 200 (the process is alive)", code)
			}
			proxy.Resume()
			waitStatus(t, base+"/readyz", http.StatusOK, r.log)

			srv.Shutdown()
			if body := waitStatus(t, base+"/readyz", http.StatusServiceUnavailable, r.log); !strings.Contains(body, "broker:") {
				t.Fatalf("/readyz with NATS down does not name the broker: %q", body)
			}
			r.stop(t)
		})
	}
}

// serverAddr returns the address the metrics server listens on, from its
// start-up line.
func serverAddr(t *testing.T, log *relayproc.Log) string {
	t.Helper()
	if err := log.Wait(20*time.Second, 1, "serving /metrics"); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	for _, line := range strings.Split(log.String(), "\n") {
		if !strings.Contains(line, "serving /metrics") {
			continue
		}
		var rec struct {
			Addr string `json:"addr"`
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil || rec.Addr == "" {
			t.Fatalf("no addr in %q: %v", line, err)
		}
		return rec.Addr
	}
	t.Fatal("no serving line")
	return ""
}

// waitStatus polls url until it answers want, and returns the body.
func waitStatus(t *testing.T, url string, want int, log *relayproc.Log) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, body := get(t, url, "")
		if code == want {
			return body
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d %q, want %d\n%s", url, code, body, want, log.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// metricSum adds up the samples of a counter in a text exposition.
func metricSum(body, name string) float64 {
	var sum float64
	for _, line := range strings.Split(body, "\n") {
		if !strings.HasPrefix(line, name+"{") && !strings.HasPrefix(line, name+" ") {
			continue
		}
		f := strings.Fields(line)
		if v, err := strconv.ParseFloat(f[len(f)-1], 64); err == nil {
			sum += v
		}
	}
	return sum
}
