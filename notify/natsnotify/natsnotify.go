// Package natsnotify carries jitoutbox wakes between processes as tiny core
// NATS messages on a subject. Use it where the database has no
// LISTEN/NOTIFY (MySQL, MariaDB, SQLite) or where relays already share a NATS
// connection.
//
// The committing process uses a Notifier: Notify never blocks, and its Run
// loop publishes one message for every burst of Notify calls, whose payload
// names the union of their partitions (notify.AppendPayload). A relay uses a
// Listener as a notify.Source: every message on the subject is a wake for
// the partitions it names (an empty or unreadable one: any partition), and
// every reconnect of the NATS connection is a wake for any partition,
// because wakes published while it was away are lost. The message carries
// nothing the relay trusts: a wake only makes the owner of a partition look
// at the database sooner.
package natsnotify

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/jitoutbox/jitoutbox/notify"
	"github.com/nats-io/nats.go"
)

// DefaultSubject is the subject used when none is configured.
const DefaultSubject = "jitoutbox.wake"

// ErrInvalidSubject is returned (wrapped) for a subject that is empty, has
// wildcards, whitespace or empty tokens.
var ErrInvalidSubject = errors.New("natsnotify: invalid subject")

// ErrInvalidOption is returned (wrapped) for any other invalid option.
var ErrInvalidOption = errors.New("natsnotify: invalid option")

type config struct {
	subject string
	logger  *slog.Logger
	// reconnectCheck is how often the listener looks for a reconnect.
	reconnectCheck time.Duration
}

// Option configures a Notifier or a Listener.
type Option func(*config) error

// WithSubject sets the wake subject (default DefaultSubject); both sides must
// agree.
func WithSubject(s string) Option {
	return func(c *config) error {
		if err := ValidateSubject(s); err != nil {
			return err
		}
		c.subject = s
		return nil
	}
}

// WithLogger sets the logger (default slog.Default()).
func WithLogger(l *slog.Logger) Option {
	return func(c *config) error {
		if l == nil {
			return fmt.Errorf("%w: nil logger", ErrInvalidOption)
		}
		c.logger = l
		return nil
	}
}

// ValidateSubject reports whether s is a literal NATS subject: non-empty
// dot-separated tokens of printable ASCII without '*', '>' or whitespace.
func ValidateSubject(s string) error {
	if s == "" {
		return fmt.Errorf("%w: empty", ErrInvalidSubject)
	}
	for _, tok := range strings.Split(s, ".") {
		if tok == "" {
			return fmt.Errorf("%w: %q has an empty token", ErrInvalidSubject, s)
		}
		for i := 0; i < len(tok); i++ {
			c := tok[i]
			if c <= ' ' || c >= 0x7f || c == '*' || c == '>' {
				return fmt.Errorf("%w: %q: wildcards, whitespace and non-ASCII are not allowed", ErrInvalidSubject, s)
			}
		}
	}
	return nil
}

func newConfig(opts []Option) (config, error) {
	c := config{subject: DefaultSubject, logger: slog.Default(), reconnectCheck: time.Second}
	for _, o := range opts {
		if err := o(&c); err != nil {
			return config{}, err
		}
	}
	return c, nil
}

// Notifier publishes coalesced wakes. Call Run to start publishing; Notify
// before Run only records that a wake is due.
type Notifier struct {
	nc      *nats.Conn
	cfg     config
	pending *notify.Wakes // the partitions of the next message
}

var _ notify.Notifier = (*Notifier)(nil)

// NewNotifier returns a Notifier publishing on nc.
func NewNotifier(nc *nats.Conn, opts ...Option) (*Notifier, error) {
	if nc == nil {
		return nil, fmt.Errorf("%w: nil *nats.Conn", ErrInvalidOption)
	}
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	return &Notifier{nc: nc, cfg: cfg, pending: notify.NewWakes()}, nil
}

// Notify records that a wake for parts (nil: any partition) is due; it
// never blocks.
func (n *Notifier) Notify(parts []int) { n.pending.Wake(parts) }

// Run publishes wakes until ctx ends, then returns nil. Publishing is
// buffered by nats.go; a failure is logged once per failure streak.
func (n *Notifier) Run(ctx context.Context) error {
	failing := false
	var payload []byte
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-n.pending.C():
		}
		parts, _ := n.pending.Take() // any: nil, an empty payload
		// Publish copies the payload into nats.go's buffer before it
		// returns, so one buffer serves every message.
		payload = notify.AppendPayload(payload[:0], parts)
		err := n.nc.Publish(n.cfg.subject, payload)
		switch {
		case err == nil && failing:
			n.cfg.logger.Info("jitoutbox/natsnotify: publishing wakes works again", "subject", n.cfg.subject)
			failing = false
		case err != nil && !failing:
			n.cfg.logger.Warn("jitoutbox/natsnotify: publishing a wake failed; relays will still poll", "subject", n.cfg.subject, "err", err)
			failing = true
		}
	}
}

// Listener is a notify.Source fed by a NATS subscription.
type Listener struct {
	nc  *nats.Conn
	cfg config
}

var _ notify.Source = (*Listener)(nil)

// NewListener returns a Listener subscribing on nc.
func NewListener(nc *nats.Conn, opts ...Option) (*Listener, error) {
	if nc == nil {
		return nil, fmt.Errorf("%w: nil *nats.Conn", ErrInvalidOption)
	}
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	return &Listener{nc: nc, cfg: cfg}, nil
}

// Listen subscribes and delivers into w a wake for every message (for the
// partitions it names), one for any partition once the subscription is in
// place, and one after every reconnect of the connection. The subscription
// and the goroutine end with ctx.
func (l *Listener) Listen(ctx context.Context, w *notify.Wakes) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	sub, err := l.nc.Subscribe(l.cfg.subject, func(m *nats.Msg) { w.Wake(notify.ParsePayload(m.Data)) })
	if err != nil {
		return fmt.Errorf("natsnotify: subscribe %q: %w", l.cfg.subject, err)
	}
	// Many wakes may queue inside nats.go before our callback coalesces them;
	// the callback is cheap, so a small pending limit only drops surplus wakes.
	_ = sub.SetPendingLimits(1024, 64*1024)
	// Make sure the server has the subscription before reporting "ready"
	// with the first wake: a wake published right after it must not be
	// lost. When the connection is down the flush fails; the subscription is
	// then sent on reconnect, which wakes again.
	fctx, cancel := context.WithTimeout(ctx, l.cfg.reconnectCheck+5*time.Second)
	_ = l.nc.FlushWithContext(fctx)
	cancel()
	w.Wake(nil)
	go func() {
		defer func() { _ = sub.Unsubscribe() }()
		t := time.NewTicker(l.cfg.reconnectCheck)
		defer t.Stop()
		last := l.nc.Stats().Reconnects
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if r := l.nc.Stats().Reconnects; r != last {
					last = r
					w.Wake(nil)
				}
			}
		}
	}()
	return nil
}
