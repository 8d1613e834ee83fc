package natssub_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jitoutbox/jitoutbox/inbox"
	"github.com/jitoutbox/jitoutbox/inbox/internal/inboxtest"
	"github.com/jitoutbox/jitoutbox/inbox/natssub"
	"github.com/jitoutbox/jitoutbox/internal/testnats"
	"github.com/jitoutbox/jitoutbox/relay/cloudevents"
	"github.com/jitoutbox/jitoutbox/relay/natspub"
)

// TestEncryptedEndToEnd: events encrypted by txoutbox (SQLite), one before
// and one after a key rotation, are published by the relay to JetStream
// as ciphertext (plain headers and CloudEvents structured mode), decoded
// by the consumer with both keys and applied once; a consumer that lacks
// the new key gets codec.ErrUnknownKey for the newer event
// (inboxtest.Encrypted.Check).
func TestEncryptedEndToEnd(t *testing.T) {
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
			stream, prefix := testnats.Stream(t, js)
			pub, err := natspub.NewJetStream(js, append(c.opts, natspub.WithSubjectPrefix(prefix))...)
			if err != nil {
				t.Fatal(err)
			}
			sent := inboxtest.PublishEncrypted(ctx, t, pub)

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
			sent.Check(t, func(i int) []byte { return got[i].Data() }, func(i int) inbox.Message { return natssub.JetStream(got[i]) })
		})
	}
}
