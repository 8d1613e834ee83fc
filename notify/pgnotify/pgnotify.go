// Package pgnotify carries jitoutbox wakes between processes through
// PostgreSQL LISTEN/NOTIFY.
//
// The committing process uses a Notifier: after a time-critical commit,
// txoutbox calls Notify with the partitions of its time-critical rows, which
// never blocks; the Notifier's Run loop then sends one pg_notify statement on
// a pooled connection, coalescing every Notify that arrived meanwhile into
// that one statement, whose payload names the union of their partitions
// (notify.AppendPayload). Sending after commit
// keeps committers independent: a NOTIFY inside each write transaction takes a
// global lock at commit and serialises all committers.
//
// A relay process uses a Listener as a notify.Source. It keeps one dedicated
// connection (lib/pq's Listener, which works whatever driver the application
// uses for its pool, pgx included: it only needs the DSN), reconnects with
// backoff when that connection dies, and after every reconnect delivers a
// wake for any partition, because notifications sent while it was away are
// lost. The payload only narrows which relays look (notify.ParsePayload; an
// empty or unreadable one wakes every relay): a wake is a hint, never data
// the relay has to trust. The errors it
// logs never show the DSN's password, even for a DSN lib/pq cannot parse
// and quotes.
package pgnotify

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jitoutbox/jitoutbox/internal/ident"
	"github.com/jitoutbox/jitoutbox/internal/redact"
	"github.com/jitoutbox/jitoutbox/notify"
	"github.com/lib/pq"
)

// DefaultChannel is the channel name used when none is configured.
const DefaultChannel = "jitoutbox"

// ErrInvalidChannel is returned (wrapped) when a channel name is not a plain
// identifier.
var ErrInvalidChannel = errors.New("pgnotify: invalid channel name")

// ErrInvalidOption is returned (wrapped) for any other invalid option.
var ErrInvalidOption = errors.New("pgnotify: invalid option")

type config struct {
	channel      string
	minReconnect time.Duration
	maxReconnect time.Duration
	pingInterval time.Duration
	logger       *slog.Logger
}

// Option configures a Listener or a Notifier.
type Option func(*config) error

// WithChannel sets the LISTEN/NOTIFY channel (default DefaultChannel). It must
// be a plain identifier (letters, digits, underscore); both sides must agree.
func WithChannel(name string) Option {
	return func(c *config) error {
		if err := ident.Validate(name); err != nil || containsDot(name) {
			return fmt.Errorf("%w: %q (use letters, digits and '_')", ErrInvalidChannel, name)
		}
		c.channel = name
		return nil
	}
}

// WithReconnect sets the listener's reconnect backoff bounds (default 100 ms
// doubling up to 10 s).
func WithReconnect(min, max time.Duration) Option {
	return func(c *config) error {
		if min <= 0 || max < min {
			return fmt.Errorf("%w: reconnect bounds %v..%v", ErrInvalidOption, min, max)
		}
		c.minReconnect, c.maxReconnect = min, max
		return nil
	}
}

// WithPingInterval sets how often an idle listener checks its connection
// (default 30 s), so a dead connection is noticed even when nobody notifies.
func WithPingInterval(d time.Duration) Option {
	return func(c *config) error {
		if d <= 0 {
			return fmt.Errorf("%w: ping interval %v", ErrInvalidOption, d)
		}
		c.pingInterval = d
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

func containsDot(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '.' {
			return true
		}
	}
	return false
}

func newConfig(opts []Option) (config, error) {
	c := config{
		channel:      DefaultChannel,
		minReconnect: 100 * time.Millisecond,
		maxReconnect: 10 * time.Second,
		pingInterval: 30 * time.Second,
		logger:       slog.Default(),
	}
	for _, o := range opts {
		if err := o(&c); err != nil {
			return config{}, err
		}
	}
	return c, nil
}

// Listener is a notify.Source fed by PostgreSQL LISTEN.
type Listener struct {
	dsn string
	cfg config
	// secrets are the DSN and its password in every printed form: lib/pq
	// quotes the whole DSN in the error of a DSN it cannot parse (an
	// unescaped '%' in a URL's password), and the listener logs that error
	// on every reconnect.
	secrets []string
}

var _ notify.Source = (*Listener)(nil)

// NewListener returns a Listener that connects with dsn (a lib/pq connection
// string or URL) when Listen is called.
func NewListener(dsn string, opts ...Option) (*Listener, error) {
	if dsn == "" {
		return nil, fmt.Errorf("%w: empty DSN", ErrInvalidOption)
	}
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	return &Listener{dsn: dsn, cfg: cfg, secrets: redact.Secrets(dsn)}, nil
}

// Listen opens the dedicated connection and starts delivering wakes into w
// until ctx ends. The first wake (any partition) arrives once LISTEN is in
// place, so a relay polls once after (re)connecting. The goroutine it
// starts, and lib/pq's, end with ctx.
func (l *Listener) Listen(ctx context.Context, w *notify.Wakes) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	log := l.cfg.logger.With("component", "jitoutbox/pgnotify", "channel", l.cfg.channel)
	var (
		mu        sync.Mutex
		lastState pq.ListenerEventType = -1
	)
	cb := func(ev pq.ListenerEventType, err error) {
		mu.Lock()
		defer mu.Unlock()
		switch ev {
		case pq.ListenerEventReconnected:
			log.Info("listener reconnected")
		case pq.ListenerEventDisconnected:
			log.Warn("listener connection lost; reconnecting", "err", redact.Error(err, l.secrets...))
		case pq.ListenerEventConnectionAttemptFailed:
			if lastState != pq.ListenerEventConnectionAttemptFailed {
				log.Warn("listener cannot connect; retrying with backoff", "err", redact.Error(err, l.secrets...))
			}
		}
		lastState = ev
	}
	pl := pq.NewListener(l.dsn, l.cfg.minReconnect, l.cfg.maxReconnect, cb)
	go l.run(ctx, pl, w)
	return nil
}

func (l *Listener) run(ctx context.Context, pl *pq.Listener, w *notify.Wakes) {
	defer pl.Close()
	listened := make(chan error, 1)
	go func() { listened <- pl.Listen(l.cfg.channel) }()
	stop := context.AfterFunc(ctx, func() { _ = pl.Close() }) // unblocks Listen
	defer stop()
	select {
	case err := <-listened:
		if err != nil {
			if ctx.Err() == nil {
				l.cfg.logger.Error("jitoutbox/pgnotify: LISTEN failed", "channel", l.cfg.channel, "err", redact.Error(err, l.secrets...))
			}
			<-ctx.Done()
			return
		}
		w.Wake(nil) // connected: poll once
	case <-ctx.Done():
		<-listened
		return
	}
	ping := time.NewTicker(l.cfg.pingInterval)
	defer ping.Stop()
	pinged := make(chan struct{}, 1)
	pinged <- struct{}{}
	for {
		select {
		case <-ctx.Done():
			_ = pl.Close() // makes an in-flight Ping return
			<-pinged       // so no goroutine outlives Listen's ctx
			return
		case n := <-pl.Notify:
			// A notification, or nil after a reconnect (when wakes may have
			// been lost, so any partition).
			if n == nil {
				w.Wake(nil)
			} else {
				w.Wake(notify.ParsePayload([]byte(n.Extra)))
			}
		case <-ping.C:
			// Ping in the background so a hung connection never blocks the
			// loop; only one ping at a time.
			select {
			case <-pinged:
				go func() {
					_ = pl.Ping() // a failure makes lib/pq reconnect
					pinged <- struct{}{}
				}()
			default:
			}
		}
	}
}

// Notifier sends a coalesced NOTIFY after time-critical commits. Call Run to
// start sending; Notify before Run only records that a wake is due.
type Notifier struct {
	db      *sql.DB
	cfg     config
	pending *notify.Wakes // the partitions of the next NOTIFY
}

var _ notify.Notifier = (*Notifier)(nil)

// NewNotifier returns a Notifier that sends NOTIFY through db.
func NewNotifier(db *sql.DB, opts ...Option) (*Notifier, error) {
	if db == nil {
		return nil, fmt.Errorf("%w: nil *sql.DB", ErrInvalidOption)
	}
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	return &Notifier{db: db, cfg: cfg, pending: notify.NewWakes()}, nil
}

// Notify records that a wake for parts (nil: any partition) is due. It
// never blocks; any number of calls before the next send result in one
// NOTIFY naming the union of their partitions.
func (n *Notifier) Notify(parts []int) { n.pending.Wake(parts) }

// Run sends the NOTIFYs until ctx ends. It returns nil when ctx ends. A
// failed send is logged (once per failure streak) and retried with backoff:
// relays also poll, so a lost wake delays events but loses none.
func (n *Notifier) Run(ctx context.Context) error {
	backoff := n.cfg.minReconnect
	failing := false
	var payload []byte
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-n.pending.C():
		}
		parts, _ := n.pending.Take() // any: nil, an empty payload
		payload = notify.AppendPayload(payload[:0], parts)
		sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		_, err := n.db.ExecContext(sctx, "SELECT pg_notify($1, $2)", n.cfg.channel, string(payload))
		cancel()
		if err == nil {
			if failing {
				n.cfg.logger.Info("jitoutbox/pgnotify: NOTIFY works again", "channel", n.cfg.channel)
			}
			failing, backoff = false, n.cfg.minReconnect
			continue
		}
		if ctx.Err() != nil {
			return nil
		}
		if !failing {
			n.cfg.logger.Warn("jitoutbox/pgnotify: NOTIFY failed; relays will still poll", "channel", n.cfg.channel, "err", err)
		}
		failing = true
		n.Notify(parts) // retry the wake after the backoff
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
		backoff = min(2*backoff, n.cfg.maxReconnect)
	}
}

// TxNotifier sends NOTIFY inside each time-critical transaction, right
// before COMMIT; PostgreSQL delivers it when, and only if, the transaction
// commits. It costs no extra round trip after the commit and needs no Run
// loop, but every notifying transaction then takes a global lock at commit
// that serialises committers (see the package benchmarks for the cost), so
// Notifier is the default. Combine with notify.Multi to also wake an
// in-process relay.
type TxNotifier struct {
	cfg config
}

var _ notify.TxNotifier = (*TxNotifier)(nil)

// NewTxNotifier returns a TxNotifier.
func NewTxNotifier(opts ...Option) (*TxNotifier, error) {
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	return &TxNotifier{cfg: cfg}, nil
}

// Notify does nothing: the wake was sent inside the transaction.
func (n *TxNotifier) Notify([]int) {}

// NotifyInTx queues the NOTIFY, naming parts, in the transaction.
func (n *TxNotifier) NotifyInTx(ctx context.Context, ex notify.Execer, parts []int) error {
	if _, err := ex.ExecContext(ctx, "SELECT pg_notify($1, $2)", n.cfg.channel, string(notify.AppendPayload(nil, parts))); err != nil {
		return fmt.Errorf("pgnotify: notify in transaction: %w", err)
	}
	return nil
}
