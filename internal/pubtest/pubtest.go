// Package pubtest is the end-to-end check the relay's publishers share:
// events committed through txoutbox on every database, relays sharing the
// table and publishing through the publisher under test, and the consumed
// messages checked for completeness and per-aggregate order.
package pubtest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jitoutbox/jitoutbox/internal/testdb"
	"github.com/jitoutbox/jitoutbox/relay"
	"github.com/jitoutbox/jitoutbox/txoutbox"
)

// Delivery is one consumed message as the check needs it.
type Delivery struct {
	// Aggregate is the aggregate id; Payload the event's payload (the step
	// number the check committed); ID the event id ("" if the broker's
	// consumer does not read it).
	Aggregate, Payload, ID string
}

// Broker is the broker side of one run.
type Broker struct {
	// Publisher returns a new publisher for one relay.
	Publisher func(t *testing.T) relay.Publisher
	// Consume waits for n messages of aggregate type "order" and returns
	// them in the order the broker delivered them.
	Consume func(t *testing.T, ctx context.Context, n int) []Delivery
}

// EveryDatabase runs, on every database target (SQLite, PostgreSQL with
// lib/pq and pgx, MariaDB; the server ones when their variable is set),
// relays relays sharing one table, the first wired to txoutbox with
// WithRelay, while events of 8 aggregates are committed (half before the
// relays start, half while they run, every other transaction
// time-critical), and checks that every event is consumed once, in
// per-aggregate order. newBroker makes the broker side for one target.
func EveryDatabase(t *testing.T, relays int, newBroker func(t *testing.T) Broker) {
	for _, tgt := range testdb.Targets() {
		t.Run(tgt.Name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			b := newBroker(t)
			db, _ := tgt.Open(t)
			d := testdb.NewDialect(t, tgt.Dialect)
			if err := d.Migrate(ctx, db); err != nil {
				t.Fatal(err)
			}
			var rs []*relay.Relay
			for i := range relays {
				r, err := relay.New(db, d, b.Publisher(t), relay.Config{Owner: fmt.Sprint("r", i),
					PollInterval: 50 * time.Millisecond, RebalanceInterval: 200 * time.Millisecond})
				if err != nil {
					t.Fatal(err)
				}
				rs = append(rs, r)
			}
			ob, err := txoutbox.New(db, d, txoutbox.WithRelay(rs[0]))
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
			errs := make(chan error, len(rs))
			for _, r := range rs {
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
			got := b.Consume(t, ctx, n)
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
			for _, m := range got {
				if want := fmt.Sprint(next[m.Aggregate]); m.Payload != want {
					t.Fatalf("aggregate %s: got step %s, want %s (order)", m.Aggregate, m.Payload, want)
				}
				next[m.Aggregate]++
				ids[m.ID] = true
			}
			if len(got) != n || len(next) != aggregates {
				t.Fatalf("consumed %d messages of %d aggregates; want %d of %d", len(got), len(next), n, aggregates)
			}
			if !ids[""] && len(ids) != n {
				t.Fatalf("%d distinct event ids in %d messages", len(ids), n)
			}
		})
	}
}
