// Package notify carries "there is something to publish" wakes from the
// committing side of jitoutbox to relays.
//
// The committing side holds a Notifier: txoutbox calls Notify once after each
// successful COMMIT of a time-critical transaction, with the outbox
// partitions of the time-critical rows that no relay in its process took.
// A relay holds one or more Sources, which put wakes into the relay's Wakes;
// it runs a critical read of the woken partitions it owns, and does nothing
// for a wake that names only other relays' partitions, so a time-critical
// commit costs one relay's reads however many relays share the table.
//
// Wakes are coalesced: a burst of Notify calls while a relay is busy results
// in at most one further cycle, for the union of their partitions. A wake is
// only a hint; relays also poll, so a lost wake delays an event but never
// loses it. A wake that names no partition (nil) means "any partition": the
// wake of a writer that does not say (an older release), of a reconnect
// (wakes may have been lost meanwhile), or of a payload that cannot be read.
//
// Cross-process wakes (PostgreSQL LISTEN/NOTIFY, a NATS subject) live in
// sub-packages: the committing side gives one to txoutbox.WithNotifier, the
// relay lists it in relay.Config.Sources. They carry the partitions as a
// payload (AppendPayload, ParsePayload). A relay in the committing process
// needs no wake from this package: txoutbox.WithRelay hands it the committed
// rows directly. Local is a plain in-process signal (both a Notifier and a
// Source) for other in-process listeners and tests.
package notify

import (
	"context"
	"database/sql"
	"math/bits"
	"strconv"
	"sync"
)

// Notifier is told after a time-critical commit. Notify must never block and
// must be safe for concurrent use.
type Notifier interface {
	// Notify announces time-critical rows in parts (outbox partition
	// numbers); nil means any partition. Notify must not keep parts.
	Notify(parts []int)
}

// Source delivers wakes to a relay.
type Source interface {
	// Listen starts delivering wakes into w until ctx ends. A source that
	// can miss notifications (one behind a connection) also delivers a
	// wake for any partition once it is ready and after every reconnect.
	// Any goroutine Listen starts ends when ctx ends; after that it
	// touches w no more.
	Listen(ctx context.Context, w *Wakes) error
}

// Wakes is a coalescing mailbox of wakes: the relay that waits on C owns
// it, Sources put wakes into it with Wake, from any goroutine. Pending
// wakes are the union of the partitions they name, or "any partition" once
// one names none. Make one with NewWakes.
type Wakes struct {
	c chan struct{}

	mu    sync.Mutex
	any   bool
	parts []uint64 // bit p: partition p woken
}

// maxWakePartition bounds the partition numbers a wake names; a larger or
// negative number (a corrupt payload) wakes any partition instead of
// growing the set.
const maxWakePartition = 1 << 16

// NewWakes returns an empty mailbox.
func NewWakes() *Wakes { return &Wakes{c: make(chan struct{}, 1)} }

// Wake records a wake for parts (nil or empty: any partition) and signals
// C. It never blocks and does not keep parts.
func (w *Wakes) Wake(parts []int) {
	w.mu.Lock()
	if len(parts) == 0 {
		w.any = true
	}
	for _, p := range parts {
		if w.any {
			break
		}
		if p < 0 || p >= maxWakePartition {
			w.any = true
			break
		}
		i := p / 64
		for len(w.parts) <= i {
			w.parts = append(w.parts, 0)
		}
		w.parts[i] |= 1 << (p % 64)
	}
	w.mu.Unlock()
	select {
	case w.c <- struct{}{}:
	default:
	}
}

// C receives a value when wakes may be pending (buffer of one: wakes
// coalesce). Call Take after each receive.
func (w *Wakes) C() <-chan struct{} { return w.c }

// Take returns the pending wakes and clears them: any when one of them
// named no partition, otherwise the woken partitions in ascending order
// (none when there was no wake since the last Take).
func (w *Wakes) Take() (parts []int, any bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.any {
		w.any = false
		clear(w.parts)
		return nil, true
	}
	for i, word := range w.parts {
		for word != 0 {
			b := bits.TrailingZeros64(word)
			parts = append(parts, i*64+b)
			word &^= 1 << b
		}
		w.parts[i] = 0
	}
	return parts, false
}

// MaxPayloadPartitions is the most partitions AppendPayload names; a wake
// for more is sent as a wake for any partition, which keeps the payload
// small (a NOTIFY payload is limited to 8000 bytes) at the cost of waking
// every relay.
const MaxPayloadPartitions = 64

// AppendPayload appends the payload that names parts to b: the partition
// numbers in decimal, separated by commas ("3,17"). No partitions, or more
// than MaxPayloadPartitions, give an empty payload: any partition.
func AppendPayload(b []byte, parts []int) []byte {
	if len(parts) > MaxPayloadPartitions {
		return b
	}
	for i, p := range parts {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(p), 10)
	}
	return b
}

// ParsePayload reads a payload made by AppendPayload. An empty payload, or
// one it cannot read (a wake is a hint, never data a relay has to trust),
// gives nil: any partition.
func ParsePayload(payload []byte) []int {
	var parts []int
	n, digits := 0, 0
	for i := 0; i <= len(payload); i++ {
		if i == len(payload) || payload[i] == ',' {
			if digits == 0 {
				return nil
			}
			parts = append(parts, n)
			n, digits = 0, 0
			continue
		}
		c := payload[i]
		if c < '0' || c > '9' || n >= maxWakePartition {
			return nil
		}
		n, digits = n*10+int(c-'0'), digits+1
	}
	return parts
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
func (m multi) NotifyInTx(ctx context.Context, ex Execer, parts []int) error {
	for _, n := range m {
		if tn, ok := n.(TxNotifier); ok {
			if err := tn.NotifyInTx(ctx, ex, parts); err != nil {
				return err
			}
		}
	}
	return nil
}

func (m multi) Notify(parts []int) {
	for _, n := range m {
		n.Notify(parts)
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
// delivers a NOTIFY only if, and when, the transaction commits), with the
// same partitions Notify gets. An error fails the flush: the transaction is
// rolled back. Notify is still called after the commit, so a TxNotifier can
// also wake in-process listeners.
type TxNotifier interface {
	Notifier
	NotifyInTx(ctx context.Context, ex Execer, parts []int) error
}

// LazySource is an optional extension of Source for lazy wakes.
type LazySource interface {
	ListenLazy(ctx context.Context) (<-chan struct{}, error)
}

// Local is an in-process, coalescing signal. Notify wakes every current
// listener; it never blocks. The zero value is ready to use.
type Local struct {
	mu       sync.Mutex
	subs     map[*Wakes]struct{}
	lazySubs map[*chan struct{}]struct{}
}

var (
	_ LazyNotifier = (*Local)(nil)
	_ Source       = (*Local)(nil)
	_ LazySource   = (*Local)(nil)
)

// NewLocal returns a new in-process signal.
func NewLocal() *Local { return &Local{} }

// Notify wakes all listeners for parts (nil: any partition). A listener
// that has not yet taken an earlier wake is not woken twice: the wakes
// merge.
func (l *Local) Notify(parts []int) {
	l.mu.Lock()
	for w := range l.subs {
		w.Wake(parts)
	}
	l.mu.Unlock()
}

// NotifyLazy wakes all lazy listeners.
func (l *Local) NotifyLazy() {
	l.mu.Lock()
	for c := range l.lazySubs {
		select {
		case *c <- struct{}{}:
		default:
		}
	}
	l.mu.Unlock()
}

// Listen delivers the Local's wakes into w until ctx ends. It starts no
// goroutine.
func (l *Local) Listen(ctx context.Context, w *Wakes) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	l.mu.Lock()
	if l.subs == nil {
		l.subs = make(map[*Wakes]struct{})
	}
	l.subs[w] = struct{}{}
	l.mu.Unlock()
	context.AfterFunc(ctx, func() {
		l.mu.Lock()
		delete(l.subs, w)
		l.mu.Unlock()
	})
	return nil
}

// ListenLazy registers a listener for lazy wakes until ctx ends. It starts
// no goroutine.
func (l *Local) ListenLazy(ctx context.Context) (<-chan struct{}, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c := make(chan struct{}, 1)
	l.mu.Lock()
	if l.lazySubs == nil {
		l.lazySubs = make(map[*chan struct{}]struct{})
	}
	l.lazySubs[&c] = struct{}{}
	l.mu.Unlock()
	context.AfterFunc(ctx, func() {
		l.mu.Lock()
		delete(l.lazySubs, &c)
		l.mu.Unlock()
	})
	return c, nil
}
