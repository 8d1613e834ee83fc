package natspub_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jitoutbox/jitoutbox/relay"
	"github.com/jitoutbox/jitoutbox/relay/natspub"
)

// startServer starts an embedded nats-server with JetStream for the example.
func startServer() (*server.Server, func()) {
	dir, err := os.MkdirTemp("", "natspub-example")
	if err != nil {
		log.Fatal(err)
	}
	s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: server.RANDOM_PORT,
		JetStream: true, StoreDir: dir, NoLog: true, NoSigs: true})
	if err != nil {
		log.Fatal(err)
	}
	s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		log.Fatal("nats-server not ready")
	}
	return s, func() { s.Shutdown(); s.WaitForShutdown(); _ = os.RemoveAll(dir) }
}

// A JetStream publisher: the stream must store the subjects the router
// produces ("outbox.>" with the default router).
func ExampleNewJetStream() {
	srv, stop := startServer()
	defer stop()
	nc, err := nats.Connect(srv.ClientURL())
	if err != nil {
		log.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncTimeout(10*time.Second))
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "OUTBOX", Subjects: []string{"outbox.>"}}); err != nil {
		log.Fatal(err)
	}

	pub, err := natspub.NewJetStream(js, natspub.WithExpectStream("OUTBOX"))
	if err != nil {
		log.Fatal(err)
	}
	batch := []relay.Message{
		{ID: "0190f5d2-0000-7000-8000-000000000001", AggregateType: "order", AggregateID: "42", EventType: "order.paid", Payload: []byte(`{"total":10}`)},
		{ID: "0190f5d2-0000-7000-8000-000000000002", AggregateType: "user", AggregateID: "7", EventType: "registered"},
	}
	errs := make([]error, len(batch))
	pub.Publish(ctx, batch, errs)
	fmt.Println("errors:", errs)

	// Publishing again is harmless: JetStream drops the duplicates (Nats-Msg-Id).
	pub.Publish(ctx, batch, errs)
	info, err := js.Stream(ctx, "OUTBOX")
	if err != nil {
		log.Fatal(err)
	}
	msg, err := info.GetMsg(ctx, 1)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("messages:", info.CachedInfo().State.Msgs)
	fmt.Println("first:", msg.Subject, msg.Header.Get(natspub.HeaderEventID))
	// Output:
	// errors: [<nil> <nil>]
	// messages: 2
	// first: outbox.order.order.paid 0190f5d2-0000-7000-8000-000000000001
}

// A core NATS publisher is at-most-once: only subscribers connected at
// publish time receive the event.
func ExampleNewCore() {
	srv, stop := startServer()
	defer stop()
	nc, err := nats.Connect(srv.ClientURL())
	if err != nil {
		log.Fatal(err)
	}
	defer nc.Close()
	sub, err := nc.SubscribeSync("outbox.>")
	if err != nil {
		log.Fatal(err)
	}
	pub, err := natspub.NewCore(nc)
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	batch := []relay.Message{{ID: "0190f5d2-0000-7000-8000-000000000003", AggregateType: "order", AggregateID: "42", EventType: "shipped"}}
	errs := make([]error, len(batch))
	pub.Publish(ctx, batch, errs)
	msg, err := sub.NextMsgWithContext(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(errs[0], msg.Subject, natspub.EventID(msg))
	// Output:
	// <nil> outbox.order.shipped 0190f5d2-0000-7000-8000-000000000003
}
