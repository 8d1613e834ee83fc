package jitotel_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.yaml.in/yaml/v3"

	jitotel "github.com/jitoutbox/jitoutbox/otel"
	"github.com/jitoutbox/jitoutbox/relay"
)

// exportedNames returns the Prometheus series names a prometheus exporter
// really emits for every jitotel instrument (units and _total as the
// exporter translates them; _bucket, _sum and _count of histograms).
func exportedNames(t *testing.T) map[string]bool {
	t.Helper()
	reg := prometheus.NewRegistry()
	exp, err := otelprom.New(otelprom.WithRegisterer(reg), otelprom.WithoutScopeInfo(), otelprom.WithoutTargetInfo())
	if err != nil {
		t.Fatal(err)
	}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exp))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	m, err := jitotel.NewRelayMetrics(mp)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, crit := range []bool{true, false} {
		m.Published(ctx, relay.Message{Critical: crit}, time.Millisecond)
		m.DeadLettered(ctx, relay.Message{Critical: crit}, errors.New("x"))
	}
	m.BatchEnd(ctx, relay.BatchEndInfo{Retried: 1, Released: 1, Err: errors.New("db")})
	reg2, err := m.ObserveStats(func(context.Context) (relay.Stats, error) {
		return relay.Stats{Pending: 1, Dead: 1, PublishedRows: 1, OldestPendingAge: time.Second, CleanupLag: time.Second, PastRetention: 1,
			BlockedDead: 1, BlockedRetry: 1, LiveRelays: 1, OwnedPartitions: 1, Partitions: 1,
			LastCleanup: time.Now(), CleanupFailures: 1}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = reg2.Unregister() })
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, f := range families {
		n := f.GetName()
		names[n] = true
		if f.GetType().String() == "HISTOGRAM" {
			names[n+"_bucket"], names[n+"_sum"], names[n+"_count"] = true, true, true
		}
	}
	// Every instrument is there: one family per Metric* constant.
	if len(families) != 19 {
		t.Errorf("exporter emitted %d families, want 19 (one per instrument): %v", len(families), slices.Sorted(mapKeys(names)))
	}
	return names
}

func mapKeys(m map[string]bool) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// metricRef finds the jitoutbox series a PromQL expression names.
var metricRef = regexp.MustCompile(`\bjitoutbox_[a-z0-9_]+`)

// checkExpr reports the metrics expr names that jitotel does not export.
func checkExpr(t *testing.T, where, expr string, names map[string]bool) {
	t.Helper()
	refs := metricRef.FindAllString(expr, -1)
	if len(refs) == 0 {
		t.Errorf("%s: names no jitoutbox metric: %q", where, expr)
	}
	for _, r := range refs {
		if !names[r] {
			t.Errorf("%s: %s is not a metric jitotel exports (it exports %v)", where, r, slices.Sorted(mapKeys(names)))
		}
	}
}

// TestDeployAlertRules: deploy/prometheus/alerts.yml parses, covers each
// condition an operator is paged for, gives every rule a runbook line, and
// names only metrics jitotel exports.
func TestDeployAlertRules(t *testing.T) {
	names := exportedNames(t)
	b, err := os.ReadFile("../deploy/prometheus/alerts.yml")
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Groups []struct {
			Name  string `yaml:"name"`
			Rules []struct {
				Alert       string            `yaml:"alert"`
				Expr        string            `yaml:"expr"`
				For         string            `yaml:"for"`
				Labels      map[string]string `yaml:"labels"`
				Annotations map[string]string `yaml:"annotations"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	dec.KnownFields(true)
	if err := dec.Decode(&file); err != nil {
		t.Fatal(err)
	}
	var alerts []string
	for _, g := range file.Groups {
		for _, r := range g.Rules {
			alerts = append(alerts, r.Alert)
			checkExpr(t, r.Alert, r.Expr, names)
			if strings.TrimSpace(r.Annotations["runbook"]) == "" || r.Annotations["summary"] == "" {
				t.Errorf("%s: needs a summary and a runbook annotation", r.Alert)
			}
			if r.Labels["severity"] == "" {
				t.Errorf("%s: no severity label", r.Alert)
			}
			if r.For != "" {
				if _, err := time.ParseDuration(r.For); err != nil {
					t.Errorf("%s: for %q: %v", r.Alert, r.For, err)
				}
			}
		}
	}
	for _, want := range []string{"JitoutboxBacklogHigh", "JitoutboxOldestPendingOld", "JitoutboxDeadLetters",
		"JitoutboxBlockedAggregates", "JitoutboxNoRelay", "JitoutboxCleanupFailing", "JitoutboxCleanupLate", "JitoutboxCleanupStopped"} {
		if !slices.Contains(alerts, want) {
			t.Errorf("no alert %s (have %v)", want, alerts)
		}
	}
}

// TestDeployDashboard: deploy/grafana/jitoutbox.json is a dashboard whose
// every query names only metrics jitotel exports.
func TestDeployDashboard(t *testing.T) {
	names := exportedNames(t)
	b, err := os.ReadFile("../deploy/grafana/jitoutbox.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Title  string `json:"title"`
		UID    string `json:"uid"`
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatal(err)
	}
	if dash.Title == "" || dash.UID == "" || len(dash.Panels) == 0 {
		t.Fatalf("not a dashboard: title %q uid %q, %d panels", dash.Title, dash.UID, len(dash.Panels))
	}
	used := map[string]bool{}
	for _, p := range dash.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, q := range p.Targets {
			checkExpr(t, "panel "+p.Title, q.Expr, names)
			for _, r := range metricRef.FindAllString(q.Expr, -1) {
				used[r] = true
			}
		}
	}
	// The dashboard shows every instrument (a histogram through _bucket).
	for n := range names {
		base := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(n, "_bucket"), "_sum"), "_count")
		if !used[n] && !used[base+"_bucket"] {
			t.Errorf("the dashboard does not show %s", n)
		}
	}
}
