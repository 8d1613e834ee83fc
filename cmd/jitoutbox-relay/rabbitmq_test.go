package main

import (
	"os"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/jitoutbox/jitoutbox/internal/testnats"
	"github.com/jitoutbox/jitoutbox/relay/rabbitpub"
)

// TestRunRabbitMQDeadLetter runs the command against the RabbitMQ server of
// $JITOUTBOX_AMQP_URL (skipped when unset; a failure when set and
// unreachable): the good events reach the queue bound to "order.#" in
// order; the poison event (an aggregate type no queue is bound for, so the
// broker returns it as unroutable) is dead-lettered to the -dead-letter
// exchange with its headers.
func TestRunRabbitMQDeadLetter(t *testing.T) {
	url := os.Getenv(envAMQPURL)
	if url == "" {
		t.Skip(envAMQPURL + " is not set")
	}
	conn, err := amqp.DialConfig(url, amqp.Config{Dial: amqp.DefaultDial(5 * time.Second)})
	if err != nil {
		t.Fatalf("%s is set but RabbitMQ cannot be reached: %v", envAMQPURL, err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	exchange, deadExchange := testnats.RandomName("jitoutbox-relay-ev-"), testnats.RandomName("jitoutbox-relay-dead-")
	events := declareBound(t, ch, exchange, "order.#")
	dead := declareBound(t, ch, deadExchange, "#")

	dsn := sqliteOutbox(t)
	poison := &e2eEvent{aggType: "unrouted", aggID: "p", evType: "placed", payload: []byte("poison")}
	evs, good := goodAndPoison(6, poison)
	commitEvents(t, dsn, evs)
	r := startRun(t, "-dialect", "sqlite", "-dsn", dsn, "-broker", "rabbitmq", "-amqp", url,
		"-exchange", exchange, "-dead-letter", deadExchange, "-poll", "100ms")

	var got []string
	for _, d := range consumeN(t, ch, events, len(good), r) {
		got = append(got, header(d, rabbitpub.HeaderAggregateID)+"/"+string(d.Body))
	}
	checkGood(t, good, got)
	d := consumeN(t, ch, dead, 1, r)[0]
	if d.MessageId != poison.id || d.RoutingKey != "unrouted.placed" {
		t.Fatalf("dead letter %q with key %q, want the poison event %q with key unrouted.placed", d.MessageId, d.RoutingKey, poison.id)
	}
	checkDead(t, func(k string) string { return header(d, k) })
	if e := header(d, rabbitpub.HeaderDeadError); !strings.Contains(e, "unroutable") {
		t.Errorf("dead error %q, want it to say unroutable", e)
	}
	r.stop(t)
	if strings.Contains(r.log.String(), "guest:") || strings.Contains(r.log.String(), url) {
		t.Fatal("the log contains the AMQP URL")
	}
}

// declareBound declares exchange (topic) and a queue bound to it with key,
// deleted at cleanup, and returns the queue's name.
func declareBound(t *testing.T, ch *amqp.Channel, exchange, key string) string {
	t.Helper()
	if err := ch.ExchangeDeclare(exchange, amqp.ExchangeTopic, false, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	q, err := ch.QueueDeclare(exchange+"-q", false, false, false, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := ch.QueueBind(q.Name, key, exchange, false, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = ch.QueueDelete(q.Name, false, false, false)
		_ = ch.ExchangeDelete(exchange, false, false)
	})
	return q.Name
}

// consumeN reads n messages of queue, failing after 20s.
func consumeN(t *testing.T, ch *amqp.Channel, queue string, n int, r *cmdRun) []amqp.Delivery {
	t.Helper()
	tag := queue + "-consumer"
	msgs, err := ch.Consume(queue, tag, true, false, false, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ch.Cancel(tag, false) }()
	var out []amqp.Delivery
	timeout := time.After(20 * time.Second)
	for len(out) < n {
		select {
		case d := <-msgs:
			out = append(out, d)
		case <-timeout:
			t.Fatalf("%s: got %d of %d messages\n%s", queue, len(out), n, r.log.String())
		}
	}
	return out
}

func header(d amqp.Delivery, k string) string {
	s, _ := d.Headers[k].(string)
	return s
}
