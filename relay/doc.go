// Package relay delivers committed outbox events to a broker: it publishes
// pending rows of the partitions it owns through a Publisher, marks them,
// retries failures with backoff, dead-letters poison events, keeps the
// events of each aggregate in order, and deletes old published rows.
//
// # Partitions and ownership
//
// Every outbox row belongs to a partition (dialects.PartitionOf of its
// aggregate, among the table's fixed count, 64 by default): all events of
// one aggregate are in one partition. A relay opens an ownership session
// (dialects.Session) and owns a share of the partitions: of n live relays,
// each owns P/n (the first P%n one more). Only the owner publishes a
// partition, so relays never contend for rows, and order per aggregate
// needs no lock: the owner reads a partition's pending rows in Seq order
// with a plain SELECT and marks what the broker acknowledged. Marks and
// failures are fenced by the session's token: a relay that lost a partition
// changes nothing in it.
//
// On PostgreSQL and MariaDB/MySQL ownership is a session lock (advisory
// lock, GET_LOCK) on a connection of the relay's own: it lasts while that
// connection lives, costs nothing while idle, and ends the moment a killed
// relay's connection closes; each relay watches another's session (a ring;
// a relay alone, its own) and takes a departed relay's partitions at once,
// and a relay that joins interrupts those waits, so the others release its
// share at once. On SQLite ownership is a lease (Config.LeaseDuration) that
// the relay renews on its ownership goroutine, never behind a slow batch,
// and stops publishing before it can expire; each relay looks four
// times a second at the database file and reads the live relays after
// another wrote, to see one join or leave. Relays also rebalance every
// Config.RebalanceInterval: a relay with fewer than its share takes free
// partitions (looking again after 25ms, then twice as long each time up to
// every 250ms, until it has them), a relay with more releases its surplus,
// once its batch in flight is marked, only when another relay wants them.
//
// # Cycles
//
// The publish loop runs a cycle at once on a hand-over or a wake from
// Config.Sources (after the critical read below), within Config.LazyDelay of a lazy wake (an ordinary
// commit), when a retry comes due, when the relay takes partitions, after
// Config.PollInterval without any other cycle, and again at once while
// batches come back full. Wakes arriving during a cycle cause at most one
// further cycle.
//
// Beside the publish loop, a hand-over lane publishes the rows that
// time-critical transactions of this process hand over at commit
// (txoutbox.WithRelay: rows of partitions the relay owns, with no earlier
// event of their aggregate pending), with no read at all, so that a
// time-critical event never waits behind a batch of ordinary ones. On a
// wake from Config.Sources (a time-critical commit in another process) and
// when a hand-over asks for a read, the hand-over lane first runs a
// critical read (dialects.Dialect.ReadCritical: the owned partitions'
// time-critical rows with no earlier pending row and no block of their
// aggregate) and publishes what it returns the same way, then wakes the
// publish loop when the read held rows back (or the wake named no
// partitions), so that a time-critical event of another process does not
// wait behind a backlog the loop is draining either; one behind an earlier
// pending event of its own aggregate waits for it. The lanes leave each
// other's aggregates in flight alone. Each batch is published in
// waves: wave k holds the k-th event of each aggregate in the batch, so a
// Publisher never sees two events of one aggregate in one call. When an
// event fails, the later events of its aggregate wait.
//
// Marks are off the publish path: what the broker acknowledged is
// remembered at once (neither lane publishes it again) and marked by a
// goroutine of the run, one statement for all the batches that queued
// meanwhile, while the lanes go on publishing: a backlog's next batch,
// read while the previous one was in the broker's hands, is published
// while that one is marked. A partition is released only once what was
// published of it is marked.
//
// # Failures
//
// A retryable error records an attempt and schedules the next one after
// Config.Backoff; a permanent error (IsPermanent) or the last of
// Config.MaxAttempts attempts moves the row to the dead state, publishes it to
// Config.DeadLetter if set, and reports it to a DeadLetterHook. A failed
// event blocks its aggregate (only that aggregate: the rest of its partition
// flows): until its next attempt for a retry; for a dead event until an
// operator requeues it (it is then published first) or skips it, unless
// Config.ReleaseOnDead lets the later events flow at once.
//
// A row the read could not decode (Record.Bad, a dialects.RowError: headers
// that are not a JSON object of strings, a time that does not parse, ...)
// is dead-lettered at once, without a publish attempt, with a last error
// naming the column and the problem ("bad row: column headers: ..."); its
// aggregate is blocked as behind any dead event, DeadLetter and the
// DeadLetterHook see it with the fields that could be decoded, and the
// other rows of the batch flow.
//
// A publisher reports a broker that cannot take messages now (not
// connected, connection refused or lost, no stream leader, an
// acknowledgement that never came) with an error for which IsUnavailable
// reports true. Such an error never spends an attempt: the event stays
// pending. A wave in which nothing was acknowledged and every message
// failed that way is a broker outage, whatever its size: the unpublished
// rows of the batch stay pending, no retry is scheduled, the hand-over lane
// leaves its rows to the read lane, and the read lane probes the broker
// again after a back-off of 100ms doubling up to 1s (or PollInterval, if
// smaller), so that every pending row goes within about a second of the
// broker's return. The relay logs the outage once when it starts (with the
// error) and once when it ends (with its length and the number of probes);
// BatchEndInfo.Outage reports it. In a wave that is not an outage, the
// unavailable messages stay pending without an attempt and are tried again
// within that second, while the others' errors count. A lone plain timeout
// (context.DeadlineExceeded, not marked unavailable, from a publisher that
// does not classify its errors) counts as an outage only if the broker has
// acknowledged nothing within two publish timeouts, so that an event the
// broker never answers is still dead-lettered. When the dead-letter
// publisher is unavailable, the event stays pending (not dead) until it is
// back. Database errors back off the same way (up to PollInterval) and are
// logged at most once a minute.
//
// # Stopping
//
// When Run's context ends, the batches in flight are finished: their
// Publish calls run to their end (bounded by Config.PublishTimeout: the
// broker may already hold the messages), and the events the broker
// confirmed are marked, on a short context of their own; then the session
// ends and its partitions are free at once for the other relays, which so
// publish none of them again. Run
// returns only after every goroutine it started has ended; all state of a
// run lives in that run, so a relay may Run again.
//
// # Observing
//
// Stats combines the table's backlog with the relay's counters and commit-to-
// ack latency percentiles, split by time-critical and ordinary events. Hooks
// (with the optional PublishedHook and DeadLetterHook) let metrics and tracing
// packages observe batches without this package importing them.
package relay
