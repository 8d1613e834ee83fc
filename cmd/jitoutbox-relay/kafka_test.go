package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/jitoutbox/jitoutbox/relay/kafkapub"
)

// TestRunKafkaDeadLetter runs the command with -debezium against an
// in-process Kafka cluster (kfake): the good events reach
// outbox.event.order keyed by aggregate id with Debezium's id header, in
// order per aggregate; the poison event (an aggregate type too long for a
// topic name) is dead-lettered to the -dead-letter topic with its headers.
func TestRunKafkaDeadLetter(t *testing.T) {
	const deadTopic = "outbox.dead"
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "outbox.event.order", deadTopic))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	seeds := strings.Join(c.ListenAddrs(), ",")

	dsn := sqliteOutbox(t)
	poison := &e2eEvent{aggType: strings.Repeat("p", 240), aggID: "p", evType: "placed", payload: []byte("poison")}
	evs, good := goodAndPoison(6, poison)
	commitEvents(t, dsn, evs)
	r := startRun(t, "-dialect", "sqlite", "-dsn", dsn, "-broker", "kafka", "-kafka", seeds, "-debezium",
		"-dead-letter", deadTopic, "-poll", "100ms")

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var got []string
	ids := map[string]bool{}
	for _, rec := range consumeTopic(t, ctx, c.ListenAddrs(), "outbox.event.order", len(good), r) {
		if string(rec.Key) != kafkapub.Header(rec, kafkapub.HeaderAggregateID) {
			t.Fatalf("record key %q, want the aggregate id", rec.Key)
		}
		ids[kafkapub.Header(rec, kafkapub.DebeziumHeaderID)] = true
		got = append(got, string(rec.Key)+"/"+string(rec.Value))
	}
	checkGood(t, good, got)
	for _, ev := range good {
		if !ids[ev.id] {
			t.Fatalf("no record with Debezium header id %q", ev.id)
		}
	}
	rec := consumeTopic(t, ctx, c.ListenAddrs(), deadTopic, 1, r)[0]
	if id := kafkapub.EventID(rec); id != poison.id || string(rec.Key) != "p" {
		t.Fatalf("dead letter of event %q key %q, want the poison event %q key p", id, rec.Key, poison.id)
	}
	checkDead(t, func(k string) string { return kafkapub.Header(rec, k) })
	r.stop(t)
}

// consumeTopic reads n records of topic from its start.
func consumeTopic(t *testing.T, ctx context.Context, seeds []string, topic string, n int, r *cmdRun) []*kgo.Record {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var out []*kgo.Record
	for len(out) < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("%s: got %d of %d records: %v\n%s", topic, len(out), n, ctx.Err(), r.log.String())
		}
		out = append(out, fs.Records()...)
	}
	return out
}

// TestRunKafkaCloudEvents runs the command with -cloudevents-source: every
// record on the default topic carries the CloudEvents binary-mode headers
// of the Kafka binding (ce_id the event id, ce_source the flag's value,
// ce_type the event type, ce_subject the aggregate id), in order per
// aggregate.
func TestRunKafkaCloudEvents(t *testing.T) {
	const source = "https://orders.example.com/relay"
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, kafkapub.DefaultTopicPrefix+".order"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	dsn := sqliteOutbox(t)
	_, good := goodAndPoison(6, nil)
	commitEvents(t, dsn, good)
	r := startRun(t, "-dialect", "sqlite", "-dsn", dsn, "-broker", "kafka", "-kafka", strings.Join(c.ListenAddrs(), ","),
		"-cloudevents-source", source, "-poll", "100ms")

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	byID := map[string]*e2eEvent{}
	for _, ev := range good {
		byID[ev.id] = ev
	}
	var got []string
	for _, rec := range consumeTopic(t, ctx, c.ListenAddrs(), kafkapub.DefaultTopicPrefix+".order", len(good), r) {
		h := func(k string) string { return kafkapub.Header(rec, k) }
		ev := byID[h("ce_id")]
		if ev == nil {
			t.Fatalf("record with ce_id %q, not an event committed", h("ce_id"))
		}
		if h("ce_source") != source || h("ce_specversion") != "1.0" || h("ce_type") != ev.evType || h("ce_subject") != ev.aggID {
			t.Fatalf("record headers %v, want the CloudEvents attributes of event %s (source %s)", rec.Headers, ev.id, source)
		}
		got = append(got, string(rec.Key)+"/"+string(rec.Value))
	}
	checkGood(t, good, got)
	r.stop(t)
}
