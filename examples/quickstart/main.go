// Command quickstart shows jitoutbox end to end with nothing but Go: a SQLite
// file database and an embedded NATS server with JetStream, both in this
// process. It places a stream of orders (every fourth one time-critical),
// relays their events to JetStream, and reports how long each kind of event
// took from Commit returning to a subscriber receiving it.
//
//	go run ./examples/quickstart
package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects/sqlite"
	"github.com/jitoutbox/jitoutbox/relay"
	"github.com/jitoutbox/jitoutbox/relay/natspub"
	"github.com/jitoutbox/jitoutbox/txoutbox"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	_ "modernc.org/sqlite"
)

func main() {
	orders := flag.Int("orders", 400, "orders to place")
	rate := flag.Int("rate", 100, "orders per second")
	flag.Parse()
	if err := run(*orders, *rate, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

type timing struct {
	committed time.Time
	critical  bool
}

func run(orders, rate int, logw io.Writer) error {
	if orders <= 0 || rate <= 0 {
		return errors.New("-orders and -rate must be positive")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	logger := slog.New(slog.NewTextHandler(logw, &slog.HandlerOptions{Level: slog.LevelWarn}))

	dir, err := os.MkdirTemp("", "jitoutbox-quickstart-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	// 1. An embedded NATS server with JetStream, and a stream for the events.
	//    SyncAlways: the server fsyncs every write before it acknowledges, so
	//    one server on file storage keeps what it acknowledged through a
	//    crash of the machine; the publisher declares it (step 3), and the
	//    relay's durability check is content. A real deployment runs three
	//    replicas or sets jetstream { sync_interval: always } itself; with
	//    neither, the relay warns at start.
	ns, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, SyncAlways: true,
		StoreDir: filepath.Join(dir, "nats"), NoLog: true, NoSigs: true})
	if err != nil {
		return err
	}
	ns.Start()
	defer func() { ns.Shutdown(); ns.WaitForShutdown() }()
	if !ns.ReadyForConnections(10 * time.Second) {
		return errors.New("embedded NATS server did not start")
	}
	nc, err := nats.Connect(ns.ClientURL())
	if err != nil {
		return err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	stream, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "ORDERS", Subjects: []string{"outbox.>"}, Storage: jetstream.FileStorage})
	if err != nil {
		return err
	}

	// 2. The database: SQLite in WAL mode, the outbox schema, a business table.
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "shop.db")+"?_pragma=journal_mode(WAL)&_pragma=busy_timeout(10000)&_pragma=synchronous(NORMAL)&_txlock=immediate")
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(sqlite.MaxOpenConns) // SQLite writes one at a time: a small pool keeps writers from starving
	dialect, err := sqlite.New()
	if err != nil {
		return err
	}
	if err := dialect.Migrate(ctx, db); err != nil {
		return err
	}
	if _, err := db.ExecContext(ctx, `CREATE TABLE orders (id TEXT PRIMARY KEY, total_cents INTEGER NOT NULL)`); err != nil {
		return err
	}

	// 3. The relay: JetStream publisher. Commits of this process reach it
	//    through the Outbox (step 4), so it needs no wake of its own.
	pub, err := natspub.NewJetStream(js, natspub.WithServerSyncAlways())
	if err != nil {
		return err
	}
	rl, err := relay.New(db, dialect, pub, relay.Config{Logger: logger})
	if err != nil {
		return err
	}
	relayCtx, stopRelay := context.WithCancel(ctx)
	defer stopRelay()
	relayDone := make(chan error, 1)
	go func() { relayDone <- rl.Run(relayCtx) }()

	// 4. Capture: one line of setup. WithRelay hands the rows of a
	//    time-critical commit to the relay in memory right after COMMIT, and
	//    wakes it within its LazyDelay after an ordinary one.
	ob, err := txoutbox.New(db, dialect, txoutbox.WithRelay(rl))
	if err != nil {
		return err
	}

	// 5. A subscriber measures commit -> receive for each event.
	var (
		mu       sync.Mutex
		sent     = map[string]timing{}
		lat      = map[bool][]time.Duration{}
		early    = map[string]time.Time{} // received before placeOrder returned
		received = 0
		allIn    = make(chan struct{})
	)
	// record counts an event received at `at` (mu held).
	record := func(tm timing, at time.Time) {
		// A time-critical event can reach the subscriber before Commit has
		// returned to the caller: its latency is then zero.
		lat[tm.critical] = append(lat[tm.critical], max(at.Sub(tm.committed), 0))
		received++
		if received == orders {
			close(allIn)
		}
	}
	cons, err := stream.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{})
	if err != nil {
		return err
	}
	cc, err := cons.Consume(func(m jetstream.Msg) {
		now := time.Now()
		id := m.Headers().Get(natspub.HeaderEventID)
		mu.Lock()
		defer mu.Unlock()
		tm, ok := sent[id]
		if !ok {
			if id != "" {
				early[id] = now // placeOrder has not returned yet
			}
			return
		}
		delete(sent, id)
		record(tm, now)
	})
	if err != nil {
		return err
	}
	defer cc.Stop()

	fmt.Printf("jitoutbox quickstart: %d orders at %d/s into SQLite, relayed to an embedded JetStream (every 4th order time-critical)\n", orders, rate)
	progress := time.NewTicker(time.Second)
	defer progress.Stop()
	tick := time.NewTicker(time.Second / time.Duration(rate))
	defer tick.Stop()
	start := time.Now()
	for i := 0; i < orders; i++ {
		select {
		case <-tick.C:
		case <-progress.C:
			printProgress(&mu, i, &received, lat)
		}
		critical := i%4 == 0
		id, committed, err := placeOrder(ctx, ob, i, critical)
		if err != nil {
			return err
		}
		mu.Lock()
		// The subscriber may already have the event: the relay can publish
		// a time-critical event before Commit returns here.
		tm := timing{committed: committed, critical: critical}
		if at, ok := early[id]; ok {
			delete(early, id)
			record(tm, at)
		} else {
			sent[id] = tm
		}
		mu.Unlock()
	}
	select {
	case <-allIn:
	case <-time.After(60 * time.Second):
		mu.Lock()
		got := received
		mu.Unlock()
		// Say where the missing events are: still in the outbox, published
		// to the stream but not received, or neither.
		where := ""
		if st, err := rl.Stats(ctx); err == nil {
			where += fmt.Sprintf("; outbox: %d pending, %d dead; relay: %d published, %d released, %d cycles",
				st.Pending, st.Dead, st.Published, st.Released, st.Cycles)
		}
		if si, err := stream.Info(ctx); err == nil {
			where += fmt.Sprintf("; stream holds %d messages", si.State.Msgs)
		}
		return fmt.Errorf("timed out: %d of %d events received%s", got, orders, where)
	}
	elapsed := time.Since(start)
	// The subscriber can see an event before the relay has its ack and marks
	// the row: let the relay finish marking before stopping it (rows a
	// stopped relay did not mark stay pending; the next relay republishes
	// them and JetStream drops them as duplicates).
	if err := waitMarked(ctx, rl); err != nil {
		return err
	}
	stopRelay()
	if err := <-relayDone; err != nil {
		return fmt.Errorf("relay: %w", err)
	}
	printProgress(&mu, orders, &received, lat)

	st, err := rl.Stats(ctx)
	if err != nil {
		return err
	}
	fmt.Printf("\nsummary after %v: %d orders committed, %d events received, %d left pending, %d dead\n",
		elapsed.Round(time.Millisecond), orders, received, st.Pending, st.Dead)
	fmt.Printf("  time-critical (handed over): %s\n", summary(lat[true]))
	fmt.Printf("  ordinary      (lazy wake):   %s\n", summary(lat[false]))
	fmt.Println("time-critical events of partitions the relay owns are handed to it in memory right after COMMIT (no read); ordinary ones are read in batches after a delayed, coalesced wake (250 ms by default).")
	if st.Pending != 0 || st.Dead != 0 {
		return fmt.Errorf("%d events still pending and %d dead after delivery", st.Pending, st.Dead)
	}
	return nil
}

// waitMarked waits until the relay reports no pending rows.
func waitMarked(ctx context.Context, rl *relay.Relay) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		st, err := rl.Stats(ctx)
		if err != nil {
			return err
		}
		if st.Pending == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d events still pending 30 s after delivery", st.Pending)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// placeOrder is what a service's handler looks like: the only jitoutbox lines
// are Begin (was db.BeginTx) and Add.
func placeOrder(ctx context.Context, ob *txoutbox.Outbox, n int, critical bool) (string, time.Time, error) {
	var opts []txoutbox.TxOption
	if critical {
		opts = append(opts, txoutbox.TimeCritical())
	}
	tx, err := ob.Begin(ctx, nil, opts...)
	if err != nil {
		return "", time.Time{}, err
	}
	defer tx.Rollback()
	orderID := fmt.Sprintf("order-%05d", n)
	total := 1000 + n%7*250
	if _, err := tx.ExecContext(ctx, `INSERT INTO orders (id, total_cents) VALUES (?, ?)`, orderID, total); err != nil {
		return "", time.Time{}, err
	}
	payload, _ := json.Marshal(map[string]any{"order_id": orderID, "total_cents": total})
	id, err := tx.Add(txoutbox.Event{AggregateType: "order", AggregateID: orderID, EventType: "order.placed", Payload: payload})
	if err != nil {
		return "", time.Time{}, err
	}
	if err := tx.Commit(); err != nil {
		return "", time.Time{}, err
	}
	return id, time.Now(), nil
}

func printProgress(mu *sync.Mutex, placed int, received *int, lat map[bool][]time.Duration) {
	mu.Lock()
	defer mu.Unlock()
	fmt.Printf("  placed %4d  received %4d  | time-critical p50 %-9v | ordinary p50 %-9v\n",
		placed, *received, pct(lat[true], 50), pct(lat[false], 50))
}

func pct(d []time.Duration, p int) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[(len(s)-1)*p/100].Round(10 * time.Microsecond)
}

func summary(d []time.Duration) string {
	if len(d) == 0 {
		return "no events"
	}
	return fmt.Sprintf("%4d events  p50 %-9v p99 %-9v max %v", len(d), pct(d, 50), pct(d, 99), pct(d, 100))
}
