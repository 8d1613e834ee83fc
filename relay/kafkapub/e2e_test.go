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
	ob, err := txoutbox.New(db, d)
	if err != nil {
		t.Fatal(err)
	}
	const aggregates, perAggregate = 5, 20
	for k := range perAggregate {
		tx, err := ob.Begin(ctx, nil)
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
	rctx, stop := context.WithCancel(ctx)
	runErr := make(chan error, 1)
	go func() { runErr <- r.Run(rctx) }()
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
