// Package e2e holds jitoutbox's end-to-end tests with real OS processes: the
// test process commits through txoutbox, and a jitoutbox-relay process
// (cmd/jitoutbox-relay, built once per test binary) relays to JetStream,
// woken across the process boundary by PostgreSQL LISTEN/NOTIFY or a NATS
// subject. The tests run against the servers named by JITOUTBOX_POSTGRES_DSN,
// JITOUTBOX_MYSQL_DSN and JITOUTBOX_NATS_URL and skip (saying so) without
// them. Helpers to build and drive the relay process are in relayproc.
//
// TestUpgradeWithPreviousRelease also builds the previous release (the
// commit in previousRelease, from this repository's history, with the
// writer program in testdata/oldrelease) and runs its relays and writers
// beside this tree's on a table this tree's Migrate migrated under them:
// the check that a migration keeps the previous release working.
package e2e
