package inbox_test

import (
	"context"
	"database/sql"
	"fmt"
	"log"
	"os"
	"path/filepath"

	_ "modernc.org/sqlite" // "sqlite" driver

	"github.com/jitoutbox/jitoutbox/inbox"
)

// Example applies an event once: the second delivery of the same event (a
// redelivery or a republish) is reported as a Duplicate and its side
// effect does not run again.
func Example() {
	dir, err := os.MkdirTemp("", "inbox-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "consumer.db")+"?_pragma=busy_timeout(10000)&_txlock=immediate")
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, `CREATE TABLE balances (account TEXT PRIMARY KEY, cents INTEGER NOT NULL)`); err != nil {
		log.Fatal(err)
	}

	in, err := inbox.New(inbox.Config{Dialect: inbox.SQLite})
	if err != nil {
		log.Fatal(err)
	}
	if err := in.Migrate(ctx, db); err != nil {
		log.Fatal(err)
	}

	// With a broker, the message comes from natssub.JetStream(msg),
	// rabbitsub.Delivery(&d) or kafkasub.Record(r).
	msg := inbox.Message{EventID: "0190f5d2-0000-7000-8000-000000000001", AggregateType: "account",
		AggregateID: "a-1", EventType: "deposited", Seq: 1, Payload: []byte(`{"cents":500}`)}
	deposit := func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO balances (account, cents) VALUES ('a-1', 500)
			ON CONFLICT (account) DO UPDATE SET cents = cents + 500`)
		return err
	}
	for range 2 {
		res, err := in.Handle(ctx, db, msg, deposit)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(res)
	}
	var cents int
	if err := db.QueryRowContext(ctx, `SELECT cents FROM balances WHERE account = 'a-1'`).Scan(&cents); err != nil {
		log.Fatal(err)
	}
	fmt.Println("balance:", cents)

	_, err = in.Handle(ctx, db, inbox.Message{EventID: "order-42"}, deposit)
	fmt.Println(err)
	// Output:
	// applied
	// duplicate
	// balance: 500
	// inbox: event id is not a UUID: event "order-42": invalid UUID length: 8
}
