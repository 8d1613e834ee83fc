// Package outboxtest helps users test code that writes to a jitoutbox outbox,
// without sleeping.
//
// A Recorder is a relay.Publisher that keeps every message it accepts and can
// be told to fail chosen events, permanently or a number of times. Start runs
// a relay with a Recorder for the life of a test; WaitPublished and
// WaitDrained block until given events, or everything committed so far, have
// been published, waking on the Recorder's and the relay's signals rather
// than on timers:
//
//	h := outboxtest.Start(t, db, dialect, outboxtest.Options{})
//	ob, _ := txoutbox.New(db, dialect, txoutbox.WithNotifier(h.Notifier))
//	// ... code under test commits events through ob ...
//	msgs := h.WaitPublished(ctx, id)
//
// Every wait fails the test (t.Fatalf) when its context ends first; a context
// without a deadline gets DefaultTimeout. Like t.Fatalf, the waits must be
// called from the test's goroutine.
package outboxtest
