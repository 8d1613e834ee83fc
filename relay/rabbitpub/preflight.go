package rabbitpub

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/jitoutbox/jitoutbox/relay"
)

// preflightMessage is the sample message routed to find the exchange when
// the publisher has a custom Router.
func preflightMessage() relay.Message {
	return relay.Message{ID: "preflight", AggregateType: "preflight", AggregateID: "preflight", EventType: "preflight"}
}

// Preflight implements relay.Preflighter. It logs a warning to info.Logger
// when WithoutMandatory was given (an unroutable message is then confirmed
// by the broker and lost), and checks, on a connection of its own that it
// closes, that the exchange exists with a passive declare. The exchange is
// the one of WithExchange, or the one a custom Router gives a sample
// message of aggregate type and event type "preflight"; the default
// exchange ("") always exists and is not checked. A missing exchange is a
// warning; it returns the error of the connection, if any (the relay logs
// it).
//
// AMQP 0-9-1 does not tell a client whether a queue is durable or quorum,
// nor which queues an exchange routes to: a confirm means the message is on
// disk only when it reached a durable queue (see docs/guarantees.md), which
// this check cannot see.
func (p *Publisher) Preflight(ctx context.Context, info relay.PreflightInfo) error {
	log := info.Logger
	if log == nil {
		log = slog.Default()
	}
	if !p.opts.mandatory {
		log.WarnContext(ctx, "jitoutbox rabbitpub: publishing without the mandatory flag: a message no queue receives is confirmed by the broker and lost",
			"fix", "drop rabbitpub.WithoutMandatory")
	}
	r, err := p.opts.router(preflightMessage())
	if err != nil {
		return fmt.Errorf("rabbitpub: preflight: route a sample message to find the exchange: %w", err)
	}
	if r.Exchange == "" {
		return nil
	}
	exists, err := p.exchangeExists(ctx, r.Exchange)
	if err != nil {
		return fmt.Errorf("rabbitpub: preflight: %w", err)
	}
	if !exists {
		log.WarnContext(ctx, "jitoutbox rabbitpub: exchange not found: publishes will fail until it is declared",
			"exchange", r.Exchange)
	}
	return nil
}

// exchangeExists passively declares exchange on a throwaway connection and
// channel.
func (p *Publisher) exchangeExists(ctx context.Context, exchange string) (bool, error) {
	conn, err := p.dial(ctx)
	if err != nil {
		return false, fmt.Errorf("connect: %w", err)
	}
	if conn == nil {
		return false, errors.New("connect: DialFunc returned a nil connection")
	}
	defer func() { _ = conn.CloseDeadline(time.Now().Add(closeTimeout)) }()
	ch, err := conn.Channel()
	if err != nil {
		return false, fmt.Errorf("open channel: %w", err)
	}
	// A missing exchange closes the channel with 404 NOT_FOUND; the
	// connection stays open and is closed above.
	done := make(chan error, 1)
	go func() {
		done <- ch.ExchangeDeclarePassive(exchange, amqp.ExchangeTopic, false, false, false, false, nil)
	}()
	select {
	case err = <-done:
	case <-ctx.Done():
		_ = conn.CloseDeadline(time.Now().Add(discardTimeout))
		<-done
		return false, ctx.Err()
	}
	var ae *amqp.Error
	if errors.As(err, &ae) && ae.Code == amqp.NotFound {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("passive declare of exchange %q: %w", exchange, err)
	}
	_ = ch.Close()
	return true, nil
}

var _ relay.Preflighter = (*Publisher)(nil)
