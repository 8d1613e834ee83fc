package outboxtest

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/jitoutbox/jitoutbox/relay"
)

// ErrInjected is the cause of every failure a Recorder was told to produce.
// Permanent failures also match relay.ErrPermanent.
var ErrInjected = errors.New("outboxtest: injected publish failure")

// Recorder is a relay.Publisher that records the messages it accepts. It can
// fail chosen events permanently (the relay dead-letters them) or a number of
// times (the relay retries them). It is safe for concurrent use; the zero
// value is not usable, use NewRecorder.
type Recorder struct {
	mu       sync.Mutex
	msgs     []relay.Message
	byID     map[string]int // index into msgs of the first accepted copy
	attempts map[string]int
	failures []failedAttempt
	perm     map[string]bool
	retry    map[string]int // remaining retryable failures; < 0: forever
	changed  chan struct{}  // closed and replaced on every Publish call
}

// failedAttempt is one injected failure.
type failedAttempt struct {
	id        string
	permanent bool
}

var _ relay.Publisher = (*Recorder)(nil)

// NewRecorder returns an empty Recorder that accepts every message.
func NewRecorder() *Recorder {
	return &Recorder{
		byID:     map[string]int{},
		attempts: map[string]int{},
		perm:     map[string]bool{},
		retry:    map[string]int{},
		changed:  make(chan struct{}),
	}
}

// FailPermanently makes every attempt to publish the given event ids fail
// with an error for which relay.IsPermanent reports true: the relay
// dead-letters them.
func (r *Recorder) FailPermanently(ids ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, id := range ids {
		r.perm[id] = true
	}
}

// FailRetryably makes the next n attempts to publish each of the given event
// ids fail with a retryable error (n < 0: every attempt); after that they are
// accepted. The relay retries them with its Backoff.
func (r *Recorder) FailRetryably(n int, ids ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, id := range ids {
		if n == 0 {
			delete(r.retry, id)
		} else {
			r.retry[id] = n
		}
	}
}

// Heal removes every failure set up for ids (all ids when none are given).
func (r *Recorder) Heal(ids ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(ids) == 0 {
		clear(r.perm)
		clear(r.retry)
		return
	}
	for _, id := range ids {
		delete(r.perm, id)
		delete(r.retry, id)
	}
}

// Publish implements relay.Publisher: it records every message that is not
// set up to fail and signals waiters.
func (r *Recorder) Publish(ctx context.Context, batch []relay.Message, errs []error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	defer r.signal()
	if err := ctx.Err(); err != nil {
		for i := range errs {
			errs[i] = err
		}
		return
	}
	for i, m := range batch {
		r.attempts[m.ID]++
		if r.perm[m.ID] {
			errs[i] = relay.Permanent(fmt.Errorf("event %s: %w", m.ID, ErrInjected))
			r.failures = append(r.failures, failedAttempt{id: m.ID, permanent: true})
			continue
		}
		if n, ok := r.retry[m.ID]; ok {
			if n > 0 {
				if n == 1 {
					delete(r.retry, m.ID)
				} else {
					r.retry[m.ID] = n - 1
				}
			}
			errs[i] = fmt.Errorf("event %s: %w", m.ID, ErrInjected)
			r.failures = append(r.failures, failedAttempt{id: m.ID})
			continue
		}
		m.Payload = append([]byte(nil), m.Payload...)
		if _, seen := r.byID[m.ID]; !seen {
			r.byID[m.ID] = len(r.msgs)
		}
		r.msgs = append(r.msgs, m)
	}
}

// signal wakes everyone waiting on Changed. r.mu must be held.
func (r *Recorder) signal() {
	close(r.changed)
	r.changed = make(chan struct{})
}

// Changed returns a channel that is closed at the next Publish call (whether
// it accepts or fails messages). Take it before checking a condition, then
// wait on it, so that no change is missed.
func (r *Recorder) Changed() <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.changed
}

// Messages returns a copy of the accepted messages in the order they were
// accepted. A message the broker accepted twice (a redelivery after a lost
// acknowledgement) appears twice.
func (r *Recorder) Messages() []relay.Message {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]relay.Message(nil), r.msgs...)
}

// Message returns the first accepted message with the event id.
func (r *Recorder) Message(id string) (relay.Message, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	i, ok := r.byID[id]
	if !ok {
		return relay.Message{}, false
	}
	return r.msgs[i], true
}

// IDs returns the event ids of the accepted messages, in order, without
// duplicates.
func (r *Recorder) IDs() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, 0, len(r.byID))
	seen := make(map[string]bool, len(r.byID))
	for _, m := range r.msgs {
		if !seen[m.ID] {
			seen[m.ID] = true
			out = append(out, m.ID)
		}
	}
	return out
}

// Attempts returns how many times the event id was handed to Publish,
// accepted or not.
func (r *Recorder) Attempts(id string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.attempts[id]
}

// Failures returns how many injected failures Publish has returned, and how
// many of them were permanent.
func (r *Recorder) Failures() (total, permanent int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, f := range r.failures {
		if f.permanent {
			permanent++
		}
	}
	return len(r.failures), permanent
}

// Reset forgets every recorded message, attempt and failure (failures set
// up with FailPermanently and FailRetryably stay).
func (r *Recorder) Reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs = nil
	clear(r.byID)
	clear(r.attempts)
	r.failures = nil
	r.signal()
}

// missing returns the ids not yet accepted, or nil.
func (r *Recorder) missing(ids []string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, id := range ids {
		if _, ok := r.byID[id]; !ok {
			out = append(out, id)
		}
	}
	return out
}
