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
	"github.com/jitoutbox/jitoutbox/inbox"
	"github.com/jitoutbox/jitoutbox/inbox/natssub"
	jitotel "github.com/jitoutbox/jitoutbox/otel"
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
var ErrNoEventID = inbox.ErrNoEventID

// inboxTable prefixes the inbox's tables: projector_processed (the
// processed event ids), projector_aggregates, projector_migrations.
const inboxTable = "projector"

// Projector applies order events to its projection once each.
type Projector struct {
	db      *sql.DB
	dialect string
	sql     statements
	in      *inbox.Inbox
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
	p := &Projector{db: db, dialect: dialect, sql: st, out: out, log: log,
		tracer: tp.Tracer("github.com/jitoutbox/jitoutbox/examples/orders/consumer")}
	in, err := inbox.New(inbox.Config{
		Dialect: inbox.Dialect(dialect),
		Table:   inboxTable,
		// The relay keeps each order's events in order, so this reports
		// only what should not happen (a replay of an old copy). The
		// projection tolerates a late order.created, so apply it and say so.
		OnOutOfOrder: func(ctx context.Context, m inbox.Message, last int64) inbox.Decision {
			p.log.WarnContext(ctx, "projector: event older than the last applied for its order",
				"event", m.EventID, "type", m.EventType, "order", m.AggregateID, "seq", m.Seq, "last_seq", last)
			return inbox.Apply
		},
	})
	if err != nil {
		return nil, err
	}
	p.in = in
	return p, nil
}

// Handle processes one message in one transaction: the inbox records the
// event id (a duplicate ends there) and the projection is updated. The
// caller acks the message when Handle returns nil.
func (p *Projector) Handle(ctx context.Context, h nats.Header, data []byte) (Outcome, error) {
	msg := natssub.Message(&nats.Msg{Header: h, Data: data})
	// Join the trace of the HTTP request that registered the event.
	ctx = jitotel.ExtractNATS(ctx, h)
	ctx, span := p.tracer.Start(ctx, "project "+msg.EventType, trace.WithSpanKind(trace.SpanKindConsumer))
	defer span.End()

	outcome := Applied
	res, err := p.in.Handle(ctx, p.db, msg, func(ctx context.Context, tx *sql.Tx) error {
		var err error
		outcome, err = p.apply(ctx, tx, msg)
		return err
	})
	if err != nil {
		return Ignored, fmt.Errorf("projector: %w", err)
	}
	if res == inbox.Duplicate {
		outcome = Duplicate
	}
	fmt.Fprintf(p.out, "%-9s %-13s order=%s event=%s trace=%s\n", outcome, msg.EventType,
		msg.AggregateID, msg.EventID, trace.SpanContextFromContext(ctx).TraceID())
	return outcome, nil
}

// apply updates the projection for one event, inside the inbox's
// transaction.
func (p *Projector) apply(ctx context.Context, tx *sql.Tx, msg inbox.Message) (Outcome, error) {
	now := time.Now().UTC()
	var err error
	switch msg.EventType {
	case shop.EventCreated:
		var ev shop.Created
		if err := json.Unmarshal(msg.Payload, &ev); err != nil {
			return Ignored, err
		}
		_, err = tx.ExecContext(ctx, p.sql.created, ev.OrderID, ev.Customer, ev.TotalCents, now)
	case shop.EventPaid:
		var ev shop.Paid
		if err := json.Unmarshal(msg.Payload, &ev); err != nil {
			return Ignored, err
		}
		_, err = tx.ExecContext(ctx, p.sql.paid, ev.OrderID, ev.TotalCents, now)
	default:
		return Ignored, nil
	}
	return Applied, err
}

// permanent reports whether redelivering a message that failed with err
// cannot help: no or a malformed event id, an id reused with another
// payload, a payload that is not JSON.
func permanent(err error) bool {
	var syntax *json.SyntaxError
	var bad *inbox.MessageError
	return errors.As(err, &bad) || errors.Is(err, inbox.ErrPayloadMismatch) || errors.As(err, &syntax)
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
		switch {
		case err == nil:
			if err := m.Ack(); err != nil {
				p.log.WarnContext(ctx, "projector: ack", "err", err)
			}
		case permanent(err):
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
