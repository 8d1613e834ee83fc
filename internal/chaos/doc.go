// Package chaos holds jitoutbox's chaos harness, a test that tries hard to
// break the outbox promise: every committed event reaches JetStream, no event
// of a rolled-back transaction does, events of one aggregate arrive in
// registration order, and the stream holds each event once.
//
// Producers in several goroutines commit transactions (a business row and
// 1..N events) across many aggregates, rolling some back on purpose and
// marking some time-critical, while 2-3 jitoutbox-relay processes (built from
// cmd/jitoutbox-relay, each owning a share of the table's partitions) are
// killed with SIGKILL at random moments and restarted, leave cleanly with
// SIGTERM and are replaced (partition churn: partitions are released, taken
// by the others, and handed out again to the newcomer), their database
// connections are cut (pg_terminate_backend on PostgreSQL, KILL on
// MariaDB: the ownership session dies with its connection), and a NATS
// server the test owns is stopped and started. An ordered JetStream
// consumer records every delivery; at the end the test checks the promise
// and prints a summary, with the failover time of every SIGKILL: for the
// partitions the killed relays owned, the longest wait of an event
// committed around the kill.
//
// The default run is bounded (about a minute per database). Size it with
// flags after -args:
//
//	go test ./internal/chaos/ -run TestChaos -v -args -chaos.events 20000 -chaos.kills 8
//	go test ./internal/chaos/ -run TestChaos -v -timeout 60m -args -chaos.long
//
// -chaos.long is 225,000 events (over 200,000 committed), 24 relay kills, 12
// clean leaves, 12 connection cuts and 3 broker restarts per database. The databases come
// from JITOUTBOX_POSTGRES_DSN and JITOUTBOX_MYSQL_DSN (a database whose
// variable is unset is skipped, one that is set but unreachable fails); the
// NATS server is always an embedded one the test owns, so the shared server
// is never stopped. Under -race the relays are built with -race too. The
// package has no exported API.
package chaos
