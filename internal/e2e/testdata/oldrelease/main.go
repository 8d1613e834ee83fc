// Command oldrelease is the previous release's writer, built by
// TestUpgradeWithPreviousRelease (internal/e2e/upgrade_test.go) inside a
// tree of that release, against its txoutbox, relay and dialects: it is
// written to the previous release's API, and is updated when the pinned
// release (previousRelease) moves to one whose API it no longer compiles
// against.
//
//	oldrelease -dialect D -dsn DSN -nats URL -subject-prefix P fill
//	oldrelease -dialect D -dsn DSN -aggs A,B,... -txs N -period 30ms write
//
// fill creates the table with this release's Migrate and leaves rows in
// every state, through this release's relay: published (fill-pub), retrying
// with a retry block (fill-retry's first event, one retryable failure),
// dead with a dead block (fill-dead and fill-skip's first events, a
// permanent failure), pending and held behind those blocks, and pending
// (fill-pend), some of them time-critical. write commits N transactions, one
// every period, on the aggregates in turn, of one or two events each; every
// third one is time-critical.
//
// Every committed event is printed on stdout as "committed <id> <aggregate>
// <n>", n being its number within its aggregate (1, 2, ... in commit order,
// also in its payload {"agg":..., "n":...}). Any error exits with status 1.
package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	_ "github.com/go-sql-driver/mysql" // "mysql" driver
	_ "github.com/lib/pq"              // "postgres" driver
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	_ "modernc.org/sqlite" // "sqlite" driver

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/dialects/mysql"
	"github.com/jitoutbox/jitoutbox/dialects/postgres"
	"github.com/jitoutbox/jitoutbox/dialects/sqlite"
	"github.com/jitoutbox/jitoutbox/relay"
	"github.com/jitoutbox/jitoutbox/relay/natspub"
	"github.com/jitoutbox/jitoutbox/txoutbox"
)

type body struct {
	Agg string `json:"agg"`
	N   int64  `json:"n"`
}

type config struct {
	dialect, dsn, natsURL, prefix string
	aggs                          []string
	txs                           int
	period                        time.Duration
}

func main() {
	var c config
	flag.StringVar(&c.dialect, "dialect", "", "postgres, mysql or sqlite")
	flag.StringVar(&c.dsn, "dsn", "", "database DSN")
	flag.StringVar(&c.natsURL, "nats", "", "NATS URL (fill)")
	flag.StringVar(&c.prefix, "subject-prefix", "", "NATS subject prefix (fill)")
	aggs := flag.String("aggs", "old", "aggregate ids, comma-separated (write)")
	flag.IntVar(&c.txs, "txs", 40, "transactions (write)")
	flag.DurationVar(&c.period, "period", 30*time.Millisecond, "pause between transactions (write)")
	flag.Parse()
	c.aggs = strings.Split(*aggs, ",")
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, c, flag.Arg(0))
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "oldrelease:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, c config, mode string) error {
	driver := c.dialect
	var d dialects.Dialect
	var err error
	switch c.dialect {
	case "postgres":
		d, err = postgres.New()
	case "mysql":
		d, err = mysql.New()
	case "sqlite":
		d, err = sqlite.New()
	default:
		return fmt.Errorf("-dialect %q", c.dialect)
	}
	if err != nil {
		return err
	}
	db, err := sql.Open(driver, c.dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	ob, err := txoutbox.New(db, d)
	if err != nil {
		return err
	}
	w := &writer{ob: ob, next: map[string]int64{}}
	switch mode {
	case "fill":
		return fill(ctx, c, db, d, w)
	case "write":
		for i := range c.txs {
			if i > 0 {
				select {
				case <-ctx.Done():
					return ctx.Err()
				case <-time.After(c.period):
				}
			}
			aggs := []string{c.aggs[i%len(c.aggs)]}
			if i%2 == 1 {
				aggs = append(aggs, aggs[0])
			}
			if err := w.commit(ctx, i%3 == 0, aggs...); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("mode %q: use fill or write", mode)
}

// writer commits events numbered per aggregate and prints them.
type writer struct {
	ob   *txoutbox.Outbox
	next map[string]int64
}

func (w *writer) commit(ctx context.Context, critical bool, aggs ...string) error {
	var opts []txoutbox.TxOption
	if critical {
		opts = append(opts, txoutbox.TimeCritical())
	}
	tx, err := w.ob.Begin(ctx, nil, opts...)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var lines []string
	next := map[string]int64{}
	for _, agg := range aggs {
		next[agg]++
		b := body{Agg: agg, N: w.next[agg] + next[agg]}
		raw, _ := json.Marshal(b)
		id, err := tx.Add(txoutbox.Event{AggregateType: "order", AggregateID: agg, EventType: "order.changed", Payload: raw})
		if err != nil {
			return err
		}
		lines = append(lines, fmt.Sprintf("committed %s %s %d", id, agg, b.N))
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	for agg, n := range next {
		w.next[agg] += n
	}
	for _, l := range lines {
		fmt.Println(l)
	}
	return nil
}

// failing publishes through pub, except the first events of fill-retry
// (one retryable failure), fill-dead and fill-skip (a permanent one). seen
// is closed once want events have been through it.
type failing struct {
	pub  relay.Publisher
	mu   sync.Mutex
	done map[string]bool
	want int
	seen chan struct{}
}

func (f *failing) Publish(ctx context.Context, batch []relay.Message, errs []error) {
	var pass []relay.Message
	var at []int
	for i, m := range batch {
		var b body
		_ = json.Unmarshal(m.Payload, &b)
		switch {
		case b.N == 1 && b.Agg == "fill-retry":
			errs[i] = errors.New("oldrelease: a retryable failure")
		case b.N == 1 && (b.Agg == "fill-dead" || b.Agg == "fill-skip"):
			errs[i] = relay.Permanent(errors.New("oldrelease: a permanent failure"))
		default:
			pass, at = append(pass, m), append(at, i)
		}
	}
	if len(pass) > 0 {
		perrs := make([]error, len(pass))
		f.pub.Publish(ctx, pass, perrs)
		for j, i := range at {
			errs[i] = perrs[j]
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, m := range batch {
		f.done[m.ID] = true
	}
	if len(f.done) >= f.want && f.seen != nil {
		close(f.seen)
		f.seen = nil
	}
}

func fill(ctx context.Context, c config, db *sql.DB, d dialects.Dialect, w *writer) error {
	if err := d.Migrate(ctx, db); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	// Relayed now: fill-pub 1, 2 are published; the first events of
	// fill-retry, fill-dead and fill-skip fail and block the second events
	// of fill-retry and fill-dead.
	for _, aggs := range [][]string{{"fill-pub", "fill-retry", "fill-dead"}, {"fill-pub", "fill-retry", "fill-dead", "fill-skip"}} {
		if err := w.commit(ctx, false, aggs...); err != nil {
			return err
		}
	}
	nc, err := nats.Connect(c.natsURL)
	if err != nil {
		return err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	pub, err := natspub.NewJetStream(js, natspub.WithSubjectPrefix(c.prefix))
	if err != nil {
		return err
	}
	f := &failing{pub: pub, done: map[string]bool{}, want: 5, seen: make(chan struct{})}
	seen := f.seen
	r, err := relay.New(db, d, f, relay.Config{
		Owner: "old-fill", PollInterval: 100 * time.Millisecond, LeaseDuration: 3 * time.Second, PublishTimeout: 2 * time.Second,
		// Due again a few seconds after the upgrade: the new release's
		// relays retry what the old one failed.
		Backoff: func(int) time.Duration { return 4 * time.Second },
		Logger:  slog.New(slog.NewJSONHandler(os.Stderr, nil)),
	})
	if err != nil {
		return err
	}
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ran := make(chan error, 1)
	go func() { ran <- r.Run(rctx) }()
	select {
	case <-seen:
	case err := <-ran:
		return fmt.Errorf("relay ended early: %v", err)
	case <-time.After(20 * time.Second):
		cancel()
		<-ran
		return errors.New("the relay did not publish the fill events within 20s")
	}
	cancel() // a clean stop: the batch in flight is marked
	if err := <-ran; err != nil {
		return fmt.Errorf("relay: %w", err)
	}
	// Left pending: behind the blocks, and on an aggregate of its own.
	for i, aggs := range [][]string{{"fill-retry", "fill-dead", "fill-skip"}, {"fill-pend"}, {"fill-pend", "fill-pend"}} {
		if err := w.commit(ctx, i == 1, aggs...); err != nil {
			return err
		}
	}
	return check(ctx, db, d)
}

// check verifies the states fill meant to leave.
func check(ctx context.Context, db *sql.DB, d dialects.Dialect) error {
	count := func(st dialects.State) (int, error) {
		rows, err := d.List(ctx, db, dialects.ListFilter{State: st, Limit: 100})
		return len(rows), err
	}
	want := map[dialects.State]int{dialects.StatePublished: 2, dialects.StateDead: 2, dialects.StatePending: 9}
	for st, n := range want {
		got, err := count(st)
		if err != nil {
			return err
		}
		if got != n {
			return fmt.Errorf("fill left %d %s rows, want %d", got, st, n)
		}
	}
	blockers, err := d.Blockers(ctx, db, time.Now(), 10)
	if err != nil {
		return err
	}
	if len(blockers) != 3 {
		return fmt.Errorf("fill left %d blocked aggregates, want 3 (fill-retry, fill-dead, fill-skip): %+v", len(blockers), blockers)
	}
	return nil
}
