package sqlite_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"time"

	_ "modernc.org/sqlite"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/dialects/sqlite"
)

// Example migrates a table with 8 partitions, writes an event, and reads it
// back through a relay session that owns every partition.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "jitoutbox-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "app.db")+
		"?_pragma=journal_mode(WAL)&_pragma=busy_timeout(10000)&_pragma=synchronous(NORMAL)&_txlock=immediate")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer db.Close()

	d, err := sqlite.New(sqlite.WithTable("events_outbox"), sqlite.WithPartitions(8))
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := d.Migrate(ctx, db); err != nil {
		fmt.Println(err)
		return
	}
	n, err := d.Partitions(ctx, db)
	fmt.Println(d.Name(), d.Table(), n, err)

	now := time.Now()
	ev := dialects.Event{ID: "0190a0b0-0000-7000-8000-000000000001", AggregateType: "order", AggregateID: "42",
		EventType: "order.paid", CreatedAt: now, Partition: dialects.PartitionOf("order", "42", n)}
	if err := d.Insert(ctx, db, []dialects.Event{ev}); err != nil {
		fmt.Println(err)
		return
	}

	s, err := d.OpenSession(ctx, db, "relay-1", 10*time.Second)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	owned, err := s.Take(ctx, []int{0, 1, 2, 3, 4, 5, 6, 7}, now)
	fmt.Println(len(owned), err)
	// Rows are due at the database's clock of their INSERT (Dialect.Now).
	dbNow, _ := d.Now(ctx, db)
	res, err := d.Read(ctx, db, dialects.ReadRequest{Partitions: owned, Limit: 10, Now: dbNow})
	recs := res.Records
	fmt.Println(len(recs), recs[0].EventType, err)
	marked, err := d.Mark(ctx, db, dialects.Mark{Token: s.Token(), Seqs: []int64{recs[0].Seq}, Delete: true})
	fmt.Println(marked, err)
	// Output:
	// sqlite events_outbox 8 <nil>
	// 8 <nil>
	// 1 order.paid <nil>
	// 1 <nil>
}

func ExampleWithTable() {
	_, err := sqlite.New(sqlite.WithTable("outbox; DROP TABLE users"))
	fmt.Println(err != nil)
	// Output: true
}

func ExampleWithPartitions() {
	_, err := sqlite.New(sqlite.WithPartitions(0))
	fmt.Println(err)
	// Output: dialects: invalid partition count: WithPartitions(0); use 1 to 4096
}
