package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jitoutbox/jitoutbox/relay"
	"github.com/jitoutbox/jitoutbox/relay/natspub"
)

// natsConn is the NATS connection type (an alias keeps signatures short).
type natsConn = *nats.Conn

// connectNATS connects for good: it keeps retrying when the server is not
// up yet and reconnects forever after a loss.
func connectNATS(cfg config, log *slog.Logger) (*nats.Conn, error) {
	nc, err := nats.Connect(cfg.natsURL,
		nats.Name(cfg.natsName),
		nats.MaxReconnects(-1),
		nats.RetryOnFailedConnect(true),
		nats.ReconnectWait(250*time.Millisecond),
		nats.ReconnectJitter(100*time.Millisecond, time.Second),
		nats.Timeout(5*time.Second),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			log.Warn("jitoutbox-relay: NATS disconnected; reconnecting", "err", err)
		}),
		nats.ReconnectHandler(func(c *nats.Conn) {
			log.Info("jitoutbox-relay: NATS reconnected", "server", c.ConnectedServerId())
		}),
		nats.ConnectHandler(func(c *nats.Conn) {
			log.Info("jitoutbox-relay: NATS connected", "server", c.ConnectedServerId())
		}),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			log.Warn("jitoutbox-relay: NATS error", "err", err)
		}),
	)
	if err != nil {
		return nil, fmt.Errorf("connect NATS: %w", err)
	}
	return nc, nil
}

// newPublisher returns the publisher; for JetStream with -stream it first
// creates or updates the stream (retrying until NATS is reachable).
func newPublisher(ctx context.Context, cfg config, nc *nats.Conn, log *slog.Logger) (relay.Publisher, error) {
	opts := []natspub.Option{natspub.WithSubjectPrefix(cfg.subjectPrefix)}
	if cfg.publisher == "core" {
		p, err := natspub.NewCore(nc, opts...)
		if err != nil {
			return nil, fmt.Errorf("publisher: %w", err)
		}
		return p, nil
	}
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncTimeout(30*time.Second))
	if err != nil {
		return nil, fmt.Errorf("jetstream: %w", err)
	}
	if cfg.stream != "" {
		scfg := jetstream.StreamConfig{
			Name:     cfg.stream,
			Subjects: []string{cfg.subjectPrefix + ".>"},
			Storage:  jetstream.FileStorage,
		}
		err := retry(ctx, log, "ensure stream "+cfg.stream, func(ctx context.Context) error {
			_, err := js.CreateOrUpdateStream(ctx, scfg)
			return err
		})
		if err != nil {
			return nil, err
		}
		opts = append(opts, natspub.WithExpectStream(cfg.stream))
	}
	p, err := natspub.NewJetStream(js, opts...)
	if err != nil {
		return nil, fmt.Errorf("publisher: %w", err)
	}
	return p, nil
}
