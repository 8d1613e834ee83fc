// Package outboxtest helps users test code that writes to a jitoutbox outbox,
// without sleeping.
//
// A Recorder is a relay.Publisher that keeps every message it accepts and can
// be told to fail chosen events, permanently or a number of times. Start runs
// a relay with a Recorder for the life of a test; h.Outbox returns an Outbox
// wired to that relay with txoutbox.WithRelay (or pass h.Relay to
// txoutbox.WithRelay yourself), so that commits reach the relay at once.
// WaitPublished and WaitDrained block until given events, or everything
// committed so far, have been published, waking on the Recorder's and the
// relay's signals rather than on timers:
//
//	h := outboxtest.Start(t, db, dialect, outboxtest.Options{})
//	ob := h.Outbox() // txoutbox.New(db, dialect, txoutbox.WithRelay(h.Relay))
//	// ... code under test commits events through ob ...
//	msgs := h.WaitPublished(ctx, id)
//
// A dead event (failed permanently, or past MaxAttempts) blocks the later
// events of its aggregate until it is requeued or skipped
// (Dialect.Requeue, Dialect.Skip). WaitDrained therefore means "nothing
// pending could still be published": it does not wait for events held
// behind a dead one, and it does wait for events backing off after a
// retryable failure.
//
// Every wait fails the test (t.Fatalf) when its context ends first; a context
// without a deadline gets DefaultTimeout. Like t.Fatalf, the waits must be
// called from the test's goroutine.
package outboxtest
