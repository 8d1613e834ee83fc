package main

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	_ "github.com/lib/pq"

	"github.com/jitoutbox/jitoutbox/dialects/postgres"
	"github.com/jitoutbox/jitoutbox/relay"
	"github.com/jitoutbox/jitoutbox/txoutbox"
)

func must(err error) {
	if err != nil {
		panic(err)
	}
}

type rec struct {
	mu   sync.Mutex
	seen map[string][]string
	n    int
	lat  []time.Duration
}

func (r *rec) Publish(ctx context.Context, b []relay.Message, errs []error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, m := range b {
		r.seen[m.AggregateID] = append(r.seen[m.AggregateID], string(m.Payload))
		r.n++
		if m.Critical {
			r.lat = append(r.lat, time.Since(m.CreatedAt))
		}
	}
}

func main() {
	ctx, cancel := context.WithCancel(context.Background())
	db, err := sql.Open("postgres", "postgres://postgres@127.0.0.1:5432/test?sslmode=disable")
	must(err)
	_, _ = db.Exec("DROP SCHEMA IF EXISTS scratch2 CASCADE")
	_, err = db.Exec("CREATE SCHEMA scratch2")
	must(err)
	d, _ := postgres.New(postgres.WithTable("scratch2.outbox"))
	must(d.Migrate(ctx, db))
	pub := &rec{seen: map[string][]string{}}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	var rs []*relay.Relay
	nr := 3
	if os.Getenv("NR") != "" {
		fmt.Sscan(os.Getenv("NR"), &nr)
	}
	for i := 0; i < nr; i++ {
		r, err := relay.New(db, d, pub, relay.Config{Logger: log, RebalanceInterval: time.Second, Owner: fmt.Sprint("r", i)})
		must(err)
		rs = append(rs, r)
	}
	var wg sync.WaitGroup
	rctx := make([]context.CancelFunc, nr)
	for i, r := range rs {
		c, cc := context.WithCancel(ctx)
		rctx[i] = cc
		wg.Add(1)
		go func() { defer wg.Done(); must(r.Run(c)) }()
	}
	ob, err := txoutbox.New(db, d, txoutbox.WithRelay(rs[0]))
	must(err)
	time.Sleep(3 * time.Second)
	for i := 0; i < 2000; i++ {
		tx, err := ob.Begin(ctx, nil, txoutbox.TimeCritical())
		must(err)
		_, err = tx.Add(txoutbox.Event{AggregateType: "o", AggregateID: fmt.Sprint(i % 50), EventType: "x", Payload: []byte(fmt.Sprint(i))})
		must(err)
		must(tx.Commit())
		if i == 1000 && nr > 1 {
			rctx[1]()
		}
	}
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		pub.mu.Lock()
		n := pub.n
		pub.mu.Unlock()
		if n >= 2000 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	pub.mu.Lock()
	fmt.Println("published", pub.n)
	bad := 0
	for a, ps := range pub.seen {
		_ = a
		for i := 1; i < len(ps); i++ {
			var x, y int
			fmt.Sscan(ps[i-1], &x)
			fmt.Sscan(ps[i], &y)
			if y < x {
				bad++
			}
		}
	}
	fmt.Println("out of order", bad)
	lat := pub.lat
	pub.mu.Unlock()
	if len(lat) > 0 {
		var sum time.Duration
		for _, l := range lat {
			sum += l
		}
		fmt.Println("mean crit latency", sum/time.Duration(len(lat)))
	}
	var owners []string
	rows, _ := db.Query("SELECT COALESCE(owner,'-'), count(*) FROM scratch2.outbox_partitions GROUP BY 1")
	for rows.Next() {
		var o string
		var n int
		rows.Scan(&o, &n)
		owners = append(owners, fmt.Sprint(o, "=", n))
	}
	fmt.Println(owners)
	cancel()
	wg.Wait()
	var n int
	db.QueryRow("SELECT count(*) FROM scratch2.outbox_relays").Scan(&n)
	fmt.Println("relays rows after stop", n)
}
