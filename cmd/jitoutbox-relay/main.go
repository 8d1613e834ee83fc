// Command jitoutbox-relay runs a jitoutbox relay as its own process: it
// owns a share of the outbox's partitions in PostgreSQL, MySQL/MariaDB or
// SQLite (rebalancing them with the other relays) and publishes their
// committed rows to NATS (JetStream or core), RabbitMQ or Kafka, woken at
// once by a cross-process wake (PostgreSQL LISTEN/NOTIFY or a NATS subject)
// and polling as a safety net.
//
//	jitoutbox-relay -dialect postgres -wake pg -stream OUTBOX -dead-letter outbox_dead.events
//	jitoutbox-relay -broker rabbitmq -amqp "$JITOUTBOX_AMQP_URL" -exchange outbox -dead-letter outbox.dead
//	jitoutbox-relay -broker kafka -kafka kafka1:9092,kafka2:9092 -debezium -dead-letter outbox.dead
//
// Flags (run with -h for the full list):
//
//	-config FILE                     YAML: settings (flags by name) and sources, many databases and
//	                                 tables served as one relay.Fleet (see below)
//	-dialect postgres|mysql|sqlite   database (default postgres)
//	-dsn DSN                         default $JITOUTBOX_POSTGRES_DSN, $JITOUTBOX_MYSQL_DSN or $JITOUTBOX_SQLITE_DSN by dialect
//	-broker nats|rabbitmq|kafka      where events go (default nats)
//	-nats URL                        default $JITOUTBOX_NATS_URL or nats://127.0.0.1:4222 (also for -wake nats)
//	-publisher jetstream|core        NATS (default jetstream)
//	-subject-prefix P                NATS: events go to P.<aggregate_type>.<event_type> (default outbox)
//	-stream NAME                     NATS: create the stream for "P.>" (and -dead-letter) if missing; never changed if it exists
//	-amqp URL                        RabbitMQ (default $JITOUTBOX_AMQP_URL)
//	-exchange NAME                   RabbitMQ: exchange for routing keys <aggregate_type>.<event_type> (required)
//	-kafka HOST:PORT,...             Kafka seed brokers (default $JITOUTBOX_KAFKA_BROKERS)
//	-topic-prefix P                  Kafka: events go to P.<aggregate_type> (default outbox)
//	-kafka-auto-create               Kafka: let the brokers create missing topics
//	-debezium                        NATS and Kafka: Debezium outbox event router shape (outbox.event.<aggregate_type>, headers id, eventType)
//	-cloudevents-source URI          publish every event as a CloudEvents 1.0 event with this source (any broker)
//	-cloudevents-mode binary|structured
//	                                 with -cloudevents-source: attributes in headers (default) or the JSON envelope
//	-dead-letter DEST                also publish dead-lettered events, with Jitoutbox-Dead-Error/-Attempts/-At headers,
//	                                 to this subject (nats), exchange (rabbitmq) or topic (kafka)
//	-release-on-dead                 let an aggregate's later events pass a dead one (default: it waits for requeue or skip)
//	-wake pg|nats|none               cross-process wake (default pg for postgres, else nats with -broker nats, else none)
//	-wake-channel / -wake-subject    where the committing side sends its wakes
//	-lease, -publish-timeout         SQLite ownership lease (default 60s), bound on one publish (10s)
//	-rebalance                       how often partitions are rebalanced among relays (default 30s)
//	-batch, -poll, -table, -migrate, -delete-on-publish, -owner, -log-level, -log-format
//	-metrics-addr ADDR               serve /metrics, /healthz and /readyz (default: not served)
//	-metrics-token T                 bearer token /metrics requires (default: none)
//
// With -metrics-addr the relay serves, from its start:
//
//	/metrics  Prometheus text: jitotel's instruments (otel/), the series the
//	          alert rules and dashboard in deploy/ query
//	/healthz  200 while the process runs (a liveness probe)
//	/readyz   200 when the database answers with the schema at this
//	          version, the relay has a live session on the table (it owns
//	          partitions or takes part in the rebalance), and the broker is
//	          connected; else 503 and the failing checks, one a line
//
// The endpoints only read and print no secret, so a non-loopback address
// needs no token (Prometheus and the kubelet reach it from other hosts);
// -metrics-token guards /metrics with a bearer token, the probes stay open.
//
// With -config FILE, one process serves many outbox tables (a schema per
// tenant, shards) of one or more databases:
//
//	settings:                 # optional: flags by name; the command line wins over them,
//	  broker: nats            # they win over the environment
//	sources:
//	  - name: main                        # required, unique
//	    dialect: postgres                 # postgres | mysql | sqlite
//	    dsn_file: /run/secrets/main-dsn   # or dsn:
//	    tables: [public.outbox]           # -migrate creates these
//	    patterns: ["tenant_*.outbox"]     # found again while running
//	    subject_prefix: tenants.main      # topic_prefix: (Kafka), exchange: (RabbitMQ)
//
// The file is decoded strictly: an unknown key, or a bad source, exits with
// status 2 naming the line, the source and the field. With sources, -dsn,
// -dsn-file, -dialect and -table are refused; with -metrics-addr the
// series carry source and table labels (jitotel.FleetMetrics), and
// /readyz requires every source's database, the broker and one table
// served, listing the tables that cannot be served without failing for
// them.
//
// Every flag can also be set by an environment variable, named in -h:
// JITOUTBOX_ and the flag's name in capitals with '_' for '-'
// (JITOUTBOX_DSN, JITOUTBOX_METRICS_ADDR), except -nats, -amqp and -kafka,
// which keep JITOUTBOX_NATS_URL, JITOUTBOX_AMQP_URL and
// JITOUTBOX_KAFKA_BROKERS. A flag on the command line wins over its
// variable. The secrets (-dsn, -nats, -amqp, -metrics-token) can be read
// from files instead, as Kubernetes mounts a Secret: -dsn-file and the
// others (or their variables, JITOUTBOX_DSN_FILE ...), the file's trailing
// newline trimmed.
//
// A bad flag or combination exits with status 2 and names the flag. No
// secret (the DSN, the broker URLs, the token, and the passwords they
// carry, even in a DSN that does not parse) is in any log line or error:
// every line goes through a redacting handler. SIGINT or
// SIGTERM stops the relay cleanly: the batch in flight is finished and
// marked, and its partitions are free at once for the other relays.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
	case errors.Is(err, errUsage):
		if err != errUsage { // flag has already printed its own errors
			fmt.Fprintln(os.Stderr, "jitoutbox-relay:", err)
		}
		os.Exit(2)
	default:
		fmt.Fprintln(os.Stderr, "jitoutbox-relay:", err)
		os.Exit(1)
	}
}
