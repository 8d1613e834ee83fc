package main

import (
	"context"
	"errors"
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
		nats.DisconnectErrHandler(disconnected(log)),
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
		// nats.Connect's errors do not quote the URL; say which flag failed.
		return nil, fmt.Errorf("connect NATS (-nats): %w", err)
	}
	return nc, nil
}

// disconnected reports a lost NATS connection. nats.go calls it on Close
// too (with a nil error, the connection closed): a clean stop is logged at
// debug level, not as a loss.
func disconnected(log *slog.Logger) nats.ConnErrHandler {
	return func(c *nats.Conn, err error) {
		if c.IsClosed() {
			log.Debug("jitoutbox-relay: NATS connection closed")
			return
		}
		log.Warn("jitoutbox-relay: NATS disconnected; reconnecting", "err", err)
	}
}

// newNATSPublishers returns the event publishers, one per subject prefix
// of cfg.dests, and, with -dead-letter, the dead-letter publisher (nil
// without), all on nc. For JetStream with -stream it first creates the
// stream if it is missing (retrying until NATS is reachable).
func newNATSPublishers(ctx context.Context, cfg config, nc *nats.Conn, log *slog.Logger) (pubs map[string]relay.Publisher, dead relay.Publisher, err error) {
	var opts []natspub.Option
	if cfg.debezium {
		opts = append(opts, natspub.Debezium())
	}
	if cfg.ceSource != "" {
		opts = append(opts, natspub.CloudEvents(cfg.ceSource, cfg.ceMode))
	}
	var deadOpts []natspub.Option
	if cfg.deadLetter != "" {
		subject := cfg.deadLetter
		deadOpts = append(deadOpts, natspub.WithRouter(func(relay.Message) (string, error) { return subject, nil }))
	}
	pubs = map[string]relay.Publisher{}
	if cfg.publisher == "core" {
		for _, prefix := range cfg.dests() {
			if pubs[prefix], err = natspub.NewCore(nc, append(opts, natspub.WithSubjectPrefix(prefix))...); err != nil {
				return nil, nil, fmt.Errorf("publisher: %w", err)
			}
		}
		if cfg.deadLetter != "" {
			if dead, err = natspub.NewCore(nc, deadOpts...); err != nil {
				return nil, nil, fmt.Errorf("dead-letter publisher: %w", err)
			}
		}
		return pubs, dead, nil
	}
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncTimeout(30*time.Second))
	if err != nil {
		return nil, nil, fmt.Errorf("jetstream: %w", err)
	}
	if cfg.stream != "" {
		var subjects []string
		for _, prefix := range cfg.dests() {
			subjects = append(subjects, prefix+".>")
		}
		if cfg.deadLetter != "" {
			subjects = append(subjects, cfg.deadLetter)
		}
		err := retry(ctx, log, "ensure stream "+cfg.stream, func(ctx context.Context) error {
			return ensureStream(ctx, js, cfg.stream, subjects, log)
		})
		if err != nil {
			return nil, nil, err
		}
		opts = append(opts, natspub.WithExpectStream(cfg.stream))
	}
	for _, prefix := range cfg.dests() {
		if pubs[prefix], err = natspub.NewJetStream(js, append(opts, natspub.WithSubjectPrefix(prefix))...); err != nil {
			return nil, nil, fmt.Errorf("publisher: %w", err)
		}
	}
	if cfg.deadLetter != "" {
		// No WithExpectStream: the dead-letter subject may be stored by a
		// stream of its own (with other limits than the events').
		if dead, err = natspub.NewJetStream(js, deadOpts...); err != nil {
			return nil, nil, fmt.Errorf("dead-letter publisher: %w", err)
		}
	}
	return pubs, dead, nil
}

// ensureStream creates stream name for subjects when it does not exist.
// An existing stream is never changed (an operator's limits, duplicate
// window and replicas stay as set); when its subjects do not cover all of
// subjects, a warning names those it misses.
func ensureStream(ctx context.Context, js jetstream.JetStream, name string, subjects []string, log *slog.Logger) error {
	st, err := js.Stream(ctx, name)
	switch {
	case errors.Is(err, jetstream.ErrStreamNotFound):
		_, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: name, Subjects: subjects, Storage: jetstream.FileStorage})
		if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			return ensureStream(ctx, js, name, subjects, log) // another relay created it first
		}
		if err != nil {
			return fmt.Errorf("create stream %s: %w", name, err)
		}
		log.Info("jitoutbox-relay: stream created", "stream", name, "subjects", subjects)
		return nil
	case err != nil:
		return fmt.Errorf("stream %s: %w", name, err)
	}
	have := st.CachedInfo().Config.Subjects
	var missing []string
	for _, s := range subjects {
		covered := false
		for _, h := range have {
			if subjectCovers(h, s) {
				covered = true
				break
			}
		}
		if !covered {
			missing = append(missing, s)
		}
	}
	if len(missing) > 0 {
		log.Warn("jitoutbox-relay: the stream exists and is left unchanged, but its subjects do not cover all the relay publishes to; add them to the stream, or events there fail and are retried",
			"stream", name, "stream_subjects", have, "missing", missing)
	}
	return nil
}
