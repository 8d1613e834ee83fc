package txoutbox_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/jitoutbox/jitoutbox/codec"
	"github.com/jitoutbox/jitoutbox/dialects/sqlite"
	"github.com/jitoutbox/jitoutbox/notify"
	"github.com/jitoutbox/jitoutbox/txoutbox"
	"github.com/jmoiron/sqlx"
	_ "modernc.org/sqlite" // the "sqlite" driver
)

// openExampleDB opens a SQLite database in a temporary directory with the
// outbox table and an orders table; close releases both.
func openExampleDB() (db *sql.DB, d *sqlite.Dialect, close func()) {
	dir, err := os.MkdirTemp("", "txoutbox-example")
	if err != nil {
		log.Fatal(err)
	}
	db, err = sql.Open("sqlite", "file:"+filepath.Join(dir, "shop.db")+"?_pragma=busy_timeout(10000)&_txlock=immediate")
	if err != nil {
		log.Fatal(err)
	}
	d, err = sqlite.New()
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	if err := d.Migrate(ctx, db); err != nil {
		log.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "CREATE TABLE orders (id TEXT PRIMARY KEY, state TEXT NOT NULL)"); err != nil {
		log.Fatal(err)
	}
	return db, d, func() { db.Close(); os.RemoveAll(dir) }
}

// pending prints how many events wait in the outbox.
func pending(db *sql.DB, d *sqlite.Dialect) {
	st, err := d.Stats(context.Background(), db)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("pending events:", st.Pending)
}

// The one-line swap: ob.Begin instead of db.BeginTx; events added to the
// transaction are written with it, right before COMMIT.
func Example() {
	db, dialect, closeDB := openExampleDB()
	defer closeDB()
	ctx := context.Background()

	ob, err := txoutbox.New(db, dialect) // once, at startup
	if err != nil {
		log.Fatal(err)
	}

	tx, err := ob.Begin(ctx, nil) // was: db.BeginTx(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer tx.Rollback() // harmless after Commit
	if _, err := tx.ExecContext(ctx, "INSERT INTO orders (id, state) VALUES (?, ?)", "42", "placed"); err != nil {
		log.Fatal(err)
	}
	if _, err := tx.Add(txoutbox.Event{
		AggregateType: "order",
		AggregateID:   "42",
		EventType:     "order.placed",
		Payload:       []byte(`{"id":"42","total":1250}`),
	}); err != nil {
		log.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		log.Fatal(err)
	}
	pending(db, dialect)

	// A rolled-back transaction leaves neither the order nor its event.
	tx, err = ob.Begin(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := tx.Add(txoutbox.Event{AggregateType: "order", AggregateID: "43", EventType: "order.placed"}); err != nil {
		log.Fatal(err)
	}
	if err := tx.Rollback(); err != nil {
		log.Fatal(err)
	}
	pending(db, dialect)
	// Output:
	// pending events: 1
	// pending events: 1
}

// confirmOrder is domain code far from where the transaction was begun: it
// finds the transaction in its context.
func confirmOrder(ctx context.Context, id string) error {
	_, err := txoutbox.Add(ctx, txoutbox.Event{AggregateType: "order", AggregateID: id, EventType: "order.confirmed"})
	return err
}

// Registering events through the context: pass tx.Context() (or
// txoutbox.NewContext(ctx, tx)) down the call stack.
func ExampleAdd() {
	db, dialect, closeDB := openExampleDB()
	defer closeDB()
	ob, err := txoutbox.New(db, dialect)
	if err != nil {
		log.Fatal(err)
	}

	tx, err := ob.Begin(context.Background(), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer tx.Rollback()
	if err := confirmOrder(tx.Context(), "42"); err != nil {
		log.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		log.Fatal(err)
	}
	pending(db, dialect)

	// Without a transaction in the context, Add refuses.
	err = confirmOrder(context.Background(), "42")
	fmt.Println(errors.Is(err, txoutbox.ErrNoTransaction))
	// Output:
	// pending events: 1
	// true
}

// A time-critical transaction wakes the relay right after COMMIT instead of
// waiting for its next poll.
func ExampleTimeCritical() {
	db, dialect, closeDB := openExampleDB()
	defer closeDB()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	wake := notify.NewLocal() // the relay listens on the same signal
	wakes := notify.NewWakes()
	if err := wake.Listen(ctx, wakes); err != nil {
		log.Fatal(err)
	}
	ob, err := txoutbox.New(db, dialect, txoutbox.WithNotifier(wake))
	if err != nil {
		log.Fatal(err)
	}

	tx, err := ob.Begin(ctx, nil, txoutbox.TimeCritical())
	if err != nil {
		log.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.Add(txoutbox.Event{AggregateType: "payment", AggregateID: "p-7", EventType: "payment.captured"}); err != nil {
		log.Fatal(err)
	}
	select {
	case <-wakes.C():
		fmt.Println("woken before commit (wrong)")
	default:
		fmt.Println("no wake before commit")
	}
	if err := tx.Commit(); err != nil {
		log.Fatal(err)
	}
	<-wakes.C()
	parts, _ := wakes.Take()
	fmt.Println("relay woken after commit, for", len(parts), "partition")
	// Output:
	// no wake before commit
	// relay woken after commit, for 1 partition
}

// The sqlx flavour: Beginx returns a transaction with the sqlx.Tx methods.
func ExampleNewX() {
	db, dialect, closeDB := openExampleDB()
	defer closeDB()
	ctx := context.Background()

	ob, err := txoutbox.NewX(sqlx.NewDb(db, "sqlite"), dialect)
	if err != nil {
		log.Fatal(err)
	}
	type order struct {
		ID    string `db:"id"`
		State string `db:"state"`
	}
	tx, err := ob.Beginx(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.NamedExecContext(ctx, "INSERT INTO orders (id, state) VALUES (:id, :state)", order{"7", "placed"}); err != nil {
		log.Fatal(err)
	}
	var o order
	if err := tx.GetContext(ctx, &o, "SELECT id, state FROM orders WHERE id = ?", "7"); err != nil {
		log.Fatal(err)
	}
	if _, err := tx.Add(txoutbox.Event{AggregateType: "order", AggregateID: o.ID, EventType: "order." + o.State}); err != nil {
		log.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		log.Fatal(err)
	}
	pending(db, dialect)
	// Output:
	// pending events: 1
}

// Deterministic keys let a retried operation produce the same key, so
// consumers can drop the duplicate.
func ExampleIdempotencyKey() {
	k1 := txoutbox.IdempotencyKey("payment", "p-7", "captured")
	k2 := txoutbox.IdempotencyKey("payment", "p-7", "captured")
	k3 := txoutbox.IdempotencyKey("payment", "p-7captured")
	fmt.Println(k1 == k2, k1 == k3, len(k1))
	// Output: true false 36
}

// DBTX is the interface sqlc generates for its Queries (hand-written here,
// as sqlc would write it into db.go).
type DBTX interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	PrepareContext(ctx context.Context, query string) (*sql.Stmt, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Queries is a "generated" query set over a DBTX.
type Queries struct{ db DBTX }

// PayOrder is a "generated" query.
func (q *Queries) PayOrder(ctx context.Context, id string) error {
	_, err := q.db.ExecContext(ctx, "INSERT INTO orders (id, state) VALUES (?, 'paid')", id)
	return err
}

// sqlc and similar generated code: *txoutbox.Tx satisfies the DBTX
// interface the generated Queries take, so the queries and the events run
// in one transaction.
func Example_sqlc() {
	db, dialect, closeDB := openExampleDB()
	defer closeDB()
	ctx := context.Background()
	ob, err := txoutbox.New(db, dialect)
	if err != nil {
		log.Fatal(err)
	}

	tx, err := ob.Begin(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer tx.Rollback()
	var _ DBTX = tx // compile-time proof
	q := &Queries{db: tx}
	if err := q.PayOrder(ctx, "42"); err != nil {
		log.Fatal(err)
	}
	if _, err := tx.Add(txoutbox.Event{AggregateType: "order", AggregateID: "42", EventType: "order.paid", Payload: []byte(`{"id":42}`)}); err != nil {
		log.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		log.Fatal(err)
	}
	pending(db, dialect)
	// Output: pending events: 1
}

// WithPayloadEncoder with package codec: the row holds the ciphertext,
// its key id and the original content type; the consumer decodes it with
// the same keys.
func ExampleWithPayloadEncoder() {
	db, dialect, closeDB := openExampleDB()
	defer closeDB()
	ctx := context.Background()

	// In production: codec.KeysFromEnv or codec.KeysFromFile.
	keys, err := codec.NewKeys("2026-11", map[string][]byte{"2026-11": bytes.Repeat([]byte{7}, codec.KeySize)})
	if err != nil {
		log.Fatal(err)
	}
	c, err := codec.New(codec.Config{Keys: keys, CompressAbove: 1024})
	if err != nil {
		log.Fatal(err)
	}
	ob, err := txoutbox.New(db, dialect, txoutbox.WithPayloadEncoder(c))
	if err != nil {
		log.Fatal(err)
	}
	tx, err := ob.Begin(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer tx.Rollback()
	id, err := tx.Add(txoutbox.Event{AggregateType: "card", AggregateID: "7", EventType: "card.charged",
		Payload: []byte(`{"pan":"4111 1111 1111 1111"}`)})
	if err != nil {
		log.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		log.Fatal(err)
	}

	row, err := dialect.Get(ctx, db, id)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(row.ContentType, row.Headers[txoutbox.HeaderEncoding], row.Headers[txoutbox.HeaderEncodedContentType])
	fmt.Println("plaintext in the row:", bytes.Contains(row.Payload, []byte("4111")))
	payload, _, err := c.DecodePayload(id, row.Headers, row.Payload) // what the consumer does
	fmt.Printf("%s %v\n", payload, err)
	// Output:
	// application/octet-stream aes-256-gcm:2026-11 application/json
	// plaintext in the row: false
	// {"pan":"4111 1111 1111 1111"} <nil>
}

// A reminder scheduled a day after the order is placed, and cancelled in
// the transaction that cancels the order: the relay never publishes it.
func ExampleOutbox_Cancel() {
	db, dialect, closeDB := openExampleDB()
	defer closeDB()
	ctx := context.Background()
	ob, err := txoutbox.New(db, dialect)
	if err != nil {
		log.Fatal(err)
	}

	tx, err := ob.Begin(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer tx.Rollback()
	reminder, err := tx.Add(txoutbox.Event{AggregateType: "order", AggregateID: "42", EventType: "order.reminder",
		Payload: []byte(`{"order":42}`), Delay: 24 * time.Hour}) // due by the database's clock
	if err != nil {
		log.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		log.Fatal(err)
	}
	st, err := dialect.Stats(ctx, db)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("scheduled:", st.Scheduled)

	tx, err = ob.Begin(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer tx.Rollback()
	// ... the service's own UPDATE orders SET state = 'cancelled' ...
	cancelled, err := tx.Cancel(reminder)
	if err != nil {
		log.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		log.Fatal(err)
	}
	st, err = dialect.Stats(ctx, db)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("cancelled:", len(cancelled) == 1 && cancelled[0] == reminder, "scheduled:", st.Scheduled, "pending:", st.Pending)
	// Output:
	// scheduled: 1
	// cancelled: true scheduled: 0 pending: 0
}
