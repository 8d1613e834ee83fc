package kafkapub_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/jitoutbox/jitoutbox/relay"
	"github.com/jitoutbox/jitoutbox/relay/kafkapub"
)

// TestPublishBatchHeadersAndOrder publishes several batches (one event per
// aggregate in each, as the relay does) and checks that every record
// arrives with its key, value and headers, and that the events of each
// aggregate arrive in order, in one partition.
func TestPublishBatchHeadersAndOrder(t *testing.T) {
	eachTarget(t, func(t *testing.T, tg target) {
		ctx := ctxTimeout(t, 60*time.Second)
		cl := newClient(t, tg.seeds)
		prefix := randomName("kafkapub-test-")
		createTopic(t, ctx, cl, prefix+".order", 4, nil)
		pub, err := kafkapub.New(cl, kafkapub.WithTopicPrefix(prefix))
		if err != nil {
			t.Fatal(err)
		}
		const rounds, aggregates = 5, 10
		want := map[string]relay.Message{}
		for r := range rounds {
			batch := testMessages("order", aggregates)
			for i := range batch {
				batch[i].Payload = fmt.Appendf(nil, "%d", r)
				want[batch[i].ID] = batch[i]
			}
			mustPublish(t, ctx, pub, batch)
		}
		recs := consume(t, ctx, tg.seeds, rounds*aggregates, prefix+".order")
		next := map[string]int{}
		partition := map[string]int32{}
		for _, rec := range recs {
			id := kafkapub.EventID(rec)
			m, ok := want[id]
			if !ok {
				t.Fatalf("unexpected record with event id %q", id)
			}
			delete(want, id)
			key := string(rec.Key)
			if key != m.AggregateID || !bytes.Equal(rec.Value, m.Payload) {
				t.Errorf("%s: key %q value %q, want %q %q", id, key, rec.Value, m.AggregateID, m.Payload)
			}
			if got, want := string(rec.Value), fmt.Sprint(next[key]); got != want {
				t.Errorf("aggregate %s: step %s, want %s (order)", key, got, want)
			}
			next[key]++
			if p, seen := partition[key]; seen && p != rec.Partition {
				t.Errorf("aggregate %s in partitions %d and %d", key, p, rec.Partition)
			}
			partition[key] = rec.Partition
			checkHeaders(t, rec, m)
		}
		if len(want) != 0 {
			t.Errorf("%d events missing", len(want))
		}
	})
}

// checkHeaders asserts that rec carries m's headers.
func checkHeaders(t *testing.T, rec *kgo.Record, m relay.Message) {
	t.Helper()
	want := map[string]string{
		kafkapub.HeaderEventID:       m.ID,
		kafkapub.HeaderEventType:     m.EventType,
		kafkapub.HeaderAggregateType: m.AggregateType,
		kafkapub.HeaderAggregateID:   m.AggregateID,
		kafkapub.HeaderCreatedAt:     m.CreatedAt.UTC().Format(time.RFC3339Nano),
		kafkapub.HeaderContentType:   m.ContentType,
		"X-Trace":                    m.Headers["X-Trace"],
	}
	if m.IdempotencyKey != "" {
		want[kafkapub.HeaderIdempotencyKey] = m.IdempotencyKey
	}
	if len(rec.Headers) != len(want) {
		t.Errorf("%s: %d headers, want %d: %v", m.ID, len(rec.Headers), len(want), rec.Headers)
	}
	for k, v := range want {
		if got := kafkapub.Header(rec, k); got != v {
			t.Errorf("%s: header %s = %q, want %q", m.ID, k, got, v)
		}
	}
}

// TestPerRecordErrors: a record too large for the client, one too large
// for the topic and one with an invalid topic fail permanently, while the
// others of the batch are delivered.
func TestPerRecordErrors(t *testing.T) {
	eachTarget(t, func(t *testing.T, tg target) {
		ctx := ctxTimeout(t, 60*time.Second)
		cl := newClient(t, tg.seeds, kgo.ProducerBatchMaxBytes(64<<10))
		prefix := randomName("kafkapub-test-")
		createTopic(t, ctx, cl, prefix+".order", 2, nil)
		createTopic(t, ctx, cl, prefix+".small", 1, map[string]string{"max.message.bytes": "2000"})
		router := func(m relay.Message) (string, error) {
			if m.AggregateType == "bad" {
				return "no spaces allowed", nil
			}
			return prefix + "." + m.AggregateType, nil
		}
		pub, err := kafkapub.New(cl, kafkapub.WithRouter(router))
		if err != nil {
			t.Fatal(err)
		}
		batch := testMessages("order", 6)
		batch[1].Payload = bytes.Repeat([]byte("x"), 100<<10) // over the client's 64 KiB batch limit
		batch[3].AggregateType = "small"
		batch[3].Payload = make([]byte, 8000) // over the topic's max.message.bytes, even compressed
		_, _ = rand.Read(batch[3].Payload)
		batch[4].AggregateType = "bad"
		errs := publish(ctx, pub, batch)
		for i, err := range errs {
			switch i {
			case 1, 3:
				if !relay.IsPermanent(err) || !errors.Is(err, kerr.MessageTooLarge) {
					t.Errorf("message %d: err = %v, want permanent kerr.MessageTooLarge", i, err)
				}
			case 4:
				if !relay.IsPermanent(err) || !errors.Is(err, kafkapub.ErrInvalidTopic) {
					t.Errorf("message %d: err = %v, want permanent ErrInvalidTopic", i, err)
				}
			default:
				if err != nil {
					t.Errorf("message %d: %v", i, err)
				}
			}
		}
		got := map[string]bool{}
		for _, rec := range consume(t, ctx, tg.seeds, 3, prefix+".order") {
			got[kafkapub.EventID(rec)] = true
		}
		for _, i := range []int{0, 2, 5} {
			if !got[batch[i].ID] {
				t.Errorf("message %d not consumed", i)
			}
		}
	})
}

// TestUnknownTopic: without automatic topic creation, a topic that does not
// exist is a permanent error; with it, the topic is created.
func TestUnknownTopic(t *testing.T) {
	ctx := ctxTimeout(t, 60*time.Second)
	c := newFake(t)
	cl := newClient(t, c.ListenAddrs(), kgo.UnknownTopicRetries(1))
	pub, err := kafkapub.New(cl, kafkapub.WithTopicPrefix("missing"))
	if err != nil {
		t.Fatal(err)
	}
	batch := testMessages("order", 2)
	for i, err := range publish(ctx, pub, batch) {
		if !relay.IsPermanent(err) || !errors.Is(err, kerr.UnknownTopicOrPartition) {
			t.Errorf("message %d: err = %v, want permanent kerr.UnknownTopicOrPartition", i, err)
		}
	}

	auto := newFake(t, kfake.AllowAutoTopicCreation())
	acl := newClient(t, auto.ListenAddrs(), kgo.AllowAutoTopicCreation())
	apub, err := kafkapub.New(acl)
	if err != nil {
		t.Fatal(err)
	}
	mustPublish(t, ctx, apub, batch)
	if n := len(consume(t, ctx, auto.ListenAddrs(), 2, "outbox.order")); n != 2 {
		t.Errorf("consumed %d records", n)
	}
}

// TestDeadHeaders: a message handed to the dead-letter publisher carries
// the error text, attempts and time.
func TestDeadHeaders(t *testing.T) {
	eachTarget(t, func(t *testing.T, tg target) {
		ctx := ctxTimeout(t, 60*time.Second)
		cl := newClient(t, tg.seeds)
		dlq := randomName("kafkapub-dlq-")
		createTopic(t, ctx, cl, dlq, 1, nil)
		pub, err := kafkapub.New(cl, kafkapub.WithRouter(func(relay.Message) (string, error) { return dlq, nil }))
		if err != nil {
			t.Fatal(err)
		}
		batch := testMessages("order", 2)
		at := time.Date(2026, 11, 23, 8, 0, 0, 5, time.FixedZone("CET", 3600))
		batch[0].Dead = &relay.DeadInfo{Error: "natspub: message too large", Attempts: 7, At: at}
		mustPublish(t, ctx, pub, batch)
		recs := consume(t, ctx, tg.seeds, 2, dlq)
		for _, rec := range recs {
			dead := kafkapub.EventID(rec) == batch[0].ID
			want := map[string]string{kafkapub.HeaderDeadError: "", kafkapub.HeaderDeadAttempts: "", kafkapub.HeaderDeadAt: ""}
			if dead {
				want = map[string]string{kafkapub.HeaderDeadError: "natspub: message too large",
					kafkapub.HeaderDeadAttempts: "7", kafkapub.HeaderDeadAt: "2026-11-23T07:00:00.000000005Z"}
			}
			for k, v := range want {
				if got := kafkapub.Header(rec, k); got != v {
					t.Errorf("%s (dead %v): header %s = %q, want %q", kafkapub.EventID(rec), dead, k, got, v)
				}
			}
		}
	})
}

// TestHeaderClash: a user header named like one of jitoutbox's (ignoring
// case) is dropped; jitoutbox's value wins.
func TestHeaderClash(t *testing.T) {
	ctx := ctxTimeout(t, 30*time.Second)
	c := newFake(t)
	cl := newClient(t, c.ListenAddrs())
	createTopic(t, ctx, cl, "outbox.event.order", 1, nil)
	pub, err := kafkapub.New(cl, kafkapub.Debezium())
	if err != nil {
		t.Fatal(err)
	}
	batch := testMessages("order", 1)
	batch[0].Headers = map[string]string{"content-type": "text/evil", "ID": "spoofed", "eventtype": "x", "A": "1", "B": "2"}
	mustPublish(t, ctx, pub, batch)
	rec := consume(t, ctx, c.ListenAddrs(), 1, "outbox.event.order")[0]
	var keys []string
	for _, h := range rec.Headers {
		keys = append(keys, h.Key)
		if strings.EqualFold(h.Key, "content-type") && string(h.Value) != "application/json" ||
			strings.EqualFold(h.Key, "id") && string(h.Value) != batch[0].ID {
			t.Errorf("header %s = %q", h.Key, h.Value)
		}
	}
	if got := strings.Join(keys, ","); !strings.HasPrefix(got, "A,B,id,eventType,") {
		t.Errorf("header order %s", got)
	}
}

// TestContextCancel: a broker that never answers leaves Publish waiting
// only until ctx ends; every record then gets ctx's error, retryable.
func TestContextCancel(t *testing.T) {
	c := newFake(t)
	cl := newClient(t, c.ListenAddrs(), kgo.AllowAutoTopicCreation())
	createTopic(t, ctxTimeout(t, 10*time.Second), cl, "outbox.order", 1, nil)
	c.ControlKey(int16(kmsg.Produce), func(kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		return nil, nil, true // never answer
	})
	pub, err := kafkapub.New(cl)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	start := time.Now()
	errs := publish(ctx, pub, testMessages("order", 3))
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Publish returned after %v", d)
	}
	for i, err := range errs {
		if !errors.Is(err, context.DeadlineExceeded) || relay.IsPermanent(err) || errors.Is(err, kafkapub.ErrAckTimeout) {
			t.Errorf("message %d: err = %v, want ctx's retryable DeadlineExceeded", i, err)
		}
	}
	cctx, ccancel := context.WithCancel(context.Background())
	ccancel()
	for i, err := range publish(cctx, pub, testMessages("order", 2)) {
		if !errors.Is(err, context.Canceled) {
			t.Errorf("canceled ctx, message %d: err = %v", i, err)
		}
	}
}

// TestSharedBatchFailure: the broker fails a whole produce batch for one
// record too large for the topic; the good records of that batch are
// produced again on their own and succeed, only the large one is permanent.
func TestSharedBatchFailure(t *testing.T) {
	eachTarget(t, func(t *testing.T, tg target) {
		ctx := ctxTimeout(t, 60*time.Second)
		// Linger so that the batch's records share one produce batch.
		cl := newClient(t, tg.seeds, kgo.ProducerLinger(200*time.Millisecond))
		prefix := randomName("kafkapub-test-")
		createTopic(t, ctx, cl, prefix+".order", 1, map[string]string{"max.message.bytes": "2000"})
		pub, err := kafkapub.New(cl, kafkapub.WithTopicPrefix(prefix))
		if err != nil {
			t.Fatal(err)
		}
		batch := testMessages("order", 5)
		batch[2].Payload = make([]byte, 8000)
		_, _ = rand.Read(batch[2].Payload)
		for i, err := range publish(ctx, pub, batch) {
			if i == 2 {
				if !relay.IsPermanent(err) || !errors.Is(err, kerr.MessageTooLarge) {
					t.Errorf("message 2: err = %v, want permanent kerr.MessageTooLarge", err)
				}
			} else if err != nil {
				t.Errorf("message %d: %v", i, err)
			}
		}
		if n := len(consume(t, ctx, tg.seeds, 4, prefix+".order")); n != 4 {
			t.Errorf("consumed %d records, want 4", n)
		}
	})
}
