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
// Cross-process wakes (PostgreSQL LISTEN/NOTIFY, a NATS subject) live in
// sub-packages: the committing side gives one to txoutbox.WithNotifier, the
// relay lists it in relay.Config.Sources. A relay in the committing process
// needs no wake from this package: txoutbox.WithRelay hands it the committed
// rows directly. Local is a plain in-process signal (both a Notifier and a
// Source) for other in-process listeners and tests.
package notify

import (
	"context"
	"database/sql"
	"sync"
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
	_ LazyNotifier = multi(nil)
	_ TxNotifier   = multi(nil)
)

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

// NotifyLazy forwards to the notifiers that take lazy wakes.
func (m multi) NotifyLazy() {
	for _, n := range m {
		if ln, ok := n.(LazyNotifier); ok {
			ln.NotifyLazy()
		}
	}
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

// Local is an in-process, coalescing signal. Notify wakes every current
// listener; it never blocks. The zero value is ready to use.
type Local struct {
	mu       sync.Mutex
	subs     map[*chan struct{}]struct{}
	lazySubs map[*chan struct{}]struct{}
}

var (
	_ LazyNotifier = (*Local)(nil)
	_ Source       = (*Local)(nil)
	_ LazySource   = (*Local)(nil)
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

// NotifyLazy wakes all lazy listeners.
func (l *Local) NotifyLazy() {
	l.mu.Lock()
	wakeAll(l.lazySubs)
	l.mu.Unlock()
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
