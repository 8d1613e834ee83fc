package main

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	_ "github.com/lib/pq"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/dialects/postgres"
	"github.com/jitoutbox/jitoutbox/relay"
)

func must(err error) {
	if err != nil {
		panic(err)
	}
}

func main() {
	ctx, cancel := context.WithCancel(context.Background())
	db, err := sql.Open("postgres", "postgres://postgres@127.0.0.1:5432/test?sslmode=disable")
	must(err)
	db.SetMaxOpenConns(20)
	_, _ = db.Exec("DROP SCHEMA IF EXISTS scratch3 CASCADE")
	_, err = db.Exec("CREATE SCHEMA scratch3")
	must(err)
	d, _ := postgres.New(postgres.WithTable("scratch3.outbox"))
	must(d.Migrate(ctx, db))
	const N = 100000
	for b := 0; b < N/1000; b++ {
		var evs []dialects.Event
		for i := 0; i < 1000; i++ {
			k := b*1000 + i
			aid := fmt.Sprint(k % 1000)
			evs = append(evs, dialects.Event{ID: fmt.Sprintf("00000000-0000-7000-8000-%012d", k), AggregateType: "o", AggregateID: aid, EventType: "x", Payload: make([]byte, 200), ContentType: "application/octet-stream", CreatedAt: time.Now(), Partition: dialects.PartitionOf("o", aid, 64)})
		}
		tx, _ := db.Begin()
		must(d.Insert(ctx, tx, evs))
		must(tx.Commit())
	}
	if os.Getenv("FILLONLY") != "" {
		return
	}
	var n atomic.Int64
	pub := relay.PublisherFunc(func(ctx context.Context, b []relay.Message, errs []error) { n.Add(int64(len(b))) })
	nr := 1
	fmt.Sscan(os.Getenv("NR"), &nr)
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	start := time.Now()
	var wg sync.WaitGroup
	for i := 0; i < nr; i++ {
		r, err := relay.New(db, d, pub, relay.Config{Logger: log, DeleteOnPublish: true, RebalanceInterval: time.Second})
		must(err)
		wg.Add(1)
		go func() { defer wg.Done(); must(r.Run(ctx)) }()
	}
	for n.Load() < N {
		time.Sleep(5 * time.Millisecond)
	}
	el := time.Since(start)
	fmt.Printf("relays=%d drained %d in %v: %.0f ev/s\n", nr, N, el, float64(N)/el.Seconds())
	cancel()
	wg.Wait()
}
