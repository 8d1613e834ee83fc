package e2e

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jitoutbox/jitoutbox/internal/e2e/relayproc"
	"github.com/jitoutbox/jitoutbox/internal/testnats"
	"github.com/jitoutbox/jitoutbox/relay"
	"github.com/jitoutbox/jitoutbox/relay/natspub"
	"github.com/jitoutbox/jitoutbox/txoutbox"
)

// cleanLease is the relays' lease in TestRebalanceOneFourOne. Relays there
// join and leave cleanly, so the lease (SQLite's ownership) only has to
// outlast a slow renewal: with childLease (3 s, for the failover tests) a
// renewal delayed past it on a loaded machine can let another relay take a
// partition mid-batch, and the duplicates that causes are not the clean
// moves this test checks.
const cleanLease = 15 * time.Second

// joinBound is how soon a joining relay must own a share in
// TestRebalanceOneFourOne: generous against the ~0.05-0.5 s measured
// (BenchmarkJoin), far below a rebalance interval (30 s). A SQLite joiner
// once took over 5 s in .ci/run, with the machine loaded by the packages
// running beside it and a MariaDB server going down.
const joinBound = 10 * time.Second

// TestRebalanceOneFourOne: one relay in the test process owns every
// partition; a relay process and two more relays in the test process join
// one by one and each owns a share within joinBound, then they leave one
// by one (the process with SIGTERM), while a producer commits events all
// along. The first relay rebalances only every minute and the process
// every 30 s (the default): a joiner gets its share because the relays
// already there see it join at once, the first one alone included. (The
// later joiners rebalance every 300 ms: a relay that leaves is seen at once
// only by its watcher, which gives the surplus it takes to the relays
// below their share at their next rebalance.)
// Every event is published (the stream keeps every copy: its duplicate
// window is tiny), in order per aggregate, and the first relay owns
// everything again at the end. Duplicates are counted and reported (see
// the assertion at the end).
func TestRebalanceOneFourOne(t *testing.T) {
	partDBs(t, true, func(t *testing.T, pd partDB) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		if err := pd.d.Migrate(ctx, pd.db); err != nil {
			t.Fatal(err)
		}
		parts, err := pd.d.Partitions(ctx, pd.db)
		if err != nil {
			t.Fatal(err)
		}
		srv := testnats.Server(t)
		nc := testnats.Connect(t, srv.URL)
		js, err := jetstream.New(nc)
		if err != nil {
			t.Fatal(err)
		}
		stream, prefix := partStream(t, js)
		rec := record(t, ctx, stream)
		pub, err := natspub.NewJetStream(js, natspub.WithSubjectPrefix(prefix), natspub.WithoutDurabilityCheck())
		if err != nil {
			t.Fatal(err)
		}
		// The in-process relays' warnings and errors: a duplicate is a
		// failure of this test only if no relay met trouble (a publish
		// timed out on a loaded machine and was retried, a database error)
		// that at-least-once delivery answers with a second copy.
		relayLog := relayproc.NewLog()
		pubs := &publishLog{by: map[string][]string{}}
		logger := slog.New(slog.NewTextHandler(relayLog, &slog.HandlerOptions{Level: slog.LevelWarn}))
		relays := []*relay.Relay{}
		a, err := relay.New(pd.db, pd.d, pub, relay.Config{Owner: "first", PollInterval: 200 * time.Millisecond,
			RebalanceInterval: time.Minute, LeaseDuration: cleanLease, PublishTimeout: 2 * time.Second,
			Logger: logger, Hooks: pubs.hooks("first")})
		if err != nil {
			t.Fatal(err)
		}
		relays = append(relays, a)
		ob, err := txoutbox.New(pd.db, pd.d, txoutbox.WithRelay(a))
		if err != nil {
			t.Fatal(err)
		}
		var rwg sync.WaitGroup
		defer rwg.Wait()
		actx, stopA := context.WithCancel(ctx)
		defer stopA()
		rwg.Add(1)
		go func() {
			defer rwg.Done()
			if err := a.Run(actx); err != nil {
				t.Errorf("first relay: %v", err)
			}
		}()
		all := func(o []int) bool { return len(o) == parts }
		pd.waitOwned(t, "first", 20*time.Second, "owning every partition", all)

		led := newLedger()
		pctx, stopProducer := context.WithCancel(ctx)
		var pwg sync.WaitGroup
		pwg.Add(1)
		go func() {
			defer pwg.Done()
			led.produce(pctx, t, ob, aggsByPartition(parts, "agg"), 5*time.Millisecond)
		}()
		defer func() { stopProducer(); pwg.Wait() }()

		// 1 -> 4: a relay process, then two relays in this process, join;
		// each gets a share at once.
		join := func(name string) {
			start := time.Now()
			got := pd.waitOwned(t, name, joinBound, "owning a share", func(o []int) bool { return len(o) > 0 })
			t.Logf("%s: %s joined, owns %d partitions after %v; first owns %d", pd.name, name, len(got),
				time.Since(start).Round(time.Millisecond), len(pd.owned(t, "first")))
			time.Sleep(500 * time.Millisecond)
		}
		args := append(childArgs(pd, srv.URL, prefix, "joiner2"), "-poll", "200ms", "-lease", cleanLease.String()) // the last of a flag wins
		proc := relayproc.Start(t, relayBin, args...)
		join("joiner2")
		var stops []func()
		for i := range 2 {
			name := fmt.Sprintf("joiner%d", i)
			r, err := relay.New(pd.db, pd.d, pub, relay.Config{Owner: name, PollInterval: 200 * time.Millisecond,
				RebalanceInterval: 300 * time.Millisecond, LeaseDuration: cleanLease, PublishTimeout: 2 * time.Second,
				Logger: logger, Hooks: pubs.hooks(name)})
			if err != nil {
				t.Fatal(err)
			}
			relays = append(relays, r)
			jctx, stop := context.WithCancel(ctx)
			done := make(chan struct{})
			go func() {
				defer close(done)
				if err := r.Run(jctx); err != nil {
					t.Errorf("%s: %v", name, err)
				}
			}()
			stops = append(stops, func() { stop(); <-done })
			defer stop()
			join(name)
		}
		// 4 -> 1: each leaves cleanly (the process with SIGTERM); its
		// partitions move at once.
		time.Sleep(500 * time.Millisecond)
		if err := proc.Stop(15 * time.Second); err != nil {
			t.Fatalf("joiner2 did not stop cleanly: %v", err)
		}
		for i := len(stops) - 1; i >= 0; i-- {
			time.Sleep(500 * time.Millisecond)
			stops[i]()
		}
		pd.waitOwned(t, "first", 20*time.Second, "owning every partition again", all)

		stopProducer()
		pwg.Wait()
		rec.await(t, 30*time.Second, led.ids())
		time.Sleep(500 * time.Millisecond) // a late copy would arrive now
		stopA()
		rwg.Wait()
		if dups := rec.check(t, led); dups != 0 {
			trouble := 0
			for _, m := range []string{"broker outage", "database error", "partitions lost before marking", "ownership lost"} {
				trouble += relayLog.Count(m) + proc.Log.Count(m)
			}
			for _, r := range relays {
				st, err := r.Stats(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				trouble += int(st.Retried)
			}
			if trouble == 0 {
				// Relays only joined and left cleanly and none met trouble:
				// every move happens between batches, a stopping relay
				// finishes its Publish and marks it, so nothing is sent twice.
				t.Errorf("%d events published more than once although relays only joined and left cleanly; who published them in this process (the relay process's copies are not listed): %s",
					dups, pubs.duplicates(rec))
			} else {
				t.Logf("%d events published more than once after %d retried publishes or logged troubles (at-least-once on a loaded machine):\n%s",
					dups, trouble, relayLog.String())
			}
		}
		t.Logf("%s: %d events through 1 -> 4 -> 1 relays", pd.name, len(led.ids()))
	})
}

// publishLog records which in-process relay published each event, and
// from which lane, to say where a duplicate came from.
type publishLog struct {
	mu sync.Mutex
	by map[string][]string // event id -> "owner/lane" of each publish
}

type laneKey struct{}

// hooks returns relay hooks that record owner's publishes.
func (p *publishLog) hooks(owner string) relay.Hooks { return &publishHooks{p: p, owner: owner} }

// duplicates lists the recorded publishers of the events rec received more
// than once.
func (p *publishLog) duplicates(rec *recorder) string {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	p.mu.Lock()
	defer p.mu.Unlock()
	var b strings.Builder
	for id, n := range rec.count {
		if n > 1 {
			fmt.Fprintf(&b, "\n  %s x%d: %v", id, n, p.by[id])
		}
	}
	return b.String()
}

type publishHooks struct {
	p     *publishLog
	owner string
}

func (h *publishHooks) BatchStart(ctx context.Context, info relay.BatchStartInfo) context.Context {
	lane := "read"
	if info.FastPath {
		lane = "hand-over"
	}
	return context.WithValue(ctx, laneKey{}, lane)
}

func (h *publishHooks) BatchEnd(context.Context, relay.BatchEndInfo) {}

func (h *publishHooks) Published(ctx context.Context, msg relay.Message, _ time.Duration) {
	lane, _ := ctx.Value(laneKey{}).(string)
	h.p.mu.Lock()
	h.p.by[msg.ID] = append(h.p.by[msg.ID], h.owner+"/"+lane)
	h.p.mu.Unlock()
}
