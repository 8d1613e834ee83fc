package relay_test

import (
	"context"
	"database/sql"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"slices"
	"time"

	_ "modernc.org/sqlite"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/dialects/sqlite"
	"github.com/jitoutbox/jitoutbox/relay"
	"github.com/jitoutbox/jitoutbox/txoutbox"
)

// Example commits an event in a time-critical transaction and lets a relay
// publish it at once through a PublisherFunc that prints it.
func Example() {
	dir, err := os.MkdirTemp("", "relay-example")
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

	done := make(chan struct{})
	pub := relay.PublisherFunc(func(ctx context.Context, batch []relay.Message, errs []error) {
		for _, m := range batch {
			fmt.Printf("%s %s/%s %s\n", m.EventType, m.AggregateType, m.AggregateID, m.Payload)
		}
		close(done)
	})
	r, err := relay.New(db, dialect, pub, relay.Config{
		PollInterval: time.Hour, // the hand-over, not the poll, delivers the event
	})
	if err != nil {
		log.Fatal(err)
	}
	// The relay in this process, wired once: time-critical commits are
	// handed to it in memory.
	ob, err := txoutbox.New(db, dialect, txoutbox.WithRelay(r))
	if err != nil {
		log.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	stopped := make(chan error, 1)
	go func() { stopped <- r.Run(runCtx) }()

	tx, err := ob.Begin(ctx, nil, txoutbox.TimeCritical())
	if err != nil {
		log.Fatal(err)
	}
	if _, err := tx.Add(txoutbox.Event{
		AggregateType: "order", AggregateID: "42", EventType: "order.paid",
		Payload: []byte(`{"amount":1999}`),
	}); err != nil {
		log.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		log.Fatal(err)
	}

	<-done
	stop()
	if err := <-stopped; err != nil {
		log.Fatal(err)
	}
	// Output: order.paid order/42 {"amount":1999}
}

// ExampleNewFleet serves two tenants' outbox tables of one database from
// one fleet, each tenant's commits handed over to the fleet's relay of its
// table.
func ExampleNewFleet() {
	dir, err := os.MkdirTemp("", "fleet-example")
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
	tableDialect := func(table string) (dialects.Dialect, error) { return sqlite.New(sqlite.WithTable(table)) }
	tenants := []string{"tenant_a_outbox", "tenant_b_outbox"}
	for _, t := range tenants {
		d, err := tableDialect(t)
		if err != nil {
			log.Fatal(err)
		}
		if err := d.Migrate(ctx, db); err != nil {
			log.Fatal(err)
		}
	}

	got := make(chan string, len(tenants))
	pub := relay.PublisherFunc(func(ctx context.Context, batch []relay.Message, errs []error) {
		for _, m := range batch {
			got <- fmt.Sprintf("%s %s", m.AggregateID, m.Payload)
		}
	})
	fleet, err := relay.NewFleet(relay.FleetConfig{
		Sources: []relay.Source{{
			Name: "main", DB: db, Dialect: tableDialect,
			Patterns: []string{"tenant_*_outbox"}, // found now and again while running
		}},
		Publisher: pub,
	})
	if err != nil {
		log.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	stopped := make(chan error, 1)
	go func() { stopped <- fleet.Run(runCtx) }()

	for i, t := range tenants {
		// One outbox per tenant, wired once to the fleet's relay of its table.
		r, err := fleet.Relay("main", t)
		if err != nil {
			log.Fatal(err)
		}
		d, err := tableDialect(t)
		if err != nil {
			log.Fatal(err)
		}
		ob, err := txoutbox.New(db, d, txoutbox.WithRelay(r))
		if err != nil {
			log.Fatal(err)
		}
		tx, err := ob.Begin(ctx, nil, txoutbox.TimeCritical())
		if err != nil {
			log.Fatal(err)
		}
		if _, err := tx.Add(txoutbox.Event{
			AggregateType: "order", AggregateID: t, EventType: "order.paid",
			Payload: []byte(fmt.Sprintf(`{"n":%d}`, i)),
		}); err != nil {
			log.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			log.Fatal(err)
		}
	}
	lines := []string{<-got, <-got}
	slices.Sort(lines)
	for _, l := range lines {
		fmt.Println(l)
	}
	stop()
	if err := <-stopped; err != nil {
		log.Fatal(err)
	}
	// Output:
	// tenant_a_outbox {"n":0}
	// tenant_b_outbox {"n":1}
}
