package decodepub_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/jitoutbox/jitoutbox/codec"
	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/internal/testdb"
	"github.com/jitoutbox/jitoutbox/outboxtest"
	"github.com/jitoutbox/jitoutbox/relay"
	"github.com/jitoutbox/jitoutbox/relay/decodepub"
	"github.com/jitoutbox/jitoutbox/txoutbox"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func newCodec(t testing.TB, current string, ids ...string) *codec.Codec {
	t.Helper()
	m := map[string][]byte{}
	for _, id := range append(ids, current) {
		m[id] = bytes.Repeat([]byte(id[len(id)-1:]), codec.KeySize)
	}
	k, err := codec.NewKeys(current, m)
	if err != nil {
		t.Fatal(err)
	}
	c, err := codec.New(codec.Config{Keys: k})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestDeadLettersUnknownKey: with the relay decoding, an event under a
// known key is published in clear with its original content type and
// without the codec's headers; an event under a key the relay does not
// know is dead-lettered at once with the codec's error, never reaches the
// publisher, and reaches the dead-letter publisher still encrypted.
func TestDeadLettersUnknownKey(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	db, _ := testdb.SQLite(t)
	d := testdb.NewDialect(t, "sqlite")
	if err := d.Migrate(ctx, db); err != nil {
		t.Fatal(err)
	}
	rec, dead := outboxtest.NewRecorder(), outboxtest.NewRecorder()
	pub, err := decodepub.New(rec, newCodec(t, "k1"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := relay.New(db, d, pub, relay.Config{PollInterval: 50 * time.Millisecond, DeadLetter: dead,
		Backoff: func(int) time.Duration { return 10 * time.Millisecond }})
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
	unknown := addEvent(ctx, t, db, d, r, newCodec(t, "k2", "k1"), "a", `{"secret":"unknown key"}`)
	known := addEvent(ctx, t, db, d, r, newCodec(t, "k1"), "b", `{"secret":"known key"}`)

	msgs := outboxtest.WaitPublished(ctx, t, rec, known)
	if m := msgs[0]; string(m.Payload) != `{"secret":"known key"}` || m.ContentType != txoutbox.ContentTypeJSON ||
		m.Headers["tenant"] != "t1" || m.Headers[codec.HeaderEncoding] != "" || m.Headers[codec.HeaderContentType] != "" {
		t.Fatalf("published %+v", m)
	}
	row := waitDead(ctx, t, d, db, unknown)
	if !strings.Contains(row.LastError, "unknown key id") || !strings.Contains(row.LastError, `"k2"`) || row.Attempts != 1 {
		t.Fatalf("dead row: attempts %d, error %q", row.Attempts, row.LastError)
	}
	if _, ok := rec.Message(unknown); ok {
		t.Fatal("the event under an unknown key was published")
	}
	for _, m := range rec.Messages() {
		if bytes.Contains(m.Payload, []byte("unknown key")) {
			t.Fatal("the plaintext of the event under an unknown key was published")
		}
	}
	dl := outboxtest.WaitPublished(ctx, t, dead, unknown)[0]
	if !bytes.Equal(dl.Payload, row.Payload) || dl.Headers[codec.HeaderEncoding] != "aes-256-gcm:k2" {
		t.Fatalf("dead letter: %d bytes, headers %v; want the stored ciphertext", len(dl.Payload), dl.Headers)
	}
}

// addEvent commits one JSON event of aggregate "order" agg, with the
// header tenant=t1, encoded by c, handed to r, and returns its id.
func addEvent(ctx context.Context, t *testing.T, db *sql.DB, d dialects.Dialect, r *relay.Relay, c *codec.Codec, agg, payload string) string {
	t.Helper()
	ob, err := txoutbox.New(db, d, txoutbox.WithPayloadEncoder(c), txoutbox.WithRelay(r))
	if err != nil {
		t.Fatal(err)
	}
	tx, err := ob.Begin(ctx, nil, txoutbox.TimeCritical())
	if err != nil {
		t.Fatal(err)
	}
	id, err := tx.Add(txoutbox.Event{AggregateType: "order", AggregateID: agg, EventType: "paid", Payload: []byte(payload),
		Headers: map[string]string{"tenant": "t1"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	return id
}

func waitDead(ctx context.Context, t *testing.T, d dialects.Dialect, db *sql.DB, id string) dialects.Row {
	t.Helper()
	for {
		row, err := d.Get(ctx, db, id)
		if err != nil {
			t.Fatal(err)
		}
		if row.State == dialects.StateDead {
			return row
		}
		select {
		case <-ctx.Done():
			t.Fatalf("event %s is %v, not dead", id, row.State)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// TestPublishResults: in one batch, a message that was not encoded passes
// as it is, an encoded one decoded, a corrupt one fails permanently
// without reaching the next publisher, and the next publisher's results
// land on the right messages.
func TestPublishResults(t *testing.T) {
	c := newCodec(t, "k1")
	enc := func(id, payload string) relay.Message {
		stored, e, err := c.EncodePayload(id, "text/plain", []byte(payload))
		if err != nil {
			t.Fatal(err)
		}
		return relay.Message{ID: id, Payload: stored, ContentType: txoutbox.ContentTypeBinary,
			Headers: map[string]string{codec.HeaderEncoding: e, codec.HeaderContentType: "text/plain"}}
	}
	corrupt := enc("0190f5d2-0000-7000-8000-000000000003", "three")
	corrupt.ID = "0190f5d2-0000-7000-8000-000000000009" // copied into another row
	batch := []relay.Message{
		{ID: "0190f5d2-0000-7000-8000-000000000001", Payload: []byte("one"), ContentType: "text/plain"},
		enc("0190f5d2-0000-7000-8000-000000000002", "two"),
		corrupt,
		enc("0190f5d2-0000-7000-8000-000000000004", "four"),
	}
	orig := bytes.Clone(batch[1].Payload)
	boom := errors.New("broker says no")
	var seen []string
	pub, err := decodepub.New(relay.PublisherFunc(func(_ context.Context, b []relay.Message, errs []error) {
		for i, m := range b {
			seen = append(seen, string(m.Payload)+"/"+m.ContentType)
			if string(m.Payload) == "four" {
				errs[i] = boom
			}
		}
	}), c)
	if err != nil {
		t.Fatal(err)
	}
	errs := make([]error, len(batch))
	pub.Publish(context.Background(), batch, errs)
	if want := []string{"one/text/plain", "two/text/plain", "four/text/plain"}; strings.Join(seen, ",") != strings.Join(want, ",") {
		t.Fatalf("next publisher saw %v, want %v", seen, want)
	}
	if errs[0] != nil || errs[1] != nil || !relay.IsPermanent(errs[2]) || !errors.Is(errs[2], codec.ErrCorrupt) || !errors.Is(errs[3], boom) || relay.IsPermanent(errs[3]) {
		t.Fatalf("results %v", errs)
	}
	if !bytes.Equal(batch[1].Payload, orig) || batch[1].Headers[codec.HeaderEncoding] == "" {
		t.Fatal("Publish changed the batch")
	}
	if _, err := decodepub.New(nil, c); err == nil {
		t.Fatal("New(nil, c) succeeded")
	}
}
