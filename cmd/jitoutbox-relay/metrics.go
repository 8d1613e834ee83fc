package main

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/jitoutbox/jitoutbox/internal/redact"
	jitotel "github.com/jitoutbox/jitoutbox/otel"
)

// Settings of the metrics server.
const (
	// shutdownGrace bounds how long a stopping server waits for requests
	// in flight.
	shutdownGrace = 5 * time.Second
	// checkTimeout bounds each readiness check.
	checkTimeout = 2 * time.Second
	// readyCacheFor is how long a readiness answer is reused: probes,
	// whoever sends them, cost the database and the broker at most one
	// round of checks a second.
	readyCacheFor = time.Second
)

// observer serves -metrics-addr: /metrics through jitotel's instruments and
// the OpenTelemetry Prometheus exporter (a registry of its own, nothing
// global), /healthz and /readyz.
//
// Access: the endpoints only read, and print counts and check names, never
// a secret, so unlike outboxctl's console (which acts on the outbox) a
// non-loopback address needs no token: Prometheus and the kubelet must
// reach it from other hosts. -metrics-token, when set, guards /metrics
// with "Authorization: Bearer <token>"; /healthz and /readyz stay open for
// the probes.
type observer struct {
	log     *slog.Logger
	token   string
	secrets []string

	mp *sdkmetric.MeterProvider
	// metrics records the relay of the one-table case, fleet the tables
	// of -config's sources (one of them is set).
	metrics *jitotel.RelayMetrics
	fleet   *jitotel.FleetMetrics
	prom    http.Handler
	ready   readiness
	ln      net.Listener
}

// newObserver listens on cfg.metricsAddr (so a bad or busy address is a
// start-up error) and sets the instruments up; serve serves.
func newObserver(ctx context.Context, cfg config, log *slog.Logger) (*observer, error) {
	reg := prometheus.NewRegistry()
	exp, err := otelprom.New(otelprom.WithRegisterer(reg))
	if err != nil {
		return nil, fmt.Errorf("metrics: prometheus exporter: %w", err)
	}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exp))
	var (
		m     *jitotel.RelayMetrics
		fleet *jitotel.FleetMetrics
	)
	if cfg.fleet() {
		fleet, err = jitotel.NewFleetMetrics(mp)
	} else {
		m, err = jitotel.NewRelayMetrics(mp)
	}
	if err != nil {
		_ = mp.Shutdown(ctx)
		return nil, fmt.Errorf("metrics: %w", err)
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", cfg.metricsAddr)
	if err != nil {
		_ = mp.Shutdown(ctx)
		return nil, fmt.Errorf("-metrics-addr: %w", err)
	}
	return &observer{log: log, token: cfg.metricsToken, secrets: cfg.secrets(), mp: mp, metrics: m, fleet: fleet,
		prom: promhttp.HandlerFor(reg, promhttp.HandlerOpts{}), ln: ln}, nil
}

// handler routes the three endpoints.
func (o *observer) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, r *http.Request) {
		if o.token != "" {
			bearer, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
			if !ok || subtle.ConstantTimeCompare([]byte(bearer), []byte(o.token)) != 1 {
				w.Header().Set("WWW-Authenticate", `Bearer realm="jitoutbox-relay"`)
				http.Error(w, "a valid bearer token is required", http.StatusUnauthorized)
				return
			}
		}
		o.prom.ServeHTTP(w, r)
	})
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		failing, notes := o.ready.probe(r.Context(), o.log)
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		body := "ready\n"
		if len(failing) > 0 {
			w.WriteHeader(http.StatusServiceUnavailable)
			body = "not ready\n" + strings.Join(failing, "\n") + "\n"
		}
		if len(notes) > 0 {
			body += strings.Join(notes, "\n") + "\n"
		}
		_, _ = w.Write([]byte(body))
	})
	return mux
}

// serve serves until ctx ends, then shuts the server down (waiting up to
// shutdownGrace for requests in flight) and the meter provider.
func (o *observer) serve(ctx context.Context) {
	srv := &http.Server{
		Handler:           o.handler(),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       60 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return ctx },
		ErrorLog:          slog.NewLogLogger(o.log.Handler(), slog.LevelWarn),
	}
	auth := "none"
	if o.token != "" {
		auth = "bearer token on /metrics"
	}
	o.log.Info("jitoutbox-relay: serving /metrics, /healthz and /readyz", "addr", o.ln.Addr().String(), "auth", auth)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(o.ln) }()
	select {
	case err := <-done:
		o.log.Error("jitoutbox-relay: metrics server stopped", "err", err)
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownGrace)
		_ = srv.Shutdown(sctx)
		cancel()
		<-done
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownGrace)
	defer cancel()
	_ = o.mp.Shutdown(sctx)
}

// check is one readiness condition: fn returns nil when it holds. A soft
// check's failure is reported in /readyz's body but leaves the relay ready.
type check struct {
	name string
	fn   func(ctx context.Context) error
	soft bool
}

// readiness runs the checks of /readyz; until setChecks is called (the
// relay is still being set up) it is not ready.
type readiness struct {
	mu      sync.Mutex
	checks  []check
	secrets []string
	at      time.Time // of the last round of checks
	failing []string  // the last round's failures, "name: error"
	notes   []string  // the last round's failures of soft checks
}

// setChecks installs the checks; secrets are redacted from their errors.
func (rd *readiness) setChecks(checks []check, secrets []string) {
	rd.mu.Lock()
	defer rd.mu.Unlock()
	rd.checks, rd.secrets, rd.at = checks, secrets, time.Time{}
}

// probe returns the failing checks ("name: error"), none when ready, and
// the failing soft checks. It runs the checks at most once per
// readyCacheFor, one probe at a time, and logs each change of readiness.
func (rd *readiness) probe(ctx context.Context, log *slog.Logger) (failing, notes []string) {
	rd.mu.Lock()
	defer rd.mu.Unlock()
	if rd.checks == nil {
		return []string{"relay: starting"}, nil
	}
	if !rd.at.IsZero() && time.Since(rd.at) < readyCacheFor {
		return rd.failing, rd.notes
	}
	for _, c := range rd.checks {
		cctx, cancel := context.WithTimeout(ctx, checkTimeout)
		err := c.fn(cctx)
		cancel()
		if err == nil {
			continue
		}
		// An error of several lines (one per failing table) is reported
		// as several lines, each with the check's name.
		for _, line := range strings.Split(redact.String(err.Error(), rd.secrets...), "\n") {
			if c.soft {
				notes = append(notes, c.name+": "+line)
			} else {
				failing = append(failing, c.name+": "+line)
			}
		}
	}
	if ctx.Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return failing, notes // the prober went away: keep the last round
	}
	switch {
	case len(failing) > 0 && (rd.at.IsZero() || len(rd.failing) == 0):
		log.Warn("jitoutbox-relay: not ready", "failing", failing)
	case len(failing) == 0 && (rd.at.IsZero() || len(rd.failing) > 0):
		log.Info("jitoutbox-relay: ready")
	}
	rd.at, rd.failing, rd.notes = time.Now(), failing, notes
	return failing, notes
}
