package natspub_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	_ "modernc.org/sqlite" // "sqlite" driver

	"github.com/jitoutbox/jitoutbox/dialects/sqlite"
	"github.com/jitoutbox/jitoutbox/internal/testnats"
	"github.com/jitoutbox/jitoutbox/relay"
	"github.com/jitoutbox/jitoutbox/relay/natspub"
	"github.com/jitoutbox/jitoutbox/txoutbox"
)

// TestEndToEndSQLiteRelayJetStream commits events with txoutbox, runs the
// relay with a JetStream publisher, and checks that every event reaches the
// stream once, in per-aggregate order.
func TestEndToEndSQLiteRelayJetStream(t *testing.T) {
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
	_, js := newJS(t, testnats.URL(t))
	s, prefix := testnats.Stream(t, js)
	pub := newJetStreamPub(t, js, natspub.WithSubjectPrefix(prefix))
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
	for streamMsgs(t, ctx, s) < n {
		if ctx.Err() != nil {
			t.Fatalf("stream holds %d of %d messages", streamMsgs(t, context.Background(), s), n)
		}
		time.Sleep(20 * time.Millisecond)
	}
	stop()
	if err := <-runErr; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if got := streamMsgs(t, ctx, s); got != n {
		t.Fatalf("stream holds %d messages, want %d", got, n)
	}
	next := make(map[string]int)
	for _, m := range readStream(t, ctx, s, n) {
		agg := m.Headers().Get(natspub.HeaderAggregateID)
		if want := fmt.Sprint(next[agg]); string(m.Data()) != want {
			t.Fatalf("aggregate %s: got step %s, want %s (order)", agg, m.Data(), want)
		}
		next[agg]++
	}
}
