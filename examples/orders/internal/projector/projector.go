package projector

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/jitoutbox/jitoutbox/examples/orders/internal/shop"
	jitotel "github.com/jitoutbox/jitoutbox/otel"
	"github.com/jitoutbox/jitoutbox/relay/natspub"
)

// Outcome is what Handle did with a message.
type Outcome int

// Outcomes of Handle.
const (
	// Applied: the event was new and the projection was updated.
	Applied Outcome = iota
	// Duplicate: the event id had been processed before; nothing changed.
	Duplicate
	// Ignored: an event type the projector does not know, recorded as seen.
	Ignored
)

func (o Outcome) String() string {
	switch o {
	case Applied:
		return "applied"
	case Duplicate:
		return "duplicate"
	default:
		return "ignored"
	}
}

// ErrNoEventID is returned by Handle for a message without the
// Jitoutbox-Event-Id header (it cannot be deduplicated).
var ErrNoEventID = errors.New("projector: message has no event id")

// Projector applies order events to its projection once each.
type Projector struct {
	db      *sql.DB
	dialect string
	sql     statements
	out     io.Writer
	log     *slog.Logger
	tracer  trace.Tracer
}

// New returns a projector writing through db ("postgres" or "mysql"
// dialect). It prints one line per handled message to out (nil: none) and
// starts a consumer span per message from tp (nil: no spans of its own, the
// producer's trace id is still printed).
func New(db *sql.DB, dialect string, out io.Writer, tp trace.TracerProvider, log *slog.Logger) (*Projector, error) {
	st, ok := sqlFor[dialect]
	if !ok {
		return nil, fmt.Errorf("%w: %q", shop.ErrUnknownDialect, dialect)
	}
	if out == nil {
		out = io.Discard
	}
	if tp == nil {
		tp = tracenoop.NewTracerProvider()
	}
	if log == nil {
		log = slog.Default()
	}
	return &Projector{db: db, dialect: dialect, sql: st, out: out, log: log,
		tracer: tp.Tracer("github.com/jitoutbox/jitoutbox/examples/orders/consumer")}, nil
}

// Handle processes one message in one transaction: it records the event id
// (a duplicate ends here) and updates the projection. The caller acks the
// message when Handle returns nil.
func (p *Projector) Handle(ctx context.Context, h nats.Header, data []byte) (Outcome, error) {
	id := h.Get(natspub.HeaderEventID)
	if id == "" {
		return Ignored, ErrNoEventID
	}
	typ := h.Get(natspub.HeaderEventType)
	// Join the trace of the HTTP request that registered the event.
	ctx = jitotel.ExtractNATS(ctx, h)
	ctx, span := p.tracer.Start(ctx, "project "+typ, trace.WithSpanKind(trace.SpanKindConsumer))
	defer span.End()

	outcome, err := p.apply(ctx, id, typ, data)
	if err != nil {
		return outcome, err
	}
	fmt.Fprintf(p.out, "%-9s %-13s order=%s event=%s trace=%s\n", outcome, typ,
		h.Get(natspub.HeaderAggregateID), id, trace.SpanContextFromContext(ctx).TraceID())
	return outcome, nil
}

func (p *Projector) apply(ctx context.Context, id, typ string, data []byte) (Outcome, error) {
	tx, err := p.db.BeginTx(ctx, nil)
	if err != nil {
		return Ignored, fmt.Errorf("projector: begin: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	now := time.Now().UTC()
	res, err := tx.ExecContext(ctx, p.sql.markProcessed, id, typ, now)
	if err != nil {
		return Ignored, fmt.Errorf("projector: record event %s: %w", id, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return Ignored, fmt.Errorf("projector: record event %s: %w", id, err)
	} else if n == 0 {
		return Duplicate, nil // rolled back; nothing to do
	}
	outcome := Applied
	switch typ {
	case shop.EventCreated:
		var ev shop.Created
		if err := json.Unmarshal(data, &ev); err != nil {
			return Ignored, fmt.Errorf("projector: event %s: %w", id, err)
		}
		_, err = tx.ExecContext(ctx, p.sql.created, ev.OrderID, ev.Customer, ev.TotalCents, now)
	case shop.EventPaid:
		var ev shop.Paid
		if err := json.Unmarshal(data, &ev); err != nil {
			return Ignored, fmt.Errorf("projector: event %s: %w", id, err)
		}
		_, err = tx.ExecContext(ctx, p.sql.paid, ev.OrderID, ev.TotalCents, now)
	default:
		outcome = Ignored
	}
	if err != nil {
		return Ignored, fmt.Errorf("projector: apply event %s: %w", id, err)
	}
	if err := tx.Commit(); err != nil {
		return Ignored, fmt.Errorf("projector: commit event %s: %w", id, err)
	}
	return outcome, nil
}

// Run consumes the stream through the durable consumer named durable
// (created or updated to filter "<prefix>.>", explicit acks) until ctx ends.
// Each message is handled, then acknowledged; a failure is retried by
// JetStream after a second (a bad payload is terminated instead).
func (p *Projector) Run(ctx context.Context, js jetstream.JetStream, stream, durable, prefix string) error {
	cons, err := js.CreateOrUpdateConsumer(ctx, stream, jetstream.ConsumerConfig{
		Durable:       durable,
		FilterSubject: prefix + ".>",
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       30 * time.Second,
		DeliverPolicy: jetstream.DeliverAllPolicy,
	})
	if err != nil {
		return fmt.Errorf("projector: consumer %s on %s: %w", durable, stream, err)
	}
	cc, err := cons.Consume(func(m jetstream.Msg) {
		_, err := p.Handle(ctx, m.Headers(), m.Data())
		var syntax *json.SyntaxError
		switch {
		case err == nil:
			if err := m.Ack(); err != nil {
				p.log.WarnContext(ctx, "projector: ack", "err", err)
			}
		case errors.Is(err, ErrNoEventID), errors.As(err, &syntax):
			p.log.ErrorContext(ctx, "projector: dropping message", "subject", m.Subject(), "err", err)
			_ = m.Term()
		default:
			p.log.WarnContext(ctx, "projector: will retry", "subject", m.Subject(), "err", err)
			_ = m.NakWithDelay(time.Second)
		}
	})
	if err != nil {
		return fmt.Errorf("projector: consume: %w", err)
	}
	<-ctx.Done()
	cc.Stop()
	<-cc.Closed()
	return nil
}
