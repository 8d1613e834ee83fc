package main

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jitoutbox/jitoutbox/dialects/sqlite"
	"github.com/jitoutbox/jitoutbox/internal/e2e/relayproc"
	"github.com/jitoutbox/jitoutbox/internal/testdb"
	"github.com/jitoutbox/jitoutbox/internal/testnats"
	"github.com/jitoutbox/jitoutbox/notify/natsnotify"
	"github.com/jitoutbox/jitoutbox/relay/natspub"
	"github.com/jitoutbox/jitoutbox/txoutbox"
)

// TestRunRelaysUntilCancelled runs the command in-process against SQLite and
// an embedded NATS server: -migrate creates the schema, -stream the stream, a
// NATS wake brings a time-critical event over at once (the poll is an hour),
// and cancelling the context makes run return nil.
func TestRunRelaysUntilCancelled(t *testing.T) {
	srv := testnats.Server(t)
	nc := testnats.Connect(t, srv.URL)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "outbox.db")
	dsn := testdb.SQLiteDSN(path)
	stream := strings.ToUpper(testnats.RandomName("RELAY_"))
	prefix := testnats.RandomName("ev_")
	subject := testnats.RandomName("wake.")
	deadSubject := testnats.RandomName("dead.")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	log := relayproc.NewLog()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"-dialect", "sqlite", "-dsn", dsn, "-nats", srv.URL, "-migrate", "-stream", stream,
			"-subject-prefix", prefix, "-dead-letter", deadSubject, "-wake", "nats", "-wake-subject", subject, "-poll", "1h", "-log-level", "debug"},
			envOf(nil), log, log)
	}()
	if err := log.Wait(20*time.Second, 1, `"wake source ready"`); err != nil {
		cancel()
		t.Fatalf("%v\n%s", err, log.String())
	}

	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	d, err := sqlite.New()
	if err != nil {
		t.Fatal(err)
	}
	n, err := natsnotify.NewNotifier(nc, natsnotify.WithSubject(subject))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	nctx, stopN := context.WithCancel(ctx)
	defer stopN()
	wg.Add(1)
	go func() { defer wg.Done(); _ = n.Run(nctx) }()
	ob, err := txoutbox.New(db, d, txoutbox.WithNotifier(n))
	if err != nil {
		t.Fatal(err)
	}

	st, err := js.Stream(ctx, stream)
	if err != nil {
		t.Fatalf("-stream did not create the stream: %v", err)
	}
	if got, want := st.CachedInfo().Config.Subjects, []string{prefix + ".>", deadSubject}; !slices.Equal(got, want) {
		t.Fatalf("stream subjects %q, want %q", got, want)
	}
	cons, err := st.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	tx, err := ob.Begin(ctx, nil, txoutbox.TimeCritical())
	if err != nil {
		t.Fatal(err)
	}
	id, err := tx.Add(txoutbox.Event{AggregateType: "order", AggregateID: "1", EventType: "placed", Payload: []byte(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	msg, err := cons.Next(jetstream.FetchMaxWait(20 * time.Second))
	if err != nil {
		t.Fatalf("event not relayed: %v\n%s", err, log.String())
	}
	if got := msg.Headers().Get(natspub.HeaderEventID); got != id {
		t.Fatalf("got event %q, want %q", got, id)
	}
	if want := prefix + ".order.placed"; msg.Subject() != want {
		t.Fatalf("subject %q, want %q", msg.Subject(), want)
	}

	stopN()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run after cancel: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("run did not return after cancel")
	}
	if log.Count(`"jitoutbox-relay stopped"`) != 1 {
		t.Fatalf("no stop line:\n%s", log.String())
	}
	if strings.Contains(log.String(), path) || strings.Contains(log.String(), srv.URL) {
		t.Fatal("the log contains the DSN or the NATS URL")
	}
}

func TestRunUsageError(t *testing.T) {
	err := run(context.Background(), []string{"-dialect", "nope"}, envOf(nil), relayproc.NewLog(), relayproc.NewLog())
	if !errors.Is(err, errUsage) {
		t.Fatalf("err = %v, want errUsage", err)
	}
}
