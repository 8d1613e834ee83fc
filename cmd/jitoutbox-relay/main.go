// Command jitoutbox-relay runs a jitoutbox relay as its own process: it
// claims committed outbox rows from PostgreSQL, MySQL/MariaDB or SQLite and
// publishes them to NATS JetStream (or core NATS), woken at once by a
// cross-process wake (PostgreSQL LISTEN/NOTIFY or a NATS subject) and polling
// as a safety net.
//
//	jitoutbox-relay -dialect postgres -wake pg -stream OUTBOX
//
// Flags (run with -h for the full list):
//
//	-dialect postgres|mysql|sqlite   database (default postgres)
//	-dsn DSN                         default $JITOUTBOX_POSTGRES_DSN or $JITOUTBOX_MYSQL_DSN by dialect
//	-nats URL                        default $JITOUTBOX_NATS_URL or nats://127.0.0.1:4222
//	-publisher jetstream|core        default jetstream
//	-subject-prefix P                events go to P.<aggregate_type>.<event_type> (default outbox)
//	-stream NAME                     create or update a stream for "P.>" at start
//	-wake pg|nats|none               cross-process wake (default pg for postgres, nats otherwise)
//	-wake-channel / -wake-subject    where the committing side sends its wakes
//	-lease, -publish-timeout         lease on claimed rows (default 30s), bound on one publish (10s)
//	-batch, -poll, -table, -migrate, -delete-on-publish, -log-level, -log-format
//
// The DSN is never logged. SIGINT or SIGTERM stops the relay cleanly: the
// batch in flight is finished or released, so another relay can take it at
// once.
package main

import (
	"context"
	"errors"
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
	case err == nil:
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
