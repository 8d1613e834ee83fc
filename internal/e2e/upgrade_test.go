package e2e

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/internal/e2e/relayproc"
	"github.com/jitoutbox/jitoutbox/internal/testnats"
	"github.com/jitoutbox/jitoutbox/relay"
	"github.com/jitoutbox/jitoutbox/relay/natspub"
	"github.com/jitoutbox/jitoutbox/txoutbox"
)

// TestUpgradeWithPreviousRelease is the expand-then-contract rule as a test:
// the schema migrations of this tree must not break the previous release's
// writers and relays, which keep running while Migrate runs and while the
// services and relays roll over to this release (README, "Upgrading").
//
// On PostgreSQL, MariaDB and SQLite (one file shared by every process), the
// previous release (previousRelease, built from this repository's history)
// creates the table with its own Migrate and leaves rows in every state
// through its own relay: published, retrying (a retry block), dead (a dead
// block, with pending rows held behind it) and pending, some time-critical.
// Then, all at once: two relay processes of the previous release and two
// of its writers run; this tree's Migrate runs under them; a relay process
// and an in-process relay of this tree join, and two writers of this tree
// commit (hand-over lane included). Once the writers are done, this tree
// requeues one dead row and skips the other.
//
// It asserts that every committed event (but the skipped one) reaches the
// one JetStream stream, each aggregate's in commit order, none twice (the
// stream dedups by event id), that no row is left pending or blocked, that
// every relay published (the old ones included, on the migrated table),
// that no old relay logged an error and that every process, old writers
// included, exited cleanly. A migration that breaks the previous release's
// writers (their INSERT) or relays (their reads, marks, ownership) makes it
// fail: that is what it is for, and why a schema change is an expand whose
// contract waits one release.
func TestUpgradeWithPreviousRelease(t *testing.T) {
	old := buildPreviousRelease(t)
	partDBs(t, true, func(t *testing.T, pd partDB) {
		start := time.Now()
		upgradeScenario(t, pd, old)
		t.Logf("%s: upgrade scenario in %v", pd.name, time.Since(start).Round(time.Millisecond))
	})
}

func upgradeScenario(t *testing.T, pd partDB, old oldRelease) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv := testnats.Server(t)
	nc := testnats.Connect(t, srv.URL)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	// The default duplicate window (two minutes): the stream drops a
	// republished event, so every event must be in it exactly once.
	stream, prefix := testnats.Stream(t, js)
	rec := record(t, ctx, stream)
	led := newLedger()
	oldWriter := func(args ...string) *relayproc.Process {
		return relayproc.Start(t, old.writer, append(pd.relayArgs(), args...)...)
	}

	// 1. The previous release creates the table and fills it.
	fill := oldWriter("-nats", srv.URL, "-subject-prefix", prefix, "fill")
	printed(t, "fill", fill, 30*time.Second, led)
	skipped := led.byNumber("fill-skip", 1)
	if skipped == "" {
		t.Fatal("the old writer's fill printed no event fill-skip 1")
	}
	led.mu.Lock()
	delete(led.events, skipped) // skipped below: never published
	led.mu.Unlock()

	// 2. Its relays and writers run, and this tree's Migrate runs under them.
	parts := dialects.DefaultPartitions
	args := func(owner string) []string {
		return append(childArgs(pd, srv.URL, prefix, owner), "-poll", "200ms", "-rebalance", "500ms", "-log-level", "debug")
	}
	relays := map[string]*relayproc.Process{
		"old1": relayproc.Start(t, old.relay, args("old1")...),
		"old2": relayproc.Start(t, old.relay, args("old2")...),
	}
	// Also when a step below fails the test: an old relay's error (SQL the
	// migrated table no longer answers) is the likely cause.
	defer func() {
		for owner, p := range relays {
			if _, errs := relayLog(p.Log.String()); len(errs) > 0 {
				t.Errorf("relay %s logged %d errors, e.g. %s", owner, len(errs), errs[0])
			}
		}
	}()
	for _, owner := range []string{"old1", "old2"} {
		pd.waitOwned(t, owner, 20*time.Second, "a share of the partitions", func(p []int) bool { return len(p) > 0 })
	}
	aggs := func(prefix string, of, n int) string {
		var out []string
		for p, agg := range aggsByPartition(parts, prefix) {
			if p%of == n {
				out = append(out, agg)
			}
		}
		return strings.Join(out, ",")
	}
	writers := map[string]*relayproc.Process{}
	for i := range 2 {
		name := "oldw" + strconv.Itoa(i)
		writers[name] = oldWriter("-aggs", aggs(name+"-", 2, i), "-txs", "64", "-period", "30ms", "write")
	}
	if err := pd.d.Migrate(ctx, pd.db); err != nil {
		t.Fatalf("Migrate under the previous release: %v", err)
	}

	// 3. This tree's relays join: a process and one in the test.
	relays["new1"] = relayproc.Start(t, relayBin, args("new1")...)
	pub, err := natspub.NewJetStream(js, natspub.WithSubjectPrefix(prefix), natspub.WithoutDurabilityCheck())
	if err != nil {
		t.Fatal(err)
	}
	plog := &publishLog{by: map[string][]string{}}
	in, err := relay.New(pd.db, pd.d, pub, relay.Config{Owner: "new2", PollInterval: 200 * time.Millisecond,
		RebalanceInterval: 500 * time.Millisecond, LeaseDuration: childLease, PublishTimeout: 2 * time.Second,
		Hooks: plog.hooks("new2"), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	rctx, stopIn := context.WithCancel(ctx)
	ran := make(chan struct{})
	var runErr error
	go func() {
		defer close(ran)
		runErr = in.Run(rctx)
	}()
	defer func() { stopIn(); <-ran }()
	for _, owner := range []string{"old1", "old2", "new1", "new2"} {
		pd.waitOwned(t, owner, 20*time.Second, "a share of the partitions", func(p []int) bool { return len(p) > 0 })
	}

	// 4. This tree's writers commit on every partition, so every relay has
	// something to publish, while the old writers may still be at it.
	ob, err := txoutbox.New(pd.db, pd.d, txoutbox.WithRelay(in))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 2 {
		wctx, stop := context.WithTimeout(ctx, 2*time.Second)
		defer stop()
		wg.Go(func() {
			led.produce(wctx, t, ob, strings.Split(aggs("neww"+strconv.Itoa(i)+"-", 2, i), ","), 30*time.Millisecond)
		})
	}
	wg.Wait()
	for name, p := range writers {
		printed(t, name, p, 30*time.Second, led)
	}

	// 5. This tree's operator calls: one dead row requeued, one skipped.
	if n, err := pd.d.Requeue(ctx, pd.db, dialects.RequeueFilter{AggregateType: "order", AggregateID: "fill-dead"}, time.Now()); err != nil || n != 1 {
		t.Fatalf("Requeue fill-dead: %d rows, %v; want 1", n, err)
	}
	if n, err := pd.d.Skip(ctx, pd.db, dialects.RequeueFilter{AggregateType: "order", AggregateID: "fill-skip"}); err != nil || n != 1 {
		t.Fatalf("Skip fill-skip: %d rows, %v; want 1", n, err)
	}

	// 6. Everything arrives, once, in order.
	rec.await(t, 30*time.Second, led.ids())
	if dups := rec.check(t, led); dups != 0 {
		t.Errorf("%d events in the stream more than once (duplicate window: two minutes):%s", dups, plog.duplicates(rec))
	}
	rec.mu.Lock()
	if rec.count[skipped] != 0 {
		t.Errorf("the skipped event %s was published", skipped)
	}
	rec.mu.Unlock()

	// 7. Every relay took part, cleanly.
	stopIn()
	<-ran
	if runErr != nil {
		t.Errorf("in-process relay: %v", runErr)
	}
	plog.mu.Lock()
	byRelay := map[string]int{"new2": len(plog.by)}
	plog.mu.Unlock()
	if byRelay["new2"] == 0 {
		t.Error("relay new2 (in the test) published nothing")
	}
	for owner, p := range relays {
		if err := p.Stop(10 * time.Second); err != nil {
			t.Errorf("relay %s: %v", owner, err)
		}
		published, _ := relayLog(p.Log.String())
		byRelay[owner] = published
		if published == 0 {
			t.Errorf("relay %s published nothing", owner)
		}
	}
	// After the relays' clean stops: a publish is marked after the stream
	// has the event.
	checkRows(t, ctx, pd, skipped)
	t.Logf("%s: %d events from two releases' writers through two releases' relays; published by relay: %v",
		pd.name, len(led.ids()), byRelay)
}

// printed waits up to limit for a writer of the previous release to exit,
// fails the test unless it exited cleanly, and records the events it
// printed ("committed <id> <aggregate> <n>") in led.
func printed(t *testing.T, name string, p *relayproc.Process, limit time.Duration, led *ledger) {
	t.Helper()
	select {
	case <-p.Done():
	case <-time.After(limit):
		t.Fatalf("old writer %s still running after %v", name, limit)
	}
	if err := p.Err(); err != nil {
		t.Fatalf("old writer %s: %v\n%s", name, err, p.Log.String())
	}
	n := 0
	led.mu.Lock()
	defer led.mu.Unlock()
	for _, line := range strings.Split(p.Log.String(), "\n") {
		f := strings.Fields(line)
		if len(f) != 4 || f[0] != "committed" {
			continue
		}
		num, err := strconv.ParseInt(f[3], 10, 64)
		if err != nil {
			t.Fatalf("old writer %s: %q: %v", name, line, err)
		}
		led.events[f[1]] = body{Agg: f[2], N: num}
		led.next[f[2]] = max(led.next[f[2]], num)
		n++
	}
	if n == 0 {
		t.Fatalf("old writer %s committed nothing:\n%s", name, p.Log.String())
	}
}

// byNumber returns the id of aggregate agg's event number n.
func (l *ledger) byNumber(agg string, n int64) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	for id, b := range l.events {
		if b.Agg == agg && b.N == n {
			return id
		}
	}
	return ""
}

// checkRows checks, with this tree's dialect, that no row is left pending
// or blocked and that the only dead row is the skipped one.
func checkRows(t *testing.T, ctx context.Context, pd partDB, skipped string) {
	t.Helper()
	pending, err := pd.d.List(ctx, pd.db, dialects.ListFilter{State: dialects.StatePending, Limit: 10})
	if err != nil || len(pending) != 0 {
		t.Errorf("pending rows left: %d (%v)", len(pending), err)
	}
	dead, err := pd.d.List(ctx, pd.db, dialects.ListFilter{State: dialects.StateDead, Limit: 10})
	if err != nil || len(dead) != 1 || dead[0].ID != skipped {
		t.Errorf("dead rows: %d (%v), want only the skipped %s", len(dead), err, skipped)
	}
	blockers, err := pd.d.Blockers(ctx, pd.db, time.Now(), 10)
	if err != nil || len(blockers) != 0 {
		t.Errorf("blocked aggregates left: %+v (%v)", blockers, err)
	}
}

// relayLog reads a relay process's JSON log: the events its batches
// published (-log-level debug) and its error lines.
func relayLog(log string) (published int, errs []string) {
	for _, line := range strings.Split(log, "\n") {
		var rec struct {
			Level     string `json:"level"`
			Msg       string `json:"msg"`
			Published int    `json:"published"`
		}
		if json.Unmarshal([]byte(line), &rec) != nil {
			continue
		}
		if rec.Msg == "batch done" {
			published += rec.Published
		}
		if rec.Level == slog.LevelError.String() {
			errs = append(errs, line)
		}
	}
	return published, errs
}
