package kafkapub_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jitoutbox/jitoutbox/internal/testdb"
	"github.com/jitoutbox/jitoutbox/relay"
	"github.com/jitoutbox/jitoutbox/relay/kafkapub"
	"github.com/jitoutbox/jitoutbox/txoutbox"
)

// TestEndToEndEveryDatabaseTwoRelays: on every database (SQLite, PostgreSQL
// with lib/pq and pgx, MariaDB; the server ones when their variable is
// set), two relays share the table and publish to an in-process Kafka
// cluster (kfake); every committed event is consumed once, in per-aggregate
// order.
func TestEndToEndEveryDatabaseTwoRelays(t *testing.T) {
	for _, tgt := range testdb.Targets() {
		t.Run(tgt.Name, func(t *testing.T) {
			ctx := ctxTimeout(t, 90*time.Second)
			db, _ := tgt.Open(t)
			d := testdb.NewDialect(t, tgt.Dialect)
			if err := d.Migrate(ctx, db); err != nil {
				t.Fatal(err)
			}
			c := newFake(t)
			cl := newClient(t, c.ListenAddrs())
			createTopic(t, ctx, cl, "outbox.order", 3, nil)
			var relays []*relay.Relay
			for i := range 2 {
				pub, err := kafkapub.New(cl)
				if err != nil {
					t.Fatal(err)
				}
				r, err := relay.New(db, d, pub, relay.Config{Owner: fmt.Sprint("r", i),
					PollInterval: 50 * time.Millisecond, RebalanceInterval: 200 * time.Millisecond})
				if err != nil {
					t.Fatal(err)
				}
				relays = append(relays, r)
			}
			ob, err := txoutbox.New(db, d, txoutbox.WithRelay(relays[0]))
			if err != nil {
				t.Fatal(err)
			}
			const aggregates, perAggregate = 8, 10
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
			var wg sync.WaitGroup
			errs := make(chan error, len(relays))
			for _, r := range relays {
				wg.Add(1)
				go func() {
					defer wg.Done()
					errs <- r.Run(rctx)
				}()
			}
			for k := perAggregate / 2; k < perAggregate; k++ {
				commit(k)
			}
			const n = aggregates * perAggregate
			recs := consume(t, ctx, c.ListenAddrs(), n, "outbox.order")
			stop()
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Fatalf("Run: %v", err)
				}
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
		})
	}
}
