package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jitoutbox/jitoutbox/internal/testnats"
	"github.com/jitoutbox/jitoutbox/relay/natspub"
)

// TestRunNATSDeadLetter runs the command against an existing stream whose
// max message size refuses the poison event: -stream leaves the stream's
// settings alone, the good events are stored in order, and the poison event
// is dead-lettered to the -dead-letter subject (stored by a stream of its
// own) with its headers.
func TestRunNATSDeadLetter(t *testing.T) {
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
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: stream, Subjects: []string{prefix + ".>"},
		MaxMsgSize: 1024, Duplicates: 10 * time.Minute, Storage: jetstream.MemoryStorage}); err != nil {
		t.Fatal(err)
	}
	deadStream := strings.ToUpper(testnats.RandomName("DEAD_"))
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: deadStream, Subjects: []string{deadSubject},
		Storage: jetstream.MemoryStorage}); err != nil {
		t.Fatal(err)
	}

	dsn := sqliteOutbox(t)
	poison := &e2eEvent{aggType: "order", aggID: "poison", evType: "placed", payload: make([]byte, 4096)}
	evs, good := goodAndPoison(6, poison)
	commitEvents(t, dsn, evs)
	r := startRun(t, "-dialect", "sqlite", "-dsn", dsn, "-nats", srv.URL, "-stream", stream,
		"-subject-prefix", prefix, "-dead-letter", deadSubject, "-wake", "none", "-poll", "100ms")

	var got []string
	cons, err := js.OrderedConsumer(ctx, stream, jetstream.OrderedConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	for len(got) < len(good) {
		msg, err := cons.Next(jetstream.FetchMaxWait(20 * time.Second))
		if err != nil {
			t.Fatalf("after %q: %v\n%s", got, err, r.log.String())
		}
		got = append(got, msg.Headers().Get(natspub.HeaderAggregateID)+"/"+string(msg.Data()))
	}
	checkGood(t, good, got)

	dcons, err := js.OrderedConsumer(ctx, deadStream, jetstream.OrderedConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	msg, err := dcons.Next(jetstream.FetchMaxWait(20 * time.Second))
	if err != nil {
		t.Fatalf("no dead letter: %v\n%s", err, r.log.String())
	}
	if id := msg.Headers().Get(natspub.HeaderEventID); id != poison.id {
		t.Fatalf("dead letter of event %q, want the poison event %q", id, poison.id)
	}
	checkDead(t, msg.Headers().Get)

	st, err := js.Stream(ctx, stream)
	if err != nil {
		t.Fatal(err)
	}
	if c := st.CachedInfo().Config; c.MaxMsgSize != 1024 || c.Duplicates != 10*time.Minute || c.Storage != jetstream.MemoryStorage {
		t.Fatalf("-stream changed the existing stream: max msg size %d, duplicates %v, storage %v", c.MaxMsgSize, c.Duplicates, c.Storage)
	}
	if st.CachedInfo().State.Msgs != uint64(len(good)) {
		t.Fatalf("the stream holds %d messages, want %d", st.CachedInfo().State.Msgs, len(good))
	}
	r.stop(t)
}

// TestEnsureStreamWarnsOnMissingSubjects: an existing stream that does not
// store the dead-letter subject is left unchanged, with a warning that
// names the subject.
func TestEnsureStreamWarnsOnMissingSubjects(t *testing.T) {
	srv := testnats.Server(t)
	js, err := jetstream.New(testnats.Connect(t, srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "S", Subjects: []string{"ev.>"}, Storage: jetstream.MemoryStorage}); err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	if err := ensureStream(ctx, js, "S", []string{"ev.>", "dead.x"}, newLogger(config{logFormat: "text"}, &log)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "dead.x") || strings.Count(log.String(), "level=WARN") != 1 {
		t.Fatalf("want one warning naming dead.x, got:\n%s", log.String())
	}
	st, err := js.Stream(ctx, "S")
	if err != nil {
		t.Fatal(err)
	}
	if got := st.CachedInfo().Config.Subjects; len(got) != 1 || got[0] != "ev.>" {
		t.Fatalf("stream subjects changed to %q", got)
	}
}
