package kafkapub_test

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
	"github.com/jitoutbox/jitoutbox/relay/kafkapub"
	"github.com/jitoutbox/jitoutbox/txoutbox"
)

// TestEndToEndSQLiteRelayKafka commits events with txoutbox, runs the relay
// with a Kafka publisher on an in-process cluster, and checks that every
// event is consumed, in per-aggregate order.
func TestEndToEndSQLiteRelayKafka(t *testing.T) {
	ctx := ctxTimeout(t, 60*time.Second)
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
	c := newFake(t)
	cl := newClient(t, c.ListenAddrs())
	createTopic(t, ctx, cl, "outbox.order", 3, nil)
	pub, err := kafkapub.New(cl)
	if err != nil {
		t.Fatal(err)
	}
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
	recs := consume(t, ctx, c.ListenAddrs(), n, "outbox.order")
	stop()
	if err := <-runErr; err != nil {
		t.Fatalf("Run: %v", err)
	}
	next := make(map[string]int)
	ids := make(map[string]bool)
	for _, rec := range recs {
		agg := string(rec.Key)
		if want := fmt.Sprint(next[agg]); string(rec.Value) != want {
			t.Fatalf("aggregate %s: got step %s, want %s (order)", agg, rec.Value, want)
		}
		next[agg]++
		ids[kafkapub.EventID(rec)] = true
	}
	if len(recs) != n || len(ids) != n || len(next) != aggregates {
		t.Fatalf("consumed %d records, %d event ids, %d aggregates; want %d, %d, %d", len(recs), len(ids), len(next), n, n, aggregates)
	}
}
