package natspub

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jitoutbox/jitoutbox/relay"
)

// DefaultOutageAllowance is how long an outage (of the relay's database or
// of the broker) the duplicate window should cover on top of the relay's
// lease; see WithOutageAllowance.
const DefaultOutageAllowance = time.Minute

// MinSafeReplicas is the replica count at which a stream keeps acknowledged
// messages through the crash of a machine without relying on fsync.
const MinSafeReplicas = 3

// ErrNotDurable matches the error CheckStream returns for a stream that
// cannot keep the at-least-once guarantee (a *DurabilityError).
var ErrNotDurable = errors.New("natspub: stream cannot guarantee at-least-once delivery")

// DurabilityError lists why a stream cannot keep the at-least-once (or the
// effectively-once) guarantee. It matches ErrNotDurable.
type DurabilityError struct {
	// Stream is the stream checked ("" when no stream stores the subject).
	Stream string
	// Problems says what is wrong, one sentence each.
	Problems []string
}

// Error lists the stream's problems.
func (e *DurabilityError) Error() string {
	return fmt.Sprintf("natspub: stream %q cannot guarantee at-least-once delivery: %s", e.Stream, strings.Join(e.Problems, "; "))
}

// Unwrap returns ErrNotDurable.
func (e *DurabilityError) Unwrap() error { return ErrNotDurable }

// preflightMessage returns the message routed to find the stream when
// WithExpectStream is not given.
func preflightMessage() relay.Message {
	return relay.Message{ID: "preflight", AggregateType: "preflight", AggregateID: "preflight", EventType: "preflight"}
}

// CheckStream looks up the stream the publisher publishes to (the one named
// by WithExpectStream, else the one storing the subject the router gives a
// sample message of aggregate type and event type "preflight") and checks
// its configuration. It returns nil when the stream can keep the
// at-least-once guarantee, a *DurabilityError (matching ErrNotDurable) when
// it cannot, or the error of the lookup.
//
// It reports memory storage (lost when the server restarts); fewer than
// MinSafeReplicas replicas, unless WithServerSyncAlways says the server
// fsyncs every write (the server's sync_interval is server configuration
// that the JetStream API does not show to clients); and a duplicate window
// shorter than minDuplicateWindow (pass 0 to skip that check).
func (p *JetStream) CheckStream(ctx context.Context, minDuplicateWindow time.Duration) error {
	name, err := p.streamName(ctx)
	if err != nil {
		return err
	}
	s, err := p.js.Stream(ctx, name)
	if err != nil {
		return fmt.Errorf("natspub: look up stream %q: %w", name, err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		return fmt.Errorf("natspub: stream %q info: %w", name, err)
	}
	if problems := durabilityProblems(info.Config, p.opts.syncAlways, minDuplicateWindow); len(problems) > 0 {
		return &DurabilityError{Stream: name, Problems: problems}
	}
	return nil
}

func (p *JetStream) streamName(ctx context.Context) (string, error) {
	if p.opts.expectStream != "" {
		return p.opts.expectStream, nil
	}
	m := preflightMessage()
	subject, err := route(p.opts.router, &m)
	if err != nil {
		return "", fmt.Errorf("natspub: route a sample message to find the stream: %w", err)
	}
	name, err := p.js.StreamNameBySubject(ctx, subject)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return "", &DurabilityError{Problems: []string{fmt.Sprintf("no stream stores subject %q: publishes will fail until one does", subject)}}
	}
	if err != nil {
		return "", fmt.Errorf("natspub: find the stream of subject %q: %w", subject, err)
	}
	return name, nil
}

// durabilityProblems checks a stream configuration.
func durabilityProblems(cfg jetstream.StreamConfig, syncAlways bool, minDup time.Duration) []string {
	var out []string
	replicas := max(cfg.Replicas, 1)
	if cfg.Storage == jetstream.MemoryStorage {
		out = append(out, fmt.Sprintf("memory storage: every message is lost when the server restarts (replicas %d only help while a quorum stays up); use file storage", replicas))
	} else if replicas < MinSafeReplicas && !syncAlways {
		out = append(out, fmt.Sprintf("replicas %d < %d: the server acknowledges before fsync (the default sync_interval is 2 minutes), so a crash of the machine can lose acknowledged messages that the relay has already marked published; use replicas %d, or run the server with jetstream { sync_interval: always } and declare it with natspub.WithServerSyncAlways (a client cannot read the server's sync setting)",
			replicas, MinSafeReplicas, MinSafeReplicas))
	}
	if minDup > 0 && cfg.Duplicates < minDup {
		out = append(out, fmt.Sprintf("duplicate window %v is shorter than %v (relay lease + outage allowance): an event republished after a relay lost its lease or the broker was down can be stored twice; raise the stream's duplicate_window",
			cfg.Duplicates, minDup))
	}
	return out
}

// Preflight implements relay.Preflighter: unless WithoutDurabilityCheck was
// given, it runs CheckStream with the relay's lease plus the outage
// allowance (WithOutageAllowance) as the least duplicate window, and logs a
// warning to info.Logger for each problem found. It returns the error of
// the lookup, if any (the relay logs it); problems are warnings only.
func (p *JetStream) Preflight(ctx context.Context, info relay.PreflightInfo) error {
	if p.opts.noCheck {
		return nil
	}
	log := info.Logger
	if log == nil {
		log = slog.Default()
	}
	minDup := time.Duration(0)
	if info.LeaseDuration > 0 {
		minDup = info.LeaseDuration + p.opts.outageAllowance
	}
	err := p.CheckStream(ctx, minDup)
	var de *DurabilityError
	if errors.As(err, &de) {
		for _, problem := range de.Problems {
			log.WarnContext(ctx, "jitoutbox natspub: stream cannot guarantee at-least-once delivery",
				"stream", de.Stream, "problem", problem)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("natspub: durability check: %w", err)
	}
	return nil
}

var _ relay.Preflighter = (*JetStream)(nil)
