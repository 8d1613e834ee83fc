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
// messages through the crash of a machine without relying on fsync: a
// replicated stream acknowledges a message once a quorum of its replicas
// (2 of 2, 2 of 3, 3 of 5) has stored it, so one machine crash leaves a
// copy. Replicas 3 also keep acknowledging while one replica is down;
// replicas 2 stop until it is back (no loss, but the relay waits).
const MinSafeReplicas = 2

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
// It reports memory storage (lost when the servers restart); fewer than
// MinSafeReplicas replicas, unless WithServerSyncAlways says the server
// fsyncs every write (the server's sync_interval is server configuration
// that the JetStream API does not show to clients); and a duplicate window
// shorter than minDuplicateWindow (pass 0 to skip that check). A file
// stream with 2 or more replicas (R3 on a JetStream cluster, as NATS
// recommends) and a long enough window passes.
func (p *JetStream) CheckStream(ctx context.Context, minDuplicateWindow time.Duration) error {
	c, err := p.checkStream(ctx, minDuplicateWindow)
	if err != nil {
		return err
	}
	if len(c.problems) > 0 {
		return &DurabilityError{Stream: c.stream, Problems: c.problems}
	}
	return nil
}

// streamCheck is what one durability check looked at and found.
type streamCheck struct {
	stream     string
	cfg        jetstream.StreamConfig
	cluster    *jetstream.ClusterInfo // nil when the server sent none
	minDup     time.Duration
	syncAlways bool
	problems   []string
}

// checkStream looks the stream up and checks it. A missing stream is a
// *DurabilityError.
func (p *JetStream) checkStream(ctx context.Context, minDup time.Duration) (*streamCheck, error) {
	name, err := p.streamName(ctx)
	if err != nil {
		return nil, err
	}
	s, err := p.js.Stream(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("natspub: look up stream %q: %w", name, err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		return nil, fmt.Errorf("natspub: stream %q info: %w", name, err)
	}
	return &streamCheck{
		stream: name, cfg: info.Config, cluster: info.Cluster, minDup: minDup, syncAlways: p.opts.syncAlways,
		problems: durabilityProblems(info.Config, p.opts.syncAlways, minDup),
	}, nil
}

// checkedRules says, in the start-up log, what the check requires.
const checkedRules = "file storage; replicas >= 2, or replicas 1 on a server declared (WithServerSyncAlways) to fsync every write; duplicate window >= relay lease + outage allowance"

// logAttrs describes the check for the start-up log record.
func (c *streamCheck) logAttrs() []any {
	replicas := max(c.cfg.Replicas, 1)
	attrs := []any{
		"stream", c.stream,
		"storage", strings.ToLower(c.cfg.Storage.String()),
		"replicas", replicas,
	}
	switch {
	case c.cluster == nil:
		attrs = append(attrs, "cluster", "unknown (the server sent no cluster information)")
	case c.cluster.Name == "":
		attrs = append(attrs, "cluster", "none (a single server)", "leader", orNone(c.cluster.Leader))
	default:
		current, offline := 0, []string{}
		for _, peer := range c.cluster.Replicas {
			if peer.Current {
				current++
			}
			if peer.Offline {
				offline = append(offline, peer.Name)
			}
		}
		attrs = append(attrs, "cluster", c.cluster.Name, "leader", orNone(c.cluster.Leader))
		if len(c.cluster.Replicas) > 0 {
			attrs = append(attrs, "followers_current", fmt.Sprintf("%d of %d", current, len(c.cluster.Replicas)))
		}
		if len(offline) > 0 {
			attrs = append(attrs, "followers_offline", strings.Join(offline, ","))
		}
	}
	attrs = append(attrs, "duplicate_window", c.cfg.Duplicates)
	if c.minDup > 0 {
		attrs = append(attrs, "min_duplicate_window", c.minDup)
	}
	attrs = append(attrs, "server_sync_always_declared", c.syncAlways)
	if replicas == 2 && c.cfg.Storage == jetstream.FileStorage {
		attrs = append(attrs, "note", "replicas 2 keep acknowledged messages through one machine crash but stop acknowledging while either replica is down; replicas 3 keep going")
	}
	return append(attrs, "at_least_once", len(c.problems) == 0, "problems", len(c.problems), "checks", checkedRules)
}

func orNone(s string) string {
	if s == "" {
		return "none (an election is in progress, or a quorum is down)"
	}
	return s
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

// durabilityProblems checks a stream configuration. Each problem names its
// fix.
func durabilityProblems(cfg jetstream.StreamConfig, syncAlways bool, minDup time.Duration) []string {
	var out []string
	replicas := max(cfg.Replicas, 1)
	if cfg.Storage == jetstream.MemoryStorage {
		lost := "every message is lost when the server restarts"
		if replicas > 1 {
			lost = fmt.Sprintf("every message is lost when a quorum of its %d replicas restarts", replicas)
		}
		out = append(out, "memory storage: "+lost+"; recreate the stream with file storage and replicas 3 on a JetStream cluster (nats stream add --storage file --replicas 3), or replicas 1 on a server running with jetstream { sync_interval: always } declared with natspub.WithServerSyncAlways")
	} else if replicas < MinSafeReplicas && !syncAlways {
		out = append(out, fmt.Sprintf("replicas %d < %d: the server acknowledges before fsync (the default sync_interval is 2 minutes), so a crash of the machine can lose acknowledged messages that the relay has already marked published; use replicas 3 on a JetStream cluster (nats stream edit --replicas 3), or run the server with jetstream { sync_interval: always } and declare it with natspub.WithServerSyncAlways (a client cannot read the server's sync setting)",
			replicas, MinSafeReplicas))
	}
	if minDup > 0 && cfg.Duplicates < minDup {
		out = append(out, fmt.Sprintf("duplicate window %v is shorter than %v (relay lease + outage allowance): an event republished after a relay lost its lease or the broker was down can be stored twice; raise the stream's duplicate_window (nats stream edit --dupe-window %v)",
			cfg.Duplicates, minDup, minDup))
	}
	return out
}

// Preflight implements relay.Preflighter: unless WithoutDurabilityCheck was
// given, it checks the stream as CheckStream does, with the relay's lease
// plus the outage allowance (WithOutageAllowance) as the least duplicate
// window. It logs one Info record to info.Logger saying what it checked
// (stream, storage, replicas, cluster, leader, followers, duplicate window,
// whether sync_interval always was declared, and the rules) and a warning
// for each problem found, which names the fix. It returns the error of the
// lookup, if any (the relay logs it); problems are warnings only.
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
	c, err := p.checkStream(ctx, minDup)
	var de *DurabilityError
	switch {
	case errors.As(err, &de): // no stream stores the subject
		warnProblems(ctx, log, de.Stream, de.Problems)
		return nil
	case err != nil:
		return fmt.Errorf("natspub: durability check: %w", err)
	}
	log.InfoContext(ctx, "jitoutbox natspub: stream durability checked", c.logAttrs()...)
	warnProblems(ctx, log, c.stream, c.problems)
	return nil
}

func warnProblems(ctx context.Context, log *slog.Logger, stream string, problems []string) {
	for _, problem := range problems {
		log.WarnContext(ctx, "jitoutbox natspub: stream cannot guarantee at-least-once delivery",
			"stream", stream, "problem", problem)
	}
}

var _ relay.Preflighter = (*JetStream)(nil)
