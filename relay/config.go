package relay

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"time"

	"github.com/jitoutbox/jitoutbox/notify"
)

// Defaults applied by the relay to zero Config fields.
const (
	DefaultBatchSize       = 500
	DefaultPollInterval    = 30 * time.Second
	DefaultLazyDelay       = 250 * time.Millisecond
	DefaultLeaseDuration   = 60 * time.Second
	DefaultRebalance       = 30 * time.Second
	DefaultPublishTimeout  = 10 * time.Second
	DefaultMaxAttempts     = 10
	DefaultRetention       = 7 * 24 * time.Hour
	DefaultCleanupInterval = 10 * time.Minute
	DefaultCleanupBatch    = 1000
)

// ErrInvalidConfig matches every error New returns for a bad argument or
// Config field; the message names the field and how to fix it.
var ErrInvalidConfig = errors.New("relay: invalid config")

// Config configures a Relay. The zero value of every field selects its
// documented default; negative durations and counts are invalid unless a
// field says otherwise.
type Config struct {
	// Owner names this relay instance in the relays table and in logs; each
	// ownership session adds a random suffix to it for its fencing token.
	// Default: "<hostname>-<pid>-<random hex>".
	Owner string

	// BatchSize is the most rows read and published at once. Default 500.
	BatchSize int

	// Sources deliver wakes from other processes (notify/pgnotify,
	// notify/natsnotify): each wake runs a cycle at once; a source that
	// implements notify.LazySource also delivers lazy wakes (see LazyDelay).
	// Commits in this process reach the relay without a Source: give the
	// relay to txoutbox.WithRelay. Default: none. Entries must not be nil.
	Sources []notify.Source

	// PollInterval is the safety-net poll: a cycle runs when no other cycle
	// ran for this long (±20% jitter). Default 30s.
	PollInterval time.Duration

	// LazyDelay bounds how long after a lazy wake (an ordinary commit) a cycle
	// runs; lazy wakes arriving meanwhile are coalesced into that one cycle.
	// Default 250ms.
	LazyDelay time.Duration

	// LeaseDuration is how long the relay owns its partitions without
	// renewing, on dialects whose ownership is a lease (SQLite): a relay
	// that dies delays its partitions' events by at most this long. The
	// relay renews every (LeaseDuration - PublishTimeout) / 2 at most, so
	// that a missed renewal still leaves time for a Publish, and starts no
	// Publish that could outlast the lease. Dialects with session locks
	// (PostgreSQL, MariaDB/MySQL) ignore it: ownership there lasts as long
	// as the relay's session connection. It must exceed PublishTimeout.
	// Default 60s: with the default PublishTimeout a renewal every 25 s.
	LeaseDuration time.Duration

	// RebalanceInterval is how often the relay reads who owns which
	// partition and takes or releases partitions to own its share
	// (±20% jitter). A relay that holds less than its share checks every
	// 250ms until it has it; on PostgreSQL and MariaDB/MySQL a relay that
	// dies is noticed at once by the relay watching it, which takes its
	// partitions. Default 30s.
	RebalanceInterval time.Duration

	// PublishTimeout bounds one Publisher.Publish call. Default 10s.
	PublishTimeout time.Duration

	// MaxAttempts is the number of publish attempts after which a failing
	// event is dead-lettered. A failure because the broker was unavailable
	// (IsUnavailable) is not an attempt. Default 10.
	MaxAttempts int

	// Backoff returns the delay before the next attempt of an event that has
	// failed attempt times (attempt >= 1). Default: DefaultBackoff (about 1s,
	// 5s, 30s, 2m, then 5m, each ±20%).
	Backoff func(attempt int) time.Duration

	// DeleteOnPublish deletes rows once published instead of setting their
	// published state and time. Default false.
	DeleteOnPublish bool

	// ReleaseOnDead lets the later events of an aggregate flow past a
	// dead-lettered event. By default a dead event keeps its aggregate
	// blocked until an operator requeues it (it is then published first)
	// or skips it (outboxctl requeue / skip, or Dialect.Requeue / Skip), so
	// that consumers never see an aggregate's events out of order. With
	// ReleaseOnDead, a requeued event reaches consumers after events that
	// were registered later. Default false.
	ReleaseOnDead bool

	// Retention is how long published rows are kept before cleanup deletes
	// them. Zero means the default, 7 days; a negative value keeps them
	// (cleanup then only releases the ended holds of scheduled events).
	Retention time.Duration

	// CleanupInterval is how often the relay tries to take the cleanup lock
	// and delete expired published rows (only one relay cleans at a time).
	// Default 10m.
	CleanupInterval time.Duration

	// CleanupBatch is the most rows one cleanup statement deletes. Default
	// 1000.
	CleanupBatch int

	// DeadLetter, when set, also receives every dead-lettered event (best
	// effort: a failure is logged; the row is dead either way). Default nil.
	DeadLetter Publisher

	// Hooks observes batches and events (metrics, tracing). Default nil.
	Hooks Hooks

	// Logger receives the relay's logs. Default slog.Default().
	Logger *slog.Logger

	// Clock returns the current time, for reads, leases, retries and
	// latency. Default time.Now. Tests inject a fake. It must be safe for
	// concurrent use.
	Clock func() time.Time
}

// withDefaults returns c with zero fields set to their defaults.
func (c Config) withDefaults() Config {
	if c.Owner == "" {
		c.Owner = defaultOwner()
	}
	if c.BatchSize == 0 {
		c.BatchSize = DefaultBatchSize
	}
	if c.PollInterval == 0 {
		c.PollInterval = DefaultPollInterval
	}
	if c.LazyDelay == 0 {
		c.LazyDelay = DefaultLazyDelay
	}
	if c.LeaseDuration == 0 {
		c.LeaseDuration = DefaultLeaseDuration
	}
	if c.RebalanceInterval == 0 {
		c.RebalanceInterval = DefaultRebalance
	}
	if c.PublishTimeout == 0 {
		c.PublishTimeout = DefaultPublishTimeout
	}
	if c.MaxAttempts == 0 {
		c.MaxAttempts = DefaultMaxAttempts
	}
	if c.Backoff == nil {
		c.Backoff = DefaultBackoff
	}
	if c.Retention == 0 {
		c.Retention = DefaultRetention
	}
	if c.CleanupInterval == 0 {
		c.CleanupInterval = DefaultCleanupInterval
	}
	if c.CleanupBatch == 0 {
		c.CleanupBatch = DefaultCleanupBatch
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Clock == nil {
		c.Clock = time.Now
	}
	return c
}

// validate checks a Config that has had its defaults applied.
func (c Config) validate() error {
	nonNeg := []struct {
		name string
		v    int64
		hint string
	}{
		{"BatchSize", int64(c.BatchSize), "use 0 for the default 500"},
		{"PollInterval", int64(c.PollInterval), "use 0 for the default 30s"},
		{"LazyDelay", int64(c.LazyDelay), "use 0 for the default 250ms"},
		{"LeaseDuration", int64(c.LeaseDuration), "use 0 for the default 60s"},
		{"RebalanceInterval", int64(c.RebalanceInterval), "use 0 for the default 30s"},
		{"PublishTimeout", int64(c.PublishTimeout), "use 0 for the default 10s"},
		{"MaxAttempts", int64(c.MaxAttempts), "use 0 for the default 10"},
		{"CleanupInterval", int64(c.CleanupInterval), "use 0 for the default 10m"},
		{"CleanupBatch", int64(c.CleanupBatch), "use 0 for the default 1000"},
	}
	for _, f := range nonNeg {
		if f.v < 0 {
			return fmt.Errorf("%w: %s is negative (%d); %s", ErrInvalidConfig, f.name, f.v, f.hint)
		}
	}
	if c.LeaseDuration <= c.PublishTimeout {
		return fmt.Errorf("%w: LeaseDuration (%s) must exceed PublishTimeout (%s), or ownership could expire while a batch is being published; raise LeaseDuration or lower PublishTimeout",
			ErrInvalidConfig, c.LeaseDuration, c.PublishTimeout)
	}
	for i, s := range c.Sources {
		if s == nil {
			return fmt.Errorf("%w: Sources[%d] is nil; remove it", ErrInvalidConfig, i)
		}
	}
	if len(c.Owner) > 200 {
		return fmt.Errorf("%w: Owner is %d bytes long; use at most 200", ErrInvalidConfig, len(c.Owner))
	}
	return nil
}

// defaultOwner returns "<hostname>-<pid>-<random hex>".
func defaultOwner() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "relay"
	}
	if len(host) > 100 {
		host = host[:100]
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	return host + "-" + strconv.Itoa(os.Getpid()) + "-" + hex.EncodeToString(b[:])
}
