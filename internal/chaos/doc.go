// Package chaos holds jitoutbox's chaos harness, a test that tries hard to
// break the outbox promise: every committed event reaches the broker, no
// event of a rolled-back transaction does, events of one aggregate arrive
// in registration order, and the broker holds each event once (JetStream,
// which drops a re-published event by its Nats-Msg-Id) or a bounded number
// of times (RabbitMQ and Kafka, which cannot tell a re-published event).
//
// Producers in several goroutines commit transactions (a business row and
// 1..N events) across many aggregates, rolling some back on purpose and
// marking some time-critical, while 2-3 jitoutbox-relay processes (built from
// cmd/jitoutbox-relay, each owning a share of the table's partitions) are
// killed with SIGKILL at random moments and restarted, leave cleanly with
// SIGTERM and are replaced (partition churn: partitions are released, taken
// by the others, and handed out again to the newcomer), their database
// connections are cut (pg_terminate_backend on PostgreSQL, KILL on
// MariaDB: the ownership session dies with its connection), and the broker
// has outages. A consumer records every delivery; at the end the test
// checks the promise and prints a summary, with the failover time of every
// SIGKILL: for the partitions the killed relays owned, the longest wait of
// an event committed around the kill.
//
// The broker sits behind a small interface (broker_test.go), and each
// scenario is one test:
//
//   - TestChaos: one embedded NATS server with JetStream, stopped and
//     started; PostgreSQL and MariaDB.
//   - TestChaosJetStreamR3: a three-node JetStream cluster with an R3
//     stream; the stream's leader or a follower is killed as a crash would
//     and restarted. No duplicates, every replica equal, and no start-up
//     durability warning from the relays. PostgreSQL.
//   - TestChaosRabbitMQ: a quorum queue on the shared RabbitMQ server
//     (JITOUTBOX_AMQP_URL), reached through a TCP proxy the test owns,
//     which the outages cut, refuse or stall. PostgreSQL.
//   - TestChaosKafka: an in-process kfake cluster behind a TCP proxy (its
//     listener advertises the proxy's address, so the relay processes and
//     the consumer go through it). MariaDB.
//   - TestChaosDBRestart: a PostgreSQL and a MariaDB server of the test's
//     own (internal/dbinstance), stopped with a fast shutdown or a SIGKILL
//     and started again; producers retry, relays recover without a
//     restart, and the summary reports the delivery stall after each
//     restart.
//   - TestChaosPartitionChurn: relays join and leave for good while others
//     are SIGKILLed; the summary reports the failover distribution per
//     database.
//   - TestChaosBacklog: a backlog of one aggregate waits when the relays
//     start; time-critical commits of others arrive while it drains, and
//     no broker outage may spend a publish attempt.
//   - TestChaosTenants: many outbox tables, one relay fleet: 20 tenants (a
//     schema each on PostgreSQL, a database each on MariaDB, 8 partitions
//     each), served by relays running -config with one source whose
//     pattern finds the tables; a tenant is created mid-run. Order is kept
//     per aggregate of each tenant, and the summary has a line per tenant.
//
// The default runs are bounded (TestChaos about 45 s per database,
// TestChaosTenants 50 to 70 s, the others about 20 s; the package about 7
// minutes under -race on two cores). Size them with flags after -args:
//
//	go test ./internal/chaos/ -run TestChaos -v -args -chaos.events 20000 -chaos.kills 8
//	go test ./internal/chaos/ -run 'TestChaos$' -v -timeout 60m -args -chaos.long
//	go test ./internal/chaos/ -run TestChaosKafka -v -timeout 60m -args -chaos.long
//
// -chaos.long makes TestChaos 225,000 events (over 200,000 committed), 24
// relay kills, 12 clean leaves, 12 connection cuts and 3 broker restarts
// per database, and every other scenario 100,000 events over 4 minutes
// with its own fault counts (scenarios_test.go, backlog_test.go,
// tenants_test.go; TestChaosTenants with 50 tenants, -chaos.tenants sets
// another count): one long run per broker and scenario (the broker
// scenarios on one database each, the restarts, the churn and the tenants
// on both). The
// shared databases come from JITOUTBOX_POSTGRES_DSN and JITOUTBOX_MYSQL_DSN
// (a database whose variable is unset is skipped, one that is set but
// unreachable fails); every broker or database the test stops is one it
// owns, so the shared servers are never stopped. Under -race the relays
// are built with -race too. The package has no exported API.
package chaos
