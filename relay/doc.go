// Package relay delivers committed outbox events to a broker: it claims
// unpublished rows in batches (safely, with any number of relays in any
// number of processes), publishes them through a Publisher, marks them, retries
// failures with backoff, dead-letters poison events, keeps the events of each
// aggregate in order, and deletes old published rows.
//
// # Cycles
//
// Run loops over cycles. A cycle runs at start, at once on a wake from any
// Config.Sources, within Config.LazyDelay of a lazy wake (an ordinary
// commit), when a retry comes due, after Config.PollInterval without any
// other cycle, and again at once while claimed batches come back full. Wakes
// arriving during a cycle cause at most one further cycle.
//
// A cycle first publishes the rows that time-critical transactions wrote
// already leased to this relay and handed over at commit (sources
// implementing notify.LeaseSource, such as notify.Local; the relay registers
// with one at start and releases what it did not take when it stops), then
// takes the ids of other just-committed time-critical events from sources
// implementing notify.IDSource and claims exactly those rows (the fast path),
// then claims by scanning. Each claimed batch is published in
// waves: wave k holds the k-th event of each aggregate in the batch, so a
// Publisher never sees two events of one aggregate in one call. When an event
// fails, the later events of its aggregate in the batch are released without
// counting an attempt. All successes of a batch are marked in one statement.
//
// With Config.Prefetch, while a backlog drains (a scan claim came back full),
// the relay claims the next batch while it publishes the current one, so
// that the database and the broker work at the same time. That
// speculative claim examines a bounded window of rows
// (dialects.ClaimRequest.Window) because it must hold back every aggregate
// of the batch in flight; when it comes back empty, the relay claims again
// once the batch is marked. Order per aggregate is the claim's rule either
// way.
//
// # Failures
//
// A retryable error records an attempt and schedules the next one after
// Config.Backoff; a permanent error (IsPermanent) or the last of
// Config.MaxAttempts attempts moves the row to the dead state, publishes it to
// Config.DeadLetter if set, and reports it to a DeadLetterHook. Dead rows do
// not hold back their aggregate's later events.
//
// A wave in which every message failed with a retryable error is treated as
// a broker outage when it held two or more messages, every error was a
// timeout, or the relay is already in an outage: then nothing is counted as
// an attempt, all unpublished rows of the batch are released, and the relay
// backs off exponentially (100ms doubling up to PollInterval) before its next
// claim, logging once when the outage starts and once when it ends. Database
// errors back off the same way and are logged at most once a minute.
//
// # Stopping
//
// When Run's context ends, the batch in flight is finished: events the broker
// confirmed are marked and the rest (and a batch claimed ahead) released at
// once, on a short context of their own, so that another relay can take them
// immediately. Run returns
// only after every goroutine it started has ended.
//
// # Observing
//
// Stats combines the table's backlog with the relay's counters and commit-to-
// ack latency percentiles, split by time-critical and ordinary events. Hooks
// (with the optional PublishedHook and DeadLetterHook) let metrics and tracing
// packages observe batches without this package importing them.
package relay
