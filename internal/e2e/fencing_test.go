package e2e

import (
	"context"
	"database/sql"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/internal/testnats"
	"github.com/jitoutbox/jitoutbox/relay"
	"github.com/jitoutbox/jitoutbox/relay/natspub"
	"github.com/jitoutbox/jitoutbox/txoutbox"
)

// gatePublisher blocks the first Publish after arm until release is
// closed, then publishes as usual: a relay paused in the middle of a batch.
type gatePublisher struct {
	relay.Publisher
	armed   atomic.Bool
	entered chan struct{}
	release chan struct{}
}

func (g *gatePublisher) Publish(ctx context.Context, batch []relay.Message, errs []error) {
	if g.armed.CompareAndSwap(true, false) {
		close(g.entered)
		<-g.release
	}
	g.Publisher.Publish(ctx, batch, errs)
}

// markSpy records what every Mark of a relay's dialect changed.
type markSpy struct {
	dialects.Dialect
	mu    sync.Mutex
	marks []markCall
	added chan struct{} // closed and replaced on every Mark
}

type markCall struct {
	token   string
	seqs    int
	changed int64
	err     error
}

func (m *markSpy) Mark(ctx context.Context, db *sql.DB, mk dialects.Mark) (int64, error) {
	n, err := m.Dialect.Mark(ctx, db, mk)
	m.mu.Lock()
	m.marks = append(m.marks, markCall{token: mk.Token, seqs: len(mk.Seqs), changed: n, err: err})
	close(m.added)
	m.added = make(chan struct{})
	m.mu.Unlock()
	return n, err
}

// byToken returns the Marks sent with token and a channel closed on the
// next Mark.
func (m *markSpy) byToken(token string) ([]markCall, <-chan struct{}) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var calls []markCall
	for _, c := range m.marks {
		if c.token == token {
			calls = append(calls, c)
		}
	}
	return calls, m.added
}

// TestPausedRelayIsFenced: a relay owning every partition is paused in the
// middle of a batch (its publisher blocks) and its session connection is
// killed from the server side (pg_terminate_backend; MariaDB KILL). Its
// successor takes the partitions and publishes everything, the paused
// batch included. When the paused relay resumes, it publishes its stale
// batch (copies in the stream) and marks it: those marks change nothing,
// and first deliveries stay in order per aggregate.
func TestPausedRelayIsFenced(t *testing.T) {
	partDBs(t, false, func(t *testing.T, pd partDB) {
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
		quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
		gate := &gatePublisher{Publisher: pub, entered: make(chan struct{}), release: make(chan struct{})}
		released := false
		defer func() {
			if !released {
				close(gate.release)
			}
		}()
		spy := &markSpy{Dialect: pd.d, added: make(chan struct{})}
		paused, err := relay.New(pd.openAs(t, "paused"), spy, gate, relay.Config{Owner: "paused",
			PollInterval: 200 * time.Millisecond, RebalanceInterval: time.Second,
			PublishTimeout: 30 * time.Second, LeaseDuration: time.Minute, Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		successor, err := relay.New(pd.db, pd.d, pub, relay.Config{Owner: "successor",
			PollInterval: 200 * time.Millisecond, RebalanceInterval: time.Second, Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		ob, err := txoutbox.New(pd.db, pd.d, txoutbox.WithRelay(successor))
		if err != nil {
			t.Fatal(err)
		}
		var rwg sync.WaitGroup
		defer rwg.Wait()
		rctx, stopRelays := context.WithCancel(ctx)
		defer stopRelays()
		rwg.Add(1)
		go func() {
			defer rwg.Done()
			if err := paused.Run(rctx); err != nil {
				t.Errorf("paused relay: %v", err)
			}
		}()
		pd.waitOwned(t, "paused", 20*time.Second, "owning every partition", func(o []int) bool { return len(o) == parts })
		var oldToken string
		if err := pd.db.QueryRowContext(ctx, "SELECT owner FROM "+pd.d.Table()+"_partitions WHERE part = 0").Scan(&oldToken); err != nil {
			t.Fatal(err)
		}
		rwg.Add(1)
		go func() {
			defer rwg.Done()
			if err := successor.Run(rctx); err != nil {
				t.Errorf("successor relay: %v", err)
			}
		}()
		waitRelayRow(t, pd, "successor")

		led := newLedger()
		pctx, stopProducer := context.WithCancel(ctx)
		var pwg sync.WaitGroup
		pwg.Add(1)
		go func() {
			defer pwg.Done()
			led.produce(pctx, t, ob, aggsByPartition(parts, "agg"), 10*time.Millisecond)
		}()
		defer func() { stopProducer(); pwg.Wait() }()

		// Pause the owner in the middle of a batch, then kill its session.
		gate.armed.Store(true)
		select {
		case <-gate.entered:
		case <-time.After(20 * time.Second):
			t.Fatal("the owning relay published no batch")
		}
		killed := time.Now()
		if n := pd.killSession(t, "paused"); n == 0 {
			t.Fatal("no session connection of the paused relay was found to kill")
		}
		pd.waitOwned(t, "successor", 10*time.Second, "owning every partition", func(o []int) bool { return len(o) == parts })
		t.Logf("%s: session killed -> successor owns all %d partitions in %v", pd.name, parts, time.Since(killed).Round(time.Millisecond))
		// Everything committed so far, the paused batch included, arrives.
		rec.await(t, 15*time.Second, led.ids())
		t.Logf("%s: everything committed until then published %v after the kill", pd.name, time.Since(killed).Round(time.Millisecond))

		// Resume: the stale batch is published again and marked, fenced.
		// Past the stream's duplicate window, its copies reach the stream,
		// after the successor's first deliveries.
		time.Sleep(300 * time.Millisecond)
		before, _ := spy.byToken(oldToken)
		close(gate.release)
		released = true
		deadline := time.After(20 * time.Second)
		for {
			calls, next := spy.byToken(oldToken)
			if len(calls) > len(before) {
				for _, c := range calls[len(before):] {
					if c.changed != 0 {
						t.Errorf("a mark of %d rows by the paused relay's old session changed %d rows (err %v): not fenced", c.seqs, c.changed, c.err)
					}
				}
				t.Logf("%s: stale marks after resuming: %+v", pd.name, calls[len(before):])
				break
			}
			select {
			case <-next:
			case <-deadline:
				t.Fatal("the resumed relay never marked its stale batch")
			}
		}

		stopProducer()
		pwg.Wait()
		rec.await(t, 30*time.Second, led.ids())
		stopRelays()
		rwg.Wait()
		dups := rec.check(t, led)
		t.Logf("%s: %d events, %d copies in the stream (the stale batch's publish)", pd.name, len(led.ids()), dups)
	})
}
