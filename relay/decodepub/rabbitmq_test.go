package decodepub_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/jitoutbox/jitoutbox/codec"
	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/internal/testdb"
	"github.com/jitoutbox/jitoutbox/outboxtest"
	"github.com/jitoutbox/jitoutbox/relay"
	"github.com/jitoutbox/jitoutbox/relay/decodepub"
	"github.com/jitoutbox/jitoutbox/relay/rabbitpub"
	"github.com/jitoutbox/jitoutbox/txoutbox"
)

const envAMQP = "JITOUTBOX_AMQP_URL"

func randomName(prefix string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// TestDecodedThroughRabbitMQ: a decoding relay in front of rabbitpub puts
// the event under a known key on the queue in clear, with its original
// content type property and without the codec's headers; the event under
// a key the relay does not know is dead-lettered, and the queue holds
// nothing else: neither its plaintext nor its ciphertext.
func TestDecodedThroughRabbitMQ(t *testing.T) {
	u := os.Getenv(envAMQP)
	if u == "" {
		t.Skipf("%s is not set: skipping the RabbitMQ suite (e.g. %s=amqp://guest:guest@127.0.0.1:5672/)", envAMQP, envAMQP)
	}
	conn, err := amqp.DialConfig(u, amqp.Config{Dial: amqp.DefaultDial(5 * time.Second)})
	if err != nil {
		t.Fatalf("%s is set but the broker cannot be reached: %v", envAMQP, err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	x := randomName("jitoutbox-decodepub-x-")
	if err := ch.ExchangeDeclare(x, amqp.ExchangeTopic, false, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ch.ExchangeDelete(x, false, false) }()
	q, err := ch.QueueDeclare(randomName("jitoutbox-decodepub-q-"), false, false, false, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _, _ = ch.QueueDelete(q.Name, false, false, false) }()
	if err := ch.QueueBind(q.Name, "#", x, false, nil); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	db, _ := testdb.SQLite(t)
	d := testdb.NewDialect(t, "sqlite")
	if err := d.Migrate(ctx, db); err != nil {
		t.Fatal(err)
	}
	rp, err := rabbitpub.New(u, rabbitpub.WithExchange(x))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = rp.Close() }()
	pub, err := decodepub.New(rp, newCodec(t, "k1"))
	if err != nil {
		t.Fatal(err)
	}
	dead := outboxtest.NewRecorder()
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
	outboxtest.WaitDrained(ctx, t, db, d)

	if row, err := d.Get(ctx, db, known); err != nil || row.State != dialects.StatePublished {
		t.Fatalf("event under the known key: %v, %v; want published", row.State, err)
	}
	row := waitDead(ctx, t, d, db, unknown)
	if !strings.Contains(row.LastError, "unknown key id") || row.Attempts != 1 {
		t.Fatalf("dead row: attempts %d, error %q", row.Attempts, row.LastError)
	}
	// rabbitpub returns once the broker confirmed, after it queued the
	// message: what the queue holds now is all the relay published.
	if st, err := ch.QueueDeclarePassive(q.Name, false, false, false, false, nil); err != nil || st.Messages != 1 {
		t.Fatalf("queue holds %d messages (%v), want 1", st.Messages, err)
	}
	m, ok, err := ch.Get(q.Name, true)
	if err != nil || !ok {
		t.Fatalf("get: %v, %v", ok, err)
	}
	if m.MessageId != known || string(m.Body) != `{"secret":"known key"}` || m.ContentType != txoutbox.ContentTypeJSON {
		t.Fatalf("published %s, content type %q, body %q; want %s in clear", m.MessageId, m.ContentType, m.Body, known)
	}
	if _, ok := m.Headers[codec.HeaderEncoding]; ok {
		t.Fatalf("published with headers %v", m.Headers)
	}
	if _, ok := m.Headers[codec.HeaderContentType]; ok || m.Headers["tenant"] != "t1" {
		t.Fatalf("published with headers %v", m.Headers)
	}
	dl := outboxtest.WaitPublished(ctx, t, dead, unknown)[0]
	if !bytes.Equal(dl.Payload, row.Payload) || dl.Headers[codec.HeaderEncoding] != "aes-256-gcm:k2" {
		t.Fatalf("dead letter: %d bytes, headers %v; want the stored ciphertext", len(dl.Payload), dl.Headers)
	}
}
