package api

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/jitoutbox/jitoutbox/dialects"
	jitotel "github.com/jitoutbox/jitoutbox/otel"
	"github.com/jitoutbox/jitoutbox/relay"
	"github.com/jitoutbox/jitoutbox/txoutbox"
)

// Config configures a Service.
type Config struct {
	// DB and Dialect are the database (see shop.Open). Required.
	DB      *sql.DB
	Dialect dialects.Dialect
	// Publisher publishes the events (see package broker). Required.
	Publisher relay.Publisher
	// DeadLetter also receives dead-lettered events, with their
	// Jitoutbox-Dead-* headers (default: none).
	DeadLetter relay.Publisher
	// BrokerHealthy reports whether the broker connection is up, for
	// /healthz (default: always).
	BrokerHealthy func() bool
	// MeterProvider receives the relay metrics (default: none recorded).
	MeterProvider metric.MeterProvider
	// TracerProvider starts the request spans (default: no spans of our
	// own; an incoming traceparent is still carried to the events).
	TracerProvider trace.TracerProvider
	// Metrics serves GET /metrics when set (see NewPrometheus).
	Metrics http.Handler
	// PollInterval is the relay's safety-net poll (default 5s).
	PollInterval time.Duration
	// Logger receives logs (default slog.Default()).
	Logger *slog.Logger
}

// Service is the orders API with its relay.
type Service struct {
	cfg     Config
	store   store
	outbox  *txoutbox.Outbox
	relay   *relay.Relay
	metrics *jitotel.RelayMetrics
	tracer  trace.Tracer
}

// New builds the service: the relay publishing through cfg.Publisher with
// OpenTelemetry metrics, and the outbox handing its commits to that relay
// (txoutbox.WithRelay) with trace propagation. Call Migrate once, then
// Run, and serve Handler.
func New(cfg Config) (*Service, error) {
	if cfg.DB == nil || cfg.Dialect == nil || cfg.Publisher == nil {
		return nil, errors.New("api: DB, Dialect and Publisher are required")
	}
	if cfg.BrokerHealthy == nil {
		cfg.BrokerHealthy = func() bool { return true }
	}
	if cfg.MeterProvider == nil {
		cfg.MeterProvider = metricnoop.NewMeterProvider()
	}
	if cfg.TracerProvider == nil {
		cfg.TracerProvider = tracenoop.NewTracerProvider()
	}
	if cfg.PollInterval == 0 {
		cfg.PollInterval = 5 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	m, err := jitotel.NewRelayMetrics(cfg.MeterProvider)
	if err != nil {
		return nil, err
	}
	r, err := relay.New(cfg.DB, cfg.Dialect, cfg.Publisher, relay.Config{
		PollInterval: cfg.PollInterval,
		DeadLetter:   cfg.DeadLetter,
		Hooks:        m,
		Logger:       cfg.Logger,
	})
	if err != nil {
		return nil, err
	}
	// The one in-process hand-over: after a time-critical commit the rows
	// go to the relay in memory and are published at once; an ordinary
	// commit wakes it within its LazyDelay (250ms). Relays in other
	// processes would need txoutbox.WithNotifier (pgnotify, natsnotify).
	ob, err := txoutbox.New(cfg.DB, cfg.Dialect,
		txoutbox.WithRelay(r),
		jitotel.PropagateTrace(), // traceparent/tracestate travel with each event
		txoutbox.WithLogger(cfg.Logger))
	if err != nil {
		return nil, err
	}
	return &Service{
		cfg:     cfg,
		store:   store{dialect: cfg.Dialect.Name()},
		outbox:  ob,
		relay:   r,
		metrics: m,
		tracer:  cfg.TracerProvider.Tracer("github.com/jitoutbox/jitoutbox/examples/orders"),
	}, nil
}

// Migrate creates the outbox table and the service's own table.
func (s *Service) Migrate(ctx context.Context) error {
	if err := s.cfg.Dialect.Migrate(ctx, s.cfg.DB); err != nil {
		return fmt.Errorf("api: migrate outbox: %w", err)
	}
	if err := s.store.migrate(ctx, s.cfg.DB); err != nil {
		return fmt.Errorf("api: migrate: %w", err)
	}
	return nil
}

// Run runs the relay, and reports its backlog gauges, until ctx ends.
func (s *Service) Run(ctx context.Context) error {
	reg, err := s.metrics.ObserveStats(s.relay.Stats)
	if err != nil {
		return err
	}
	defer func() { _ = reg.Unregister() }()
	return s.relay.Run(ctx)
}

// Stats returns the relay's statistics.
func (s *Service) Stats(ctx context.Context) (relay.Stats, error) { return s.relay.Stats(ctx) }
