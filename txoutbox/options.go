package txoutbox

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jitoutbox/jitoutbox/notify"
)

// DefaultMaxPayload is the default largest payload Add accepts (1 MiB).
const DefaultMaxPayload = 1 << 20

// config is what Options set.
type config struct {
	notifier   notify.Notifier
	relay      Relay
	maxPayload int
	clock      func() time.Time
	logger     *slog.Logger
	injectors  []HeaderInjector
	noLazyWake bool
	encoder    PayloadEncoder
}

func defaultConfig() config {
	return config{
		maxPayload: DefaultMaxPayload,
		clock:      time.Now,
		logger:     slog.New(slog.DiscardHandler),
	}
}

// Option configures an Outbox. An invalid option makes New fail.
type Option func(*config) error

// WithNotifier sets the Notifier that wakes relays in other processes
// (notify/pgnotify, notify/natsnotify). After a time-critical commit with
// events of partitions that no relay in this process owns, it is told
// once (Notify); a notify.TxNotifier is also told inside the transaction,
// before COMMIT. After an ordinary commit, a notify.LazyNotifier gets
// NotifyLazy. n must not be nil.
func WithNotifier(n notify.Notifier) Option {
	return func(c *config) error {
		if n == nil {
			return fmt.Errorf("%w: WithNotifier(nil)", ErrInvalidOption)
		}
		c.notifier = n
		return nil
	}
}

// WithRelay wires the relay running in this process (a *relay.Relay): the
// one hand-over between txoutbox and the relay. After a time-critical commit, the rows of
// partitions that relay owns are handed to it in memory and published at
// once, with no read; after an ordinary commit it gets a lazy wake. The
// relay needs no Source for commits of this process. r must read the same
// *sql.DB and table as the Outbox.
func WithRelay(r Relay) Option {
	return func(c *config) error {
		if r == nil {
			return fmt.Errorf("%w: WithRelay(nil)", ErrInvalidOption)
		}
		c.relay = r
		return nil
	}
}

// WithMaxPayload sets the largest payload, in bytes, that Add accepts
// (default DefaultMaxPayload). n must be positive.
func WithMaxPayload(n int) Option {
	return func(c *config) error {
		if n <= 0 {
			return fmt.Errorf("%w: WithMaxPayload(%d): must be positive", ErrInvalidOption, n)
		}
		c.maxPayload = n
		return nil
	}
}

// WithClock sets the clock used for event creation times (default
// time.Now). Event ids are UUIDv7 from github.com/google/uuid's NewV7,
// which reads the wall clock. now must not be nil.
func WithClock(now func() time.Time) Option {
	return func(c *config) error {
		if now == nil {
			return fmt.Errorf("%w: WithClock(nil)", ErrInvalidOption)
		}
		c.clock = now
		return nil
	}
}

// WithLogger sets the logger (default: discard). l must not be nil. The
// Outbox logs only what no caller can be told through an error: at error
// level, an adopted transaction (Adopt) whose context ended while its
// events were still buffered, so they were never written (the *sql.Tx was
// most likely committed directly). Errors of Begin, Add and Commit are
// returned, not logged; notifiers log their own failures.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) error {
		if l == nil {
			return fmt.Errorf("%w: WithLogger(nil)", ErrInvalidOption)
		}
		c.logger = l
		return nil
	}
}

// HeaderInjector adds headers derived from the context an event is
// registered with, such as a trace context, to the event's copied headers
// map (never nil; it already holds the event's own headers, which the
// injector may read or overwrite). It is called by Add, once per event,
// with the context of the registration: the ctx given to the package-level
// Add, or the Begin context for Tx.Add. It must be safe for concurrent use
// and must not keep the map.
type HeaderInjector func(ctx context.Context, headers map[string]string)

// WithHeaderInjector adds an injector called by Add for every event (see
// HeaderInjector); several are called in the order given. What they write
// obeys the rules for Event.Headers: a header that breaks them makes Add
// fail with a *ValidationError and nothing is buffered. This is how
// jitotel.PropagateTrace stores the W3C traceparent and tracestate headers
// without txoutbox importing OpenTelemetry. inject must not be nil.
func WithHeaderInjector(inject HeaderInjector) Option {
	return func(c *config) error {
		if inject == nil {
			return fmt.Errorf("%w: WithHeaderInjector(nil)", ErrInvalidOption)
		}
		c.injectors = append(c.injectors, inject)
		return nil
	}
}

// WithoutLazyWake turns off the wake of ordinary commits. By default a
// commit that is not time-critical gives the relay of this process a lazy
// wake (relay Config.LazyDelay, 250 ms: the relay reads once for all such
// commits of that delay) and a notify.LazyNotifier a NotifyLazy. With this
// option it tells nobody: its rows are published at the relays' next poll
// (relay Config.PollInterval), so under a steady flow of ordinary commits
// the relay reads once per poll instead of once per lazy delay, at the
// price of that latency. Time-critical commits (TimeCritical,
// Event.TimeCritical) still wake at once. Use it when only time-critical
// events must be fast and the database should see as few reads as
// possible.
func WithoutLazyWake() Option {
	return func(c *config) error {
		c.noLazyWake = true
		return nil
	}
}

// txConfig is what TxOptions set.
type txConfig struct {
	critical bool
}

// TxOption configures one transaction begun with Outbox.Begin (or adopted
// with Adopt, or captured with NewCapture).
type TxOption func(*txConfig)

// TimeCritical marks the transaction time-critical: after it commits, the
// Outbox's Notifier is told, so the events are published at once rather than
// at the relay's next poll.
func TimeCritical() TxOption {
	return func(c *txConfig) { c.critical = true }
}
