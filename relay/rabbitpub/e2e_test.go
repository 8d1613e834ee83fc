package rabbitpub_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	_ "modernc.org/sqlite" // "sqlite" driver

	"github.com/jitoutbox/jitoutbox/dialects/sqlite"
	"github.com/jitoutbox/jitoutbox/relay"
	"github.com/jitoutbox/jitoutbox/relay/rabbitpub"
	"github.com/jitoutbox/jitoutbox/txoutbox"
)

// TestEndToEndSQLiteRelayRabbitMQ commits events with txoutbox, runs the
// relay with a rabbitpub publisher, and checks that every event reaches the
// queue once, in per-aggregate order.
func TestEndToEndSQLiteRelayRabbitMQ(t *testing.T) {
	ctx := ctxTimeout(t, 60*time.Second)
	b := newBroker(t)
	x := b.exchange()
	q := b.queue(x, "order.#")

	db, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "e2e.db")+"?_pragma=busy_timeout(10000)&_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	d, err := sqlite.New()
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Migrate(ctx, db); err != nil {
		t.Fatal(err)
	}
	pub := newPub(t, b.url, rabbitpub.WithExchange(x))
	r, err := relay.New(db, d, pub, relay.Config{PollInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ob, err := txoutbox.New(db, d, txoutbox.WithRelay(r))
	if err != nil {
		t.Fatal(err)
	}
	// The first half waits in the table for the relay's first read; the
	// second half is committed while it runs, every other transaction
	// time-critical: handed to the relay in memory, behind what is pending
	// of its aggregate.
	const aggregates, perAggregate = 5, 20
	commit := func(k int) {
		var opts []txoutbox.TxOption
		if k%2 == 1 {
			opts = append(opts, txoutbox.TimeCritical())
		}
		tx, err := ob.Begin(ctx, nil, opts...)
		if err != nil {
			t.Fatal(err)
		}
		for a := range aggregates {
			if _, err := tx.Add(txoutbox.Event{AggregateType: "order", AggregateID: fmt.Sprint(a),
				EventType: "order.step", Payload: fmt.Appendf(nil, "%d", k)}); err != nil {
				t.Fatal(err)
			}
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	for k := range perAggregate / 2 {
		commit(k)
	}
	rctx, stop := context.WithCancel(ctx)
	runErr := make(chan error, 1)
	go func() { runErr <- r.Run(rctx) }()
	for k := perAggregate / 2; k < perAggregate; k++ {
		commit(k)
	}
	const n = aggregates * perAggregate
	got := b.consume(q, n)
	stop()
	if err := <-runErr; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if extra := b.depth(q); extra != 0 {
		t.Errorf("%d messages beyond the %d events", extra, n)
	}
	next := make(map[string]int)
	for _, m := range got {
		agg, _ := m.Headers[rabbitpub.HeaderAggregateID].(string)
		if want := fmt.Sprint(next[agg]); string(m.Body) != want {
			t.Fatalf("aggregate %s: got step %s, want %s (order)", agg, m.Body, want)
		}
		next[agg]++
	}
	if len(next) != aggregates {
		t.Errorf("%d aggregates delivered, want %d", len(next), aggregates)
	}
}
