package kafkapub_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/jitoutbox/jitoutbox/relay"
	"github.com/jitoutbox/jitoutbox/relay/kafkapub"
)

// A publisher on a client the caller owns. The default router sends each
// aggregate type to its own topic, "outbox.<aggregate_type>"; the record's
// key is the aggregate id.
func ExampleNew() {
	// An in-process cluster stands in for Kafka.
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "outbox.order"))
	if err != nil {
		log.Fatal(err)
	}
	defer cluster.Close()
	cl, err := kgo.NewClient(kgo.SeedBrokers(cluster.ListenAddrs()...)) // idempotent, acks=all: the defaults
	if err != nil {
		log.Fatal(err)
	}
	defer cl.Close()

	pub, err := kafkapub.New(cl)
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	batch := []relay.Message{
		{ID: "0190f5d2-0000-7000-8000-000000000001", AggregateType: "order", AggregateID: "42", EventType: "order.paid", Payload: []byte(`{"total":10}`)},
		{ID: "0190f5d2-0000-7000-8000-000000000002", AggregateType: "order", AggregateID: "7", EventType: "order.placed", Payload: []byte(`{"total":3}`)},
	}
	errs := make([]error, len(batch))
	pub.Publish(ctx, batch, errs)
	fmt.Println("errors:", errs)

	consumer, err := kgo.NewClient(kgo.SeedBrokers(cluster.ListenAddrs()...),
		kgo.ConsumeTopics("outbox.order"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		log.Fatal(err)
	}
	defer consumer.Close()
	for seen := 0; seen < len(batch); {
		consumer.PollFetches(ctx).EachRecord(func(r *kgo.Record) {
			seen++
			fmt.Println(r.Topic, string(r.Key), kafkapub.Header(r, kafkapub.HeaderEventType), kafkapub.EventID(r), string(r.Value))
		})
	}
	// Output:
	// errors: [<nil> <nil>]
	// outbox.order 42 order.paid 0190f5d2-0000-7000-8000-000000000001 {"total":10}
	// outbox.order 7 order.placed 0190f5d2-0000-7000-8000-000000000002 {"total":3}
}

// With the Debezium option, records look like those of Debezium's outbox
// event router: topic "outbox.event.<aggregate_type>", the event id in
// header "id", the event type in header "eventType".
func ExampleDebezium() {
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "outbox.event.order"))
	if err != nil {
		log.Fatal(err)
	}
	defer cluster.Close()
	pub, err := kafkapub.Open(cluster.ListenAddrs(), kafkapub.Debezium())
	if err != nil {
		log.Fatal(err)
	}
	defer pub.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	batch := []relay.Message{{ID: "0190f5d2-0000-7000-8000-000000000003", AggregateType: "order", AggregateID: "42",
		EventType: "OrderShipped", Payload: []byte(`{"id":42}`)}}
	errs := make([]error, len(batch))
	pub.Publish(ctx, batch, errs)

	consumer, err := kgo.NewClient(kgo.SeedBrokers(cluster.ListenAddrs()...),
		kgo.ConsumeTopics("outbox.event.order"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		log.Fatal(err)
	}
	defer consumer.Close()
	var recs []*kgo.Record
	for len(recs) == 0 && ctx.Err() == nil {
		recs = consumer.PollFetches(ctx).Records()
	}
	r := recs[0]
	fmt.Println(errs[0], r.Topic, string(r.Key), kafkapub.Header(r, "id"), kafkapub.Header(r, "eventType"), string(r.Value))
	// Output:
	// <nil> outbox.event.order 42 0190f5d2-0000-7000-8000-000000000003 OrderShipped {"id":42}
}
