package main

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/relay"
)

// readyChecks returns what /readyz requires of a running relay:
//
//   - database: the database answers and the outbox schema is at this
//     version with the dialect's partition count (the query the relay runs
//     before it starts, dialects.Dialect.Partitions);
//   - session: the relay has a live session on the table (it is among the
//     live relays of dialects.Inspector.Ownership), so it owns its share of
//     the partitions or takes part in the rebalance that hands them out. A
//     relay with no partition, beside others that own them all, is ready:
//     it is the stand-by that takes them over;
//   - broker: the broker events go to is connected (NATS: the connection's
//     state; RabbitMQ: a connection can be opened and authenticated; Kafka:
//     a broker answers a ping).
//
// The wake sources are not required: without them the relay still polls.
func readyChecks(db *sql.DB, d dialects.Dialect, r *relay.Relay, broker check) []check {
	checks := []check{{name: "database", fn: func(ctx context.Context) error {
		_, err := d.Partitions(ctx, db)
		return err
	}}}
	if insp, ok := d.(dialects.Inspector); ok {
		checks = append(checks, check{name: "session", fn: func(ctx context.Context) error {
			own, err := insp.Ownership(ctx, db, time.Now())
			if err != nil {
				return err
			}
			if !slices.ContainsFunc(own.Relays, func(s dialects.RelaySession) bool { return s.Name == r.Owner() }) {
				return fmt.Errorf("relay %s has no live session on the table yet (%d live relays)", r.Owner(), len(own.Relays))
			}
			return nil
		}})
	}
	return append(checks, broker)
}

// natsReady reports whether the NATS connection is up.
func natsReady(nc natsConn) check {
	return check{name: "broker", fn: func(context.Context) error {
		if !nc.IsConnected() {
			return fmt.Errorf("NATS connection %s", nc.Status())
		}
		return nil
	}}
}

// rabbitReady opens, and closes, a connection to the RabbitMQ URL: the
// publisher connects only when it publishes, so its own connection says
// nothing of the broker's state while the outbox is idle.
func rabbitReady(url string) check {
	return check{name: "broker", fn: func(ctx context.Context) error {
		timeout := checkTimeout
		if dl, ok := ctx.Deadline(); ok {
			timeout = time.Until(dl)
		}
		conn, err := amqp.DialConfig(url, amqp.Config{Dial: amqp.DefaultDial(timeout),
			Properties: amqp.Table{"connection_name": "jitoutbox-relay readiness"}})
		if err != nil {
			return fmt.Errorf("RabbitMQ: %w", err)
		}
		return conn.Close()
	}}
}

// pinger is the Kafka client's Ping.
type pinger interface{ Ping(context.Context) error }

// kafkaReady pings a Kafka broker.
func kafkaReady(cl pinger) check {
	return check{name: "broker", fn: func(ctx context.Context) error {
		if err := cl.Ping(ctx); err != nil {
			return fmt.Errorf("Kafka: %w", err)
		}
		return nil
	}}
}
