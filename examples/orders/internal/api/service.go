package api

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/examples/orders/internal/shop"
	"github.com/jitoutbox/jitoutbox/notify"
	jitotel "github.com/jitoutbox/jitoutbox/otel"
	"github.com/jitoutbox/jitoutbox/relay"
	"github.com/jitoutbox/jitoutbox/relay/natspub"
	"github.com/jitoutbox/jitoutbox/txoutbox"
)

// Config configures a Service.
type Config struct {
	// DB and Dialect are the database (see shop.Open). Required.
	DB      *sql.DB
	Dialect dialects.Dialect
	// JetStream publishes the events. Required.
	JetStream jetstream.JetStream
	// SubjectPrefix prefixes the subjects (default shop.DefaultSubjectPrefix).
	SubjectPrefix string
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

// New builds the service: the outbox with trace propagation and an
// in-process wake, the relay publishing to JetStream with OpenTelemetry
// metrics. Call Migrate once, then Run, and serve Handler.
func New(cfg Config) (*Service, error) {
	if cfg.DB == nil || cfg.Dialect == nil || cfg.JetStream == nil {
		return nil, errors.New("api: DB, Dialect and JetStream are required")
	}
	if cfg.SubjectPrefix == "" {
		cfg.SubjectPrefix = shop.DefaultSubjectPrefix
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
	// One in-process signal: a time-critical commit wakes the relay at
	// once, an ordinary one within the relay's LazyDelay (250ms).
	signal := notify.NewLocal()
	ob, err := txoutbox.New(cfg.DB, cfg.Dialect,
		txoutbox.WithNotifier(signal),
		jitotel.PropagateTrace(), // traceparent/tracestate travel with each event
		txoutbox.WithLogger(cfg.Logger))
	if err != nil {
		return nil, err
	}
	pub, err := natspub.NewJetStream(cfg.JetStream, natspub.WithRouter(shop.Router(cfg.SubjectPrefix)))
	if err != nil {
		return nil, err
	}
	m, err := jitotel.NewRelayMetrics(cfg.MeterProvider)
	if err != nil {
		return nil, err
	}
	r, err := relay.New(cfg.DB, cfg.Dialect, pub, relay.Config{
		Sources:      []notify.Source{signal},
		PollInterval: cfg.PollInterval,
		Hooks:        m,
		Logger:       cfg.Logger,
	})
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
