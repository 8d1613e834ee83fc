package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jitoutbox/jitoutbox/codec"
	"github.com/jitoutbox/jitoutbox/dialects/sqlite"
	"github.com/jitoutbox/jitoutbox/internal/testnats"
	"github.com/jitoutbox/jitoutbox/relay/natspub"
	"github.com/jitoutbox/jitoutbox/txoutbox"
)

// TestRunDecodeKeysFile: with -decode-keys-file the relay publishes the
// plaintext of payloads encrypted under a key of the file, in order, and
// dead-letters one encrypted under a key the file lacks: its dead letter
// carries the ciphertext, and no consumer sees its plaintext.
func TestRunDecodeKeysFile(t *testing.T) {
	key := func(b byte) []byte { return bytes.Repeat([]byte{b}, codec.KeySize) }
	writer := func(current string) *codec.Codec {
		k, err := codec.NewKeys(current, map[string][]byte{"k1": key(1), "k2": key(2)})
		if err != nil {
			t.Fatal(err)
		}
		c, err := codec.New(codec.Config{Keys: k})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	keysFile := filepath.Join(t.TempDir(), "keys")
	if err := os.WriteFile(keysFile, []byte("k1:"+base64.StdEncoding.EncodeToString(key(1))+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	srv := testnats.Server(t)
	nc := testnats.Connect(t, srv.URL)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	prefix := testnats.RandomName("ev_")
	deadSubject := testnats.RandomName("dead_") + ".events"
	stream := strings.ToUpper(testnats.RandomName("EV_"))
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: stream, Subjects: []string{prefix + ".>", deadSubject},
		Storage: jetstream.MemoryStorage}); err != nil {
		t.Fatal(err)
	}

	dsn := sqliteOutbox(t)
	secret := []byte(`{"card":"4111"}`)
	var good []*e2eEvent
	for i := range 4 {
		good = append(good, &e2eEvent{aggType: "order", aggID: []string{"0", "1"}[i%2], evType: "placed", payload: []byte{byte('0' + i)}})
	}
	commitEncoded(t, dsn, writer("k1"), good)
	poison := &e2eEvent{aggType: "order", aggID: "p", evType: "placed", payload: secret}
	commitEncoded(t, dsn, writer("k2"), []*e2eEvent{poison})

	r := startRun(t, "-dialect", "sqlite", "-dsn", dsn, "-nats", srv.URL, "-subject-prefix", prefix,
		"-dead-letter", deadSubject, "-wake", "none", "-poll", "100ms", "-decode-keys-file", keysFile)
	cons, err := js.OrderedConsumer(ctx, stream, jetstream.OrderedConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	var dead jetstream.Msg
	for len(got) < len(good) || dead == nil {
		msg, err := cons.Next(jetstream.FetchMaxWait(20 * time.Second))
		if err != nil {
			t.Fatalf("after %q: %v\n%s", got, err, r.log.String())
		}
		if bytes.Contains(msg.Data(), secret) {
			t.Fatalf("the payload of an event under an unknown key was published in clear on %s", msg.Subject())
		}
		if msg.Subject() == deadSubject {
			dead = msg
			continue
		}
		if msg.Headers().Get(codec.HeaderEncoding) != "" {
			t.Fatalf("published still encoded: %v", msg.Headers())
		}
		got = append(got, msg.Headers().Get(natspub.HeaderAggregateID)+"/"+string(msg.Data()))
	}
	checkGood(t, good, got)
	if id := dead.Headers().Get(natspub.HeaderEventID); id != poison.id {
		t.Fatalf("dead letter of %q, want %q", id, poison.id)
	}
	if enc := dead.Headers().Get(codec.HeaderEncoding); !strings.Contains(enc, "k2") {
		t.Fatalf("dead letter encoding header %q: want the stored encoding under k2", enc)
	}
	r.stop(t)

	// A keys file that cannot be read or parsed stops the start.
	bad := filepath.Join(t.TempDir(), "bad")
	if err := os.WriteFile(bad, []byte("k1:not base64\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{bad, filepath.Join(t.TempDir(), "missing")} {
		if _, err := parseFlags([]string{"-dialect", "sqlite", "-dsn", dsn, "-decode-keys-file", f}, envOf(nil), &bytes.Buffer{}); err == nil ||
			!strings.Contains(err.Error(), "-decode-keys-file") {
			t.Errorf("keys file %s: %v", f, err)
		}
	}
}

// commitEncoded commits evs through an Outbox encoding payloads with c,
// one transaction each, and sets their ids.
func commitEncoded(t *testing.T, dsn string, c *codec.Codec, evs []*e2eEvent) {
	t.Helper()
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	d, err := sqlite.New()
	if err != nil {
		t.Fatal(err)
	}
	ob, err := txoutbox.New(db, d, txoutbox.WithPayloadEncoder(c))
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs {
		tx, err := ob.Begin(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if ev.id, err = tx.Add(txoutbox.Event{AggregateType: ev.aggType, AggregateID: ev.aggID, EventType: ev.evType,
			Payload: ev.payload}); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
	}
}
