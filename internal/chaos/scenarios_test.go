package chaos

import (
	"testing"
	"time"
)

// brokerBounded is the bounded size of the scenarios beside TestChaos:
// 3,000 events over 15 s, so that the whole package stays within about 5
// minutes under -race on two cores; more broker outages, as the broker is
// what they exercise.
func brokerBounded() size {
	s := bounded()
	s.events, s.duration = 3000, 15*time.Second
	s.kills, s.churns, s.cuts, s.restarts = 3, 1, 2, 3
	return s
}

// brokerLong is their -chaos.long size: 100,000 events over 4 minutes.
func brokerLong() size {
	s := long()
	s.events, s.duration = 100_000, 4*time.Minute
	s.kills, s.churns, s.cuts, s.restarts = 16, 6, 8, 12
	return s
}

// scenarioSize returns the size of a scenario from its bounded and long
// sizes and the flags, with the seed drawn when none was given.
func scenarioSize(t *testing.T, b, l size) size {
	t.Helper()
	s := sizeFor(b, l)
	if err := s.validate(); err != nil {
		t.Fatal(err)
	}
	if s.seed == 0 {
		s.seed = time.Now().UnixNano()
	}
	return s
}

// TestChaosRabbitMQ is the harness with the relays publishing to RabbitMQ
// (a quorum queue on the shared server, reached through a TCP proxy that
// the broker outages cut, refuse or stall), on PostgreSQL (TestChaosKafka
// covers MariaDB with a broker that does not deduplicate).
func TestChaosRabbitMQ(t *testing.T) {
	s := scenarioSize(t, brokerBounded(), brokerLong())
	t.Run("postgres", func(t *testing.T) { runChaos(t, s, newRabbitMQ, postgresTarget) })
}

// TestChaosKafka is the harness with the relays publishing to Kafka (an
// in-process kfake cluster behind a TCP proxy that the broker outages cut,
// refuse or stall), on MariaDB (TestChaosRabbitMQ covers PostgreSQL).
func TestChaosKafka(t *testing.T) {
	s := scenarioSize(t, brokerBounded(), brokerLong())
	t.Run("mariadb", func(t *testing.T) { runChaos(t, s, newKafka, mysqlTarget) })
}

// TestChaosJetStreamR3 is the harness on a three-node JetStream cluster
// with an R3 stream: the broker outages kill the stream's leader or a
// follower as a crash would and restart it. The same figures as TestChaos
// hold (no duplicates: the duplicate window is replicated), and the
// relays' start-up durability check accepts the stream without a warning.
// On PostgreSQL: the broker is what the scenario exercises.
func TestChaosJetStreamR3(t *testing.T) {
	s := scenarioSize(t, brokerBounded(), brokerLong())
	t.Run("postgres", func(t *testing.T) { runChaos(t, s, newJSCluster, postgresTarget) })
}

// dbBounded is TestChaosDBRestart's bounded size: four restarts (two fast
// shutdowns, two SIGKILLs) beside the usual relay faults, no broker
// outage.
func dbBounded() size {
	s := brokerBounded()
	s.kills, s.churns, s.cuts, s.restarts, s.dbRestarts = 2, 1, 1, 0, 4
	return s
}

// dbLong is its -chaos.long size: 100,000 events over 4 minutes, 12
// restarts.
func dbLong() size {
	s := brokerLong()
	s.kills, s.churns, s.cuts, s.restarts, s.dbRestarts = 8, 4, 4, 1, 12
	return s
}

// TestChaosDBRestart is the harness on a PostgreSQL and a MariaDB server
// of the run's own (internal/dbinstance), stopped mid-run alternately with
// a fast shutdown and a SIGKILL and started again: producers see errors
// and retry (a Commit whose outcome is unknown is resolved at the end by
// its business row), relays recover without a restart, nothing committed
// is lost and nothing uncommitted is published. The summary reports the
// delivery stall after each restart. The broker is one embedded JetStream
// server.
func TestChaosDBRestart(t *testing.T) {
	s := scenarioSize(t, dbBounded(), dbLong())
	t.Run("postgres", func(t *testing.T) { runChaos(t, s, newJetStream, postgresInstance) })
	t.Run("mariadb", func(t *testing.T) { runChaos(t, s, newJetStream, mysqlInstance) })
}

// churnBounded is TestChaosPartitionChurn's bounded size: six membership
// changes (joins and leaves for good, each with a SIGKILL of another
// relay) beside the usual faults, and a 2 s rebalance so that every change
// moves partitions within the run.
func churnBounded() size {
	s := brokerBounded()
	s.kills, s.churns, s.cuts, s.restarts, s.members = 2, 1, 1, 0, 6
	s.rebalance = 2 * time.Second
	return s
}

// churnLong is its -chaos.long size: 100,000 events over 4 minutes, 24
// membership changes.
func churnLong() size {
	s := brokerLong()
	s.kills, s.churns, s.cuts, s.restarts, s.members = 8, 4, 4, 1, 24
	s.rebalance = 2 * time.Second
	return s
}

// TestChaosPartitionChurn is the harness with a fleet whose size changes:
// relays join and leave for good (between 2 and relays+2 of them) while
// others are SIGKILLed, on PostgreSQL and MariaDB (where ownership is a
// session lock). Same assertions as TestChaos; the summary reports the
// failover time distribution of each kind of kill, per database.
func TestChaosPartitionChurn(t *testing.T) {
	s := scenarioSize(t, churnBounded(), churnLong())
	t.Run("postgres", func(t *testing.T) { runChaos(t, s, newJetStream, postgresTarget) })
	t.Run("mariadb", func(t *testing.T) { runChaos(t, s, newJetStream, mysqlTarget) })
}
