package inboxtest

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jitoutbox/jitoutbox/codec"
	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/inbox"
	"github.com/jitoutbox/jitoutbox/internal/testdb"
	"github.com/jitoutbox/jitoutbox/outboxtest"
	"github.com/jitoutbox/jitoutbox/relay"
	"github.com/jitoutbox/jitoutbox/txoutbox"
)

// Codec returns a codec that encrypts with the key named current and also
// decrypts with the keys named ids. The names are "old" and "new", each
// with a fixed key of its own. It compresses payloads above 512 bytes.
func Codec(t testing.TB, current string, ids ...string) *codec.Codec {
	t.Helper()
	all := map[string][]byte{"old": bytes.Repeat([]byte{1}, codec.KeySize), "new": bytes.Repeat([]byte{2}, codec.KeySize)}
	m := map[string][]byte{}
	for _, id := range append(ids, current) {
		m[id] = all[id]
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

// Encrypted is what PublishEncrypted sent: two events of aggregate
// "order" "o-1", type "order.paid", whose JSON payloads hold the text
// "4111". The first is encrypted under key "old"; the second, written after
// a key rotation, is compressed and encrypted under key "new".
type Encrypted struct {
	// IDs are the event ids, in publish order.
	IDs []string
	// Payloads are the payloads as the writer gave them.
	Payloads [][]byte
	// Encodings are the Jitoutbox-Encoding values the events carry.
	Encodings []string
}

// PublishEncrypted writes the two events of Encrypted with txoutbox on a
// new SQLite outbox, runs a relay that publishes them through pub, and
// returns once the outbox is drained and both rows are published. pub is
// not closed.
func PublishEncrypted(ctx context.Context, t testing.TB, pub relay.Publisher) Encrypted {
	t.Helper()
	db, _ := testdb.SQLite(t)
	d := testdb.NewDialect(t, "sqlite")
	if err := d.Migrate(ctx, db); err != nil {
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
	e := Encrypted{
		Payloads:  [][]byte{[]byte(`{"card":"4111 1111 1111 1111"}`), lines},
		Encodings: []string{"aes-256-gcm:old", "zstd,aes-256-gcm:new"},
	}
	for i, w := range []*codec.Codec{Codec(t, "old"), Codec(t, "new", "old")} {
		ob, err := txoutbox.New(db, d, txoutbox.WithPayloadEncoder(w), txoutbox.WithRelay(r))
		if err != nil {
			t.Fatal(err)
		}
		tx, err := ob.Begin(ctx, nil, txoutbox.TimeCritical())
		if err != nil {
			t.Fatal(err)
		}
		id, err := tx.Add(txoutbox.Event{AggregateType: "order", AggregateID: "o-1", EventType: "order.paid", Payload: e.Payloads[i]})
		if err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		e.IDs = append(e.IDs, id)
	}
	outboxtest.WaitDrained(ctx, t, db, d)
	for _, id := range e.IDs {
		row, err := d.Get(ctx, db, id)
		if err != nil {
			t.Fatal(err)
		}
		if row.State != dialects.StatePublished {
			t.Fatalf("event %s is %v (%s), not published", id, row.State, row.LastError)
		}
	}
	return e
}

// Check checks the messages received for the events of e, in order: body
// is the broker message's body as received (to check that no plaintext
// travelled), read(i) reads the i-th message anew (it is called twice, the
// second time as a redelivery). Each message has the event's id, type and
// aggregate id and its Jitoutbox-Encoding; a consumer with both keys
// decodes it to the payload written, with the original content type, and
// applies it once; a consumer without the new key gets codec.ErrUnknownKey
// for the second event.
func (e Encrypted) Check(t testing.TB, body func(i int) []byte, read func(i int) inbox.Message) {
	t.Helper()
	consumer := Codec(t, "new", "old")
	f := New(t)
	for i, id := range e.IDs {
		raw := read(i)
		// The payloads' text in clear, not its four digits alone: a
		// structured CloudEvent's body also holds the event's id and time,
		// which may contain "4111" by chance.
		for _, plain := range [][]byte{[]byte(`"4111 1111`), []byte(`"line":"4111"`)} {
			if bytes.Contains(body(i), plain) || bytes.Contains(raw.Payload, plain) {
				t.Fatalf("message %d reached the broker in clear", i)
			}
		}
		if raw.EventID != id || raw.EventType != "order.paid" || raw.AggregateID != "o-1" {
			t.Fatalf("message %d is event %s (type %q, aggregate id %q), want %s of order.paid, o-1 (order)",
				i, raw.EventID, raw.EventType, raw.AggregateID, id)
		}
		if raw.Headers[codec.HeaderEncoding] != e.Encodings[i] {
			t.Fatalf("message %d: encoding %q, want %q (headers %v)", i, raw.Headers[codec.HeaderEncoding], e.Encodings[i], raw.Headers)
		}
		if res, err := f.Handle(t, raw); !errors.Is(err, inbox.ErrEncoded) || res != inbox.Failed {
			t.Fatalf("message %d handled before decoding: %v, %v; want inbox.ErrEncoded", i, res, err)
		}
		msg, err := raw.Decode(consumer)
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		if !bytes.Equal(msg.Payload, e.Payloads[i]) || msg.Headers[codec.HeaderContentType] != txoutbox.ContentTypeJSON ||
			msg.Headers[codec.HeaderEncoding] != "" {
			t.Fatalf("message %d decoded to %d bytes (want %d), headers %v", i, len(msg.Payload), len(e.Payloads[i]), msg.Headers)
		}
		redelivered, err := read(i).Decode(consumer)
		if err != nil {
			t.Fatal(err)
		}
		f.Once(t, msg, redelivered)
	}
	_, err := read(1).Decode(Codec(t, "old"))
	var de *codec.DecodeError
	if !errors.Is(err, codec.ErrUnknownKey) || !errors.As(err, &de) || de.KeyID != "new" || de.EventID != e.IDs[1] {
		t.Fatalf("consumer without the new key: %v, want codec.ErrUnknownKey for key new", err)
	}
	if res, err := f.Handle(t, inbox.Message{}); err == nil || res != inbox.Failed {
		t.Fatal("an empty message was handled")
	}
}
