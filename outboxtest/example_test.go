package outboxtest_test

import (
	"context"
	"database/sql"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	_ "modernc.org/sqlite"

	"github.com/jitoutbox/jitoutbox/dialects/sqlite"
	"github.com/jitoutbox/jitoutbox/outboxtest"
	"github.com/jitoutbox/jitoutbox/relay"
	"github.com/jitoutbox/jitoutbox/txoutbox"
)

// Example runs a relay with a Recorder, commits two events (one of which the
// Recorder rejects for good) and waits, without sleeping, until the good one
// is published and the table is drained. In a test, use Start, h.Outbox,
// WaitPublished and WaitDrained, which do the same and fail the test on
// timeout.
func Example() {
	dir, err := os.MkdirTemp("", "outboxtest-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "outbox.db")+"?_pragma=journal_mode(WAL)&_pragma=busy_timeout(10000)&_txlock=immediate")
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	dialect, err := sqlite.New()
	if err != nil {
		log.Fatal(err)
	}
	if err := dialect.Migrate(ctx, db); err != nil {
		log.Fatal(err)
	}

	rec := outboxtest.NewRecorder()
	r, err := relay.New(db, dialect, rec, relay.Config{MaxAttempts: 1})
	if err != nil {
		log.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	stopped := make(chan error, 1)
	go func() { stopped <- r.Run(runCtx) }()

	// The relay of this process takes the commits in memory: no wake needed.
	ob, err := txoutbox.New(db, dialect, txoutbox.WithRelay(r))
	if err != nil {
		log.Fatal(err)
	}
	tx, err := ob.Begin(ctx, nil, txoutbox.TimeCritical())
	if err != nil {
		log.Fatal(err)
	}
	paid, _ := tx.Add(txoutbox.Event{AggregateType: "order", AggregateID: "42", EventType: "order.paid", Payload: []byte(`{"amount":1999}`)})
	bad, _ := tx.Add(txoutbox.Event{AggregateType: "order", AggregateID: "43", EventType: "order.paid", Payload: []byte(`{}`)})
	rec.FailPermanently(bad)
	if err := tx.Commit(); err != nil {
		log.Fatal(err)
	}

	wait, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	msgs, err := outboxtest.AwaitPublished(wait, rec, paid)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s %s/%s %s\n", msgs[0].EventType, msgs[0].AggregateType, msgs[0].AggregateID, msgs[0].Payload)
	if err := outboxtest.AwaitDrained(wait, db, dialect); err != nil {
		log.Fatal(err)
	}
	s, err := dialect.Stats(ctx, db)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("pending %d, dead %d\n", s.Pending, s.Dead)

	stop()
	if err := <-stopped; err != nil {
		log.Fatal(err)
	}
	// Output:
	// order.paid order/42 {"amount":1999}
	// pending 0, dead 1
}
