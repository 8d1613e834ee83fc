package natssub_test

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jitoutbox/jitoutbox/codec"
	"github.com/jitoutbox/jitoutbox/inbox"
	"github.com/jitoutbox/jitoutbox/inbox/internal/inboxtest"
	"github.com/jitoutbox/jitoutbox/inbox/natssub"
	"github.com/jitoutbox/jitoutbox/internal/testdb"
	"github.com/jitoutbox/jitoutbox/internal/testnats"
	"github.com/jitoutbox/jitoutbox/relay"
	"github.com/jitoutbox/jitoutbox/relay/cloudevents"
	"github.com/jitoutbox/jitoutbox/relay/natspub"
	"github.com/jitoutbox/jitoutbox/txoutbox"
)

// TestEncryptedEndToEnd: events encrypted by txoutbox (SQLite), one before
// and one after a key rotation, are published by the relay to JetStream
// as ciphertext (plain headers and CloudEvents structured mode), decoded
// by the consumer with both keys and applied once; a consumer that lacks
// the new key gets codec.ErrUnknownKey for the newer event.
func TestEncryptedEndToEnd(t *testing.T) {
	oldKey, newKey := bytes.Repeat([]byte{1}, codec.KeySize), bytes.Repeat([]byte{2}, codec.KeySize)
	keys := func(current string, ids ...string) *codec.Codec {
		m := map[string][]byte{}
		for _, id := range append(ids, current) {
			m[id] = map[string][]byte{"old": oldKey, "new": newKey}[id]
		}
		k, err := codec.NewKeys(current, m)
		if err != nil {
			t.Fatal(err)
		}
		c, err := codec.New(codec.Config{Keys: k, CompressAbove: 512})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	nc := testnats.Connect(t, testnats.URL(t))
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		opts []natspub.Option
	}{
		{"jitoutbox headers", nil},
		{"cloudevents structured", []natspub.Option{natspub.CloudEvents("/orders", cloudevents.Structured)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			db, _ := testdb.SQLite(t)
			d := testdb.NewDialect(t, "sqlite")
			if err := d.Migrate(ctx, db); err != nil {
				t.Fatal(err)
			}
			stream, prefix := testnats.Stream(t, js)
			pub, err := natspub.NewJetStream(js, append(c.opts, natspub.WithSubjectPrefix(prefix))...)
			if err != nil {
				t.Fatal(err)
			}
			r, err := relay.New(db, d, pub, relay.Config{PollInterval: 50 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			rctx, stop := context.WithCancel(ctx)
			runErr := make(chan error, 1)
			go func() { runErr <- r.Run(rctx) }()
			defer func() {
				stop()
				if err := <-runErr; err != nil {
					t.Errorf("Run: %v", err)
				}
			}()

			lines := append(append([]byte("["), bytes.Repeat([]byte(`{"line":"4111"},`), 100)...), `{}]`...) // compressed too
			payloads := [][]byte{[]byte(`{"card":"4111 1111 1111 1111"}`), lines}
			var ids []string
			for i, w := range []*codec.Codec{keys("old"), keys("new", "old")} {
				ob, err := txoutbox.New(db, d, txoutbox.WithPayloadEncoder(w), txoutbox.WithRelay(r))
				if err != nil {
					t.Fatal(err)
				}
				tx, err := ob.Begin(ctx, nil, txoutbox.TimeCritical())
				if err != nil {
					t.Fatal(err)
				}
				id, err := tx.Add(txoutbox.Event{AggregateType: "order", AggregateID: "o-1", EventType: "order.paid", Payload: payloads[i]})
				if err != nil {
					t.Fatal(err)
				}
				if err := tx.Commit(); err != nil {
					t.Fatal(err)
				}
				ids = append(ids, id)
			}

			cons, err := stream.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{AckPolicy: jetstream.AckExplicitPolicy})
			if err != nil {
				t.Fatal(err)
			}
			var got []jetstream.Msg
			for len(got) < 2 {
				batch, err := cons.Fetch(2-len(got), jetstream.FetchMaxWait(5*time.Second))
				if err != nil {
					t.Fatal(err)
				}
				for m := range batch.Messages() {
					got = append(got, m)
					_ = m.Ack()
				}
				if err := batch.Error(); err != nil {
					t.Fatal(err)
				}
			}
			consumer := keys("new", "old")
			f := inboxtest.New(t)
			for i, m := range got {
				if bytes.Contains(m.Data(), []byte("4111")) {
					t.Fatalf("message %d reached the broker in clear", i)
				}
				raw := natssub.JetStream(m)
				if raw.EventID != ids[i] {
					t.Fatalf("message %d is event %s, want %s (order)", i, raw.EventID, ids[i])
				}
				if wantEnc := []string{"aes-256-gcm:old", "zstd,aes-256-gcm:new"}[i]; raw.Headers[codec.HeaderEncoding] != wantEnc {
					t.Fatalf("message %d: encoding %q, want %q", i, raw.Headers[codec.HeaderEncoding], wantEnc)
				}
				msg, err := raw.Decode(consumer)
				if err != nil {
					t.Fatalf("message %d: %v", i, err)
				}
				if !bytes.Equal(msg.Payload, payloads[i]) || msg.Headers[codec.HeaderContentType] != txoutbox.ContentTypeJSON {
					t.Fatalf("message %d decoded to %d bytes (want %d), headers %v", i, len(msg.Payload), len(payloads[i]), msg.Headers)
				}
				redelivered, err := natssub.JetStream(m).Decode(consumer)
				if err != nil {
					t.Fatal(err)
				}
				f.Once(t, msg, redelivered)
			}
			_, err = natssub.JetStream(got[1]).Decode(keys("old"))
			var de *codec.DecodeError
			if !errors.Is(err, codec.ErrUnknownKey) || !errors.As(err, &de) || de.KeyID != "new" || de.EventID != ids[1] {
				t.Fatalf("consumer without the new key: %v, want codec.ErrUnknownKey for key new", err)
			}
			if res, err := f.Handle(t, inbox.Message{}); err == nil || res != inbox.Failed {
				t.Fatal("an empty message was handled")
			}
		})
	}
}
