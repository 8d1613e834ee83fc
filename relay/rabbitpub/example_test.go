package rabbitpub_test

import (
	"context"
	"database/sql"
	"fmt"
	"log"
	"os"
	"os/signal"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/jitoutbox/jitoutbox/dialects/sqlite"
	"github.com/jitoutbox/jitoutbox/relay"
	"github.com/jitoutbox/jitoutbox/relay/rabbitpub"
)

// A publisher on a topic exchange, used directly. It needs a RabbitMQ
// server, so the example is compiled but not run. The exchange and a bound
// queue must exist: the publisher declares nothing.
func ExampleNew() {
	url := os.Getenv("JITOUTBOX_AMQP_URL") // e.g. amqp://guest:guest@127.0.0.1:5672/
	pub, err := rabbitpub.New(url, rabbitpub.WithExchange("outbox"))
	if err != nil {
		log.Fatal(err)
	}
	defer pub.Close()

	batch := []relay.Message{
		{ID: "0190f5d2-0000-7000-8000-000000000001", AggregateType: "order", AggregateID: "42",
			EventType: "order.paid", Payload: []byte(`{"total":10}`), ContentType: "application/json"},
	}
	errs := make([]error, len(batch))
	pub.Publish(context.Background(), batch, errs)
	// nil once confirmed; a permanent error wrapping ErrUnroutable when no
	// queue is bound for the routing key "order.order.paid".
	fmt.Println(errs[0])
}

// A relay publishing to the "outbox" exchange, dead-lettering to the
// "outbox.dead" exchange: the dead letters carry the Jitoutbox-Dead-*
// headers.
func ExampleNew_relay() {
	url := os.Getenv("JITOUTBOX_AMQP_URL")
	db, err := sql.Open("sqlite", "file:outbox.db?_pragma=busy_timeout(10000)&_txlock=immediate")
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	dialect, err := sqlite.New()
	if err != nil {
		log.Fatal(err)
	}
	pub, err := rabbitpub.New(url, rabbitpub.WithExchange("outbox"))
	if err != nil {
		log.Fatal(err)
	}
	defer pub.Close()
	dead, err := rabbitpub.New(url, rabbitpub.WithExchange("outbox.dead"))
	if err != nil {
		log.Fatal(err)
	}
	defer dead.Close()
	r, err := relay.New(db, dialect, pub, relay.Config{DeadLetter: dead})
	if err != nil {
		log.Fatal(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := r.Run(ctx); err != nil {
		log.Fatal(err)
	}
}

// A consumer reads the event id to process each event once.
func ExampleEventID() {
	var d amqp.Delivery // from a Channel.Consume
	d.Headers = amqp.Table{rabbitpub.HeaderEventID: "0190f5d2-0000-7000-8000-000000000001"}
	fmt.Println(rabbitpub.EventID(&d))
	// Output: 0190f5d2-0000-7000-8000-000000000001
}
