// Package notify carries "there is something to publish" wakes from the
// committing side of jitoutbox to relays.
//
// The committing side holds a Notifier: txoutbox calls Notify once after each
// successful COMMIT of a time-critical transaction. A relay holds one or more
// Sources and runs a cycle whenever any of them delivers a wake.
//
// Wakes carry no data and are coalesced: a burst of Notify calls while a relay
// is busy results in at most one further cycle. A wake is only a hint; relays
// also poll, so a lost wake delays an event but never loses it.
//
// Local is the in-process implementation (both a Notifier and a Source).
// Cross-process sources (PostgreSQL LISTEN/NOTIFY, a NATS subject) live in
// sub-packages and plug into a relay the same way.
package notify

import (
	"context"
	"database/sql"
	"sync"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
)

// Notifier is told after a time-critical commit. Notify must never block and
// must be safe for concurrent use.
type Notifier interface {
	Notify()
}

// Source delivers wakes to a relay.
type Source interface {
	// Listen returns a channel that receives a value whenever a relay should
	// run a cycle. The channel has a buffer of one, so wakes coalesce. Any
	// goroutine Listen starts ends when ctx ends; after that no more values
	// are sent.
	Listen(ctx context.Context) (<-chan struct{}, error)
}

// Multi returns a Notifier that notifies each of ns in turn (nil entries are
// skipped). Use it to wake both an in-process relay and other processes.
func Multi(ns ...Notifier) Notifier {
	var out multi
	for _, n := range ns {
		if n != nil {
			out = append(out, n)
		}
	}
	return out
}

type multi []Notifier

var (
	_ EventNotifier = multi(nil)
	_ LazyNotifier  = multi(nil)
	_ TxNotifier    = multi(nil)
	_ Leaser        = multi(nil)
)

// LeaseFor forwards to the first notifier that is a Leaser.
func (m multi) LeaseFor() (string, time.Duration, bool) {
	for _, n := range m {
		if l, ok := n.(Leaser); ok {
			return l.LeaseFor()
		}
	}
	return "", 0, false
}

// NotifyLeased hands recs to the first Leaser. The others are not woken:
// the rows are leased to that Leaser's relay, other relays would skip them.
func (m multi) NotifyLeased(recs []dialects.Record, leaseUntil time.Time) {
	for _, n := range m {
		if l, ok := n.(Leaser); ok {
			l.NotifyLeased(recs, leaseUntil)
			return
		}
	}
}

// NotifyInTx forwards to the notifiers that speak inside the transaction and
// returns the first error.
func (m multi) NotifyInTx(ctx context.Context, ex Execer) error {
	for _, n := range m {
		if tn, ok := n.(TxNotifier); ok {
			if err := tn.NotifyInTx(ctx, ex); err != nil {
				return err
			}
		}
	}
	return nil
}

func (m multi) Notify() {
	for _, n := range m {
		n.Notify()
	}
}

// NotifyEvents passes ids to the notifiers that take them and calls Notify on
// the others.
func (m multi) NotifyEvents(ids []string) {
	for _, n := range m {
		if en, ok := n.(EventNotifier); ok {
			en.NotifyEvents(ids)
		} else {
			n.Notify()
		}
	}
}

// NotifyLazy forwards to the notifiers that take lazy wakes.
func (m multi) NotifyLazy() {
	for _, n := range m {
		if ln, ok := n.(LazyNotifier); ok {
			ln.NotifyLazy()
		}
	}
}

// EventNotifier is an optional extension of Notifier: txoutbox calls
// NotifyEvents instead of Notify when the notifier offers it, passing the ids
// of the committed time-critical events, so that a relay in the same process
// can claim exactly those rows by id instead of scanning. ids must not be
// retained after the call returns.
type EventNotifier interface {
	Notifier
	NotifyEvents(ids []string)
}

// LazyNotifier is an optional extension of Notifier: txoutbox calls
// NotifyLazy after committing a transaction that has events but is not time
// critical. Relays treat it as "run a cycle soon": a delayed, coalesced wake
// that costs at most one cycle per delay, instead of waiting for the poll.
type LazyNotifier interface {
	NotifyLazy()
}

// Execer is the part of *sql.Tx a TxNotifier uses.
type Execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// TxNotifier is an optional extension of Notifier for wakes that must be
// sent inside the transaction: txoutbox calls NotifyInTx in a time-critical
// transaction right after writing its events and before COMMIT (PostgreSQL
// delivers a NOTIFY only if, and when, the transaction commits). An error
// fails the flush: the transaction is rolled back. Notify is still called
// after the commit, so a TxNotifier can also wake in-process listeners.
type TxNotifier interface {
	Notifier
	NotifyInTx(ctx context.Context, ex Execer) error
}

// LazySource is an optional extension of Source for lazy wakes.
type LazySource interface {
	ListenLazy(ctx context.Context) (<-chan struct{}, error)
}

// IDSource is an optional extension of Source: TakeIDs removes and returns up
// to max ids of committed time-critical events that no relay has taken yet.
type IDSource interface {
	TakeIDs(max int) []string
}

// Leaser is an optional extension of Notifier that lets a time-critical
// transaction hand its events straight to a relay in the same process: the
// just-in-time path without a claim. txoutbox asks LeaseFor before the flush;
// when a relay takes leased events, the flush writes the rows already leased
// to that relay (owner and expiry, in the same INSERT, only for rows whose
// aggregate has no earlier pending row), and after a successful COMMIT
// txoutbox passes the leased rows to NotifyLeased. The relay publishes them
// at once and marks them; if it never does (it stopped, the process died),
// the lease expires and any relay claims them as usual.
type Leaser interface {
	Notifier
	// LeaseFor reports the owner and lease length to write, ok false when no
	// relay takes leased events now (none registered, or its queue is full).
	LeaseFor() (owner string, lease time.Duration, ok bool)
	// NotifyLeased hands committed rows (Attempts 0) leased until
	// leaseUntil to the relay and wakes it. It never blocks; recs must not
	// be modified afterwards.
	NotifyLeased(recs []dialects.Record, leaseUntil time.Time)
}

// LeaseSource is the relay side of Leaser: a relay that finds it among its
// sources calls ServeLeases with its owner id and lease length, and takes the
// handed-over rows with TakeLeased when woken.
type LeaseSource interface {
	// ServeLeases registers the caller as the relay that takes leased
	// events. It returns false when another relay already has. unregister
	// stops the hand-over and returns the rows not taken yet, which the
	// relay must release.
	ServeLeases(owner string, lease time.Duration) (unregister func() []dialects.Record, ok bool)
	// TakeLeased removes and returns up to max handed-over rows, oldest
	// first, and the earliest lease expiry among them.
	TakeLeased(max int) ([]dialects.Record, time.Time)
}

// maxPendingLeased bounds the rows a Local holds for its relay; while it is
// full, LeaseFor says no and commits take the claim path.
const maxPendingLeased = 4096

// maxPendingIDs bounds the ids a Local keeps for the fast path; beyond it ids
// are dropped (the relay's scan still finds the rows).
const maxPendingIDs = 4096

// Local is an in-process, coalescing signal. Notify wakes every current
// listener; it never blocks. The zero value is ready to use.
type Local struct {
	mu       sync.Mutex
	subs     map[*chan struct{}]struct{}
	lazySubs map[*chan struct{}]struct{}
	ids      []string

	leaseOwner string        // the relay serving leases; "" when none
	leaseLen   time.Duration // its lease length
	leased     []dialects.Record
	leasedTill []time.Time // lease expiry of each leased row
}

var (
	_ EventNotifier = (*Local)(nil)
	_ LazyNotifier  = (*Local)(nil)
	_ Source        = (*Local)(nil)
	_ LazySource    = (*Local)(nil)
	_ IDSource      = (*Local)(nil)
	_ Leaser        = (*Local)(nil)
	_ LeaseSource   = (*Local)(nil)
)

// NewLocal returns a new in-process signal.
func NewLocal() *Local { return &Local{} }

// Notify wakes all listeners. A listener that has not yet consumed an earlier
// wake is not woken twice.
func (l *Local) Notify() {
	l.mu.Lock()
	wakeAll(l.subs)
	l.mu.Unlock()
}

// NotifyEvents remembers ids for TakeIDs (up to a bound) and wakes all
// listeners.
func (l *Local) NotifyEvents(ids []string) {
	l.mu.Lock()
	if n := maxPendingIDs - len(l.ids); n > 0 {
		l.ids = append(l.ids, ids[:min(n, len(ids))]...)
	}
	wakeAll(l.subs)
	l.mu.Unlock()
}

// LeaseFor reports the registered relay's owner and lease length, ok false
// when no relay serves leases or its queue is full.
func (l *Local) LeaseFor() (owner string, lease time.Duration, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.leaseOwner == "" || len(l.leased) >= maxPendingLeased {
		return "", 0, false
	}
	return l.leaseOwner, l.leaseLen, true
}

// NotifyLeased queues recs for the registered relay and wakes all
// listeners. Rows that arrive after the relay unregistered are dropped: their
// leases expire and a relay claims them.
func (l *Local) NotifyLeased(recs []dialects.Record, leaseUntil time.Time) {
	l.mu.Lock()
	if l.leaseOwner != "" {
		l.leased = append(l.leased, recs...)
		for range recs {
			l.leasedTill = append(l.leasedTill, leaseUntil)
		}
	}
	wakeAll(l.subs)
	l.mu.Unlock()
}

// ServeLeases registers the relay owner as the taker of leased events.
func (l *Local) ServeLeases(owner string, lease time.Duration) (func() []dialects.Record, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.leaseOwner != "" || owner == "" || lease <= 0 {
		return nil, false
	}
	l.leaseOwner, l.leaseLen = owner, lease
	return func() []dialects.Record {
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.leaseOwner != owner {
			return nil
		}
		rest := l.leased
		l.leaseOwner, l.leaseLen, l.leased, l.leasedTill = "", 0, nil, nil
		return rest
	}, true
}

// TakeLeased removes and returns up to max handed-over rows, oldest first,
// and the earliest lease expiry among them.
func (l *Local) TakeLeased(max int) ([]dialects.Record, time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := min(max, len(l.leased))
	if n <= 0 {
		return nil, time.Time{}
	}
	out := make([]dialects.Record, n)
	copy(out, l.leased)
	until := l.leasedTill[0]
	for _, t := range l.leasedTill[1:n] {
		if t.Before(until) {
			until = t
		}
	}
	l.leased = append(l.leased[:0], l.leased[n:]...)
	l.leasedTill = append(l.leasedTill[:0], l.leasedTill[n:]...)
	return out, until
}

// NotifyLazy wakes all lazy listeners.
func (l *Local) NotifyLazy() {
	l.mu.Lock()
	wakeAll(l.lazySubs)
	l.mu.Unlock()
}

// TakeIDs removes and returns up to max pending ids, oldest first.
func (l *Local) TakeIDs(max int) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := min(max, len(l.ids))
	if n <= 0 {
		return nil
	}
	out := make([]string, n)
	copy(out, l.ids)
	l.ids = append(l.ids[:0], l.ids[n:]...)
	return out
}

// Listen registers a listener for urgent wakes until ctx ends. It starts no
// goroutine.
func (l *Local) Listen(ctx context.Context) (<-chan struct{}, error) {
	return l.listen(ctx, &l.subs)
}

// ListenLazy registers a listener for lazy wakes until ctx ends.
func (l *Local) ListenLazy(ctx context.Context) (<-chan struct{}, error) {
	return l.listen(ctx, &l.lazySubs)
}

func (l *Local) listen(ctx context.Context, set *map[*chan struct{}]struct{}) (<-chan struct{}, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c := make(chan struct{}, 1)
	l.mu.Lock()
	if *set == nil {
		*set = make(map[*chan struct{}]struct{})
	}
	(*set)[&c] = struct{}{}
	l.mu.Unlock()
	context.AfterFunc(ctx, func() {
		l.mu.Lock()
		delete(*set, &c)
		l.mu.Unlock()
	})
	return c, nil
}

func wakeAll(set map[*chan struct{}]struct{}) {
	for c := range set {
		select {
		case *c <- struct{}{}:
		default:
		}
	}
}
