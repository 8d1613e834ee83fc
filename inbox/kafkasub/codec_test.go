package kafkasub_test

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/jitoutbox/jitoutbox/codec"
	"github.com/jitoutbox/jitoutbox/inbox"
	"github.com/jitoutbox/jitoutbox/inbox/internal/inboxtest"
	"github.com/jitoutbox/jitoutbox/inbox/kafkasub"
	"github.com/jitoutbox/jitoutbox/relay/cloudevents"
	"github.com/jitoutbox/jitoutbox/relay/kafkapub"
)

// TestEncryptedEndToEnd: events encrypted by txoutbox (SQLite), one before
// and one after a key rotation, are published by the relay to an
// in-process Kafka cluster as ciphertext (jitoutbox headers, CloudEvents
// binary and structured mode), decoded by the consumer with both keys and
// applied once; a consumer that lacks the new key gets
// codec.ErrUnknownKey for the newer event (inboxtest.Encrypted.Check). In
// binary mode the codec's headers travel beside the ce_ attributes.
func TestEncryptedEndToEnd(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "plain.order", "cebinary.order", "cestructured.order"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	seeds := c.ListenAddrs()
	for _, tc := range []struct {
		name   string
		prefix string
		opts   []kafkapub.Option
	}{
		{"jitoutbox", "plain", nil},
		{"cloudevents binary", "cebinary", []kafkapub.Option{kafkapub.CloudEvents("/orders", cloudevents.Binary)}},
		{"cloudevents structured", "cestructured", []kafkapub.Option{kafkapub.CloudEvents("/orders", cloudevents.Structured)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			pub, err := kafkapub.Open(seeds, append(tc.opts, kafkapub.WithTopicPrefix(tc.prefix))...)
			if err != nil {
				t.Fatal(err)
			}
			defer pub.Close()
			sent := inboxtest.PublishEncrypted(ctx, t, pub)

			cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.ConsumeTopics(tc.prefix+".order"),
				kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Close()
			var got []*kgo.Record
			for len(got) < 2 {
				fs := cl.PollFetches(ctx)
				if err := ctx.Err(); err != nil {
					t.Fatal(err)
				}
				fs.EachRecord(func(r *kgo.Record) { got = append(got, r) })
			}
			for i, r := range got {
				if v := kafkapub.Header(r, codec.HeaderEncoding); v != sent.Encodings[i] {
					t.Fatalf("message %d: %s header %q, want %q", i, codec.HeaderEncoding, v, sent.Encodings[i])
				}
				if tc.name == "cloudevents binary" && kafkapub.Header(r, cloudevents.PrefixKafka+cloudevents.AttrID) != sent.IDs[i] {
					t.Fatalf("message %d: headers %v, want the ce_ attributes", i, r.Headers)
				}
			}
			sent.Check(t, func(i int) []byte { return got[i].Value }, func(i int) inbox.Message { return kafkasub.Record(got[i]) })
		})
	}
}
