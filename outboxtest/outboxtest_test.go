package outboxtest_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/internal/testdb"
	"github.com/jitoutbox/jitoutbox/outboxtest"
	"github.com/jitoutbox/jitoutbox/relay"
	"github.com/jitoutbox/jitoutbox/txoutbox"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func msg(id string) relay.Message {
	return relay.Message{ID: id, AggregateType: "order", AggregateID: id, EventType: "x", Payload: []byte(id)}
}

func TestRecorderFailures(t *testing.T) {
	rec := outboxtest.NewRecorder()
	rec.FailPermanently("p")
	rec.FailRetryably(2, "r")
	ctx := t.Context()
	publish := func(ids ...string) []error {
		batch := make([]relay.Message, len(ids))
		for i, id := range ids {
			batch[i] = msg(id)
		}
		errs := make([]error, len(ids))
		rec.Publish(ctx, batch, errs)
		return errs
	}
	errs := publish("ok", "p", "r")
	if errs[0] != nil || !relay.IsPermanent(errs[1]) || !errors.Is(errs[1], outboxtest.ErrInjected) ||
		errs[2] == nil || relay.IsPermanent(errs[2]) || !errors.Is(errs[2], outboxtest.ErrInjected) {
		t.Fatalf("errs = %v", errs)
	}
	if errs := publish("r"); errs[0] == nil {
		t.Fatal("second attempt of r succeeded; want 2 failures")
	}
	if errs := publish("r", "p"); errs[0] != nil || errs[1] == nil {
		t.Fatalf("third attempt: %v", errs)
	}
	if got := rec.IDs(); len(got) != 2 || got[0] != "ok" || got[1] != "r" {
		t.Fatalf("IDs = %q", got)
	}
	if rec.Attempts("r") != 3 || rec.Attempts("p") != 2 || rec.Attempts("ok") != 1 {
		t.Fatalf("attempts r=%d p=%d ok=%d", rec.Attempts("r"), rec.Attempts("p"), rec.Attempts("ok"))
	}
	if total, perm := rec.Failures(); total != 4 || perm != 2 {
		t.Fatalf("Failures = %d, %d", total, perm)
	}
	rec.Heal("p")
	if errs := publish("p"); errs[0] != nil {
		t.Fatalf("healed p failed: %v", errs[0])
	}
	m, ok := rec.Message("p")
	if !ok || string(m.Payload) != "p" {
		t.Fatalf("Message(p) = %+v, %v", m, ok)
	}

	cctx, cancel := context.WithCancel(ctx)
	cancel()
	errs = make([]error, 1)
	rec.Publish(cctx, []relay.Message{msg("late")}, errs)
	if !errors.Is(errs[0], context.Canceled) {
		t.Fatalf("publish on a cancelled ctx: %v", errs[0])
	}
	rec.Reset()
	if len(rec.Messages()) != 0 || rec.Attempts("r") != 0 {
		t.Fatal("Reset kept messages")
	}
}

func TestAwaitPublishedWakesOnPublish(t *testing.T) {
	rec := outboxtest.NewRecorder()
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Add(1)
	go func() {
		defer wg.Done()
		for _, id := range []string{"a", "b", "c"} {
			rec.Publish(context.Background(), []relay.Message{msg(id)}, make([]error, 1))
		}
	}()
	msgs := outboxtest.WaitPublished(t.Context(), t, rec, "c", "a")
	if len(msgs) != 2 || msgs[0].ID != "c" || msgs[1].ID != "a" {
		t.Fatalf("WaitPublished = %+v", msgs)
	}
}

func TestAwaitPublishedTimesOut(t *testing.T) {
	rec := outboxtest.NewRecorder()
	rec.Publish(t.Context(), []relay.Message{msg("a")}, make([]error, 1))
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	_, err := outboxtest.AwaitPublished(ctx, rec, "a", "missing")
	if !errors.Is(err, outboxtest.ErrNotPublished) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("AwaitPublished = %v", err)
	}
}

func commit(t testing.TB, ob *txoutbox.Outbox, critical bool, evs ...txoutbox.Event) []string {
	t.Helper()
	var opts []txoutbox.TxOption
	if critical {
		opts = append(opts, txoutbox.TimeCritical())
	}
	tx, err := ob.Begin(t.Context(), nil, opts...)
	if err != nil {
		t.Fatalf("begin: %v", err)
	}
	var ids []string
	for _, ev := range evs {
		id, err := tx.Add(ev)
		if err != nil {
			t.Fatalf("add: %v", err)
		}
		ids = append(ids, id)
	}
	if err := tx.Commit(); err != nil {
		t.Fatalf("commit: %v", err)
	}
	return ids
}

func order(id, typ string) txoutbox.Event {
	return txoutbox.Event{AggregateType: "order", AggregateID: id, EventType: typ, Payload: []byte(`{"id":"` + id + `"}`)}
}

// TestHarness runs the harness against every database: events are
// published without sleeping, failures are injected, and WaitDrained returns
// only once nothing is pending.
func TestHarness(t *testing.T) {
	for _, tgt := range testdb.Targets() {
		t.Run(tgt.Name, func(t *testing.T) {
			db, _ := tgt.Open(t)
			d := testdb.NewDialect(t, tgt.Dialect)
			if err := d.Migrate(t.Context(), db); err != nil {
				t.Fatalf("migrate: %v", err)
			}
			h := outboxtest.Start(t, db, d, outboxtest.Options{Config: relay.Config{MaxAttempts: 3}})
			ob := h.Outbox()
			ctx := t.Context()

			ids := commit(t, ob, true, order("1", "order.created"), order("1", "order.paid"), order("2", "order.created"))
			msgs := h.WaitPublished(ctx, ids...)
			if msgs[0].EventType != "order.created" || msgs[1].EventType != "order.paid" || !msgs[0].Critical {
				t.Fatalf("messages = %+v", msgs)
			}
			got := h.Recorder.IDs()
			if len(got) != 3 || indexOf(got, ids[0]) > indexOf(got, ids[1]) {
				t.Fatalf("aggregate order broken: %q (ids %q)", got, ids)
			}

			// An ordinary (lazy) commit: the dead one is dead-lettered, the
			// retried one gets through on its third attempt.
			tx, err := ob.Begin(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			dead, _ := tx.Add(order("3", "order.created"))
			retried, _ := tx.Add(order("4", "order.created"))
			h.Recorder.FailPermanently(dead)
			h.Recorder.FailRetryably(2, retried)
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
			h.WaitDrained(ctx)
			s, err := d.Stats(ctx, db)
			if err != nil || s.Pending != 0 || s.Dead != 1 || s.Published != 4 {
				t.Fatalf("stats after drain = %+v, %v", s, err)
			}
			if _, ok := h.Recorder.Message(dead); ok {
				t.Fatal("dead event recorded as published")
			}
			if m, ok := h.Recorder.Message(retried); !ok || m.Attempt != 3 || h.Recorder.Attempts(retried) != 3 {
				t.Fatalf("retried event: %+v %v attempts %d", m, ok, h.Recorder.Attempts(retried))
			}
			rs, err := h.Relay.Stats(ctx)
			if err != nil || rs.DeadLettered != 1 || rs.Retried != 2 {
				t.Fatalf("relay stats = %+v, %v", rs, err)
			}
		})
	}
}

// TestHarnessDeadBlocks: a dead event blocks the later events of its
// aggregate; WaitDrained does not wait for them, and they flow after a skip;
// a requeued event is published before the events that waited behind it.
func TestHarnessDeadBlocks(t *testing.T) {
	for _, tgt := range testdb.Targets() {
		t.Run(tgt.Name, func(t *testing.T) {
			db, _ := tgt.Open(t)
			d := testdb.NewDialect(t, tgt.Dialect)
			ctx := t.Context()
			if err := d.Migrate(ctx, db); err != nil {
				t.Fatalf("migrate: %v", err)
			}
			h := outboxtest.Start(t, db, d, outboxtest.Options{})
			ob := h.Outbox()

			tx, err := ob.Begin(ctx, nil, txoutbox.TimeCritical())
			if err != nil {
				t.Fatal(err)
			}
			poison, _ := tx.Add(order("5", "order.created"))
			held, _ := tx.Add(order("5", "order.paid"))
			other, _ := tx.Add(order("6", "order.created"))
			h.Recorder.FailPermanently(poison)
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
			h.WaitPublished(ctx, other)
			h.WaitDrained(ctx) // returns although order 5's later event is pending
			s, err := d.Stats(ctx, db)
			if err != nil || s.Pending != 1 || s.Dead != 1 || s.Published != 1 {
				t.Fatalf("stats after drain = %+v, %v; want the held event pending", s, err)
			}
			if _, ok := h.Recorder.Message(held); ok {
				t.Fatal("an event behind a dead one of its aggregate was published")
			}
			if n, err := d.Skip(ctx, db, dialects.RequeueFilter{AggregateType: "order", AggregateID: "5"}); err != nil || n != 1 {
				t.Fatalf("skip = %d, %v", n, err)
			}
			h.WaitPublished(ctx, held)
			h.WaitDrained(ctx)

			// Requeue: the dead event comes first, then the one behind it.
			tx, err = ob.Begin(ctx, nil, txoutbox.TimeCritical())
			if err != nil {
				t.Fatal(err)
			}
			first, _ := tx.Add(order("7", "order.created"))
			second, _ := tx.Add(order("7", "order.paid"))
			h.Recorder.FailPermanently(first)
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
			h.WaitDrained(ctx)
			if _, ok := h.Recorder.Message(second); ok {
				t.Fatal("an event behind a dead one of its aggregate was published")
			}
			h.Recorder.Heal(first)
			if n, err := d.Requeue(ctx, db, dialects.RequeueFilter{IDs: []string{first}}, time.Now()); err != nil || n != 1 {
				t.Fatalf("requeue = %d, %v", n, err)
			}
			h.WaitPublished(ctx, first, second)
			got := h.Recorder.IDs()
			if indexOf(got, first) > indexOf(got, second) {
				t.Fatalf("requeued event published after the one behind it: %q", got)
			}
			h.WaitDrained(ctx)
			if s, err := d.Stats(ctx, db); err != nil || s.Pending != 0 || s.Dead != 1 {
				t.Fatalf("stats at the end = %+v, %v", s, err)
			}
		})
	}
}

// TestAwaitDrainedCountsBackoff: a row backing off after a retryable
// failure can still be published, so the table is not drained.
func TestAwaitDrainedCountsBackoff(t *testing.T) {
	db, _ := testdb.SQLite(t)
	d := testdb.NewDialect(t, "sqlite")
	ctx := t.Context()
	if err := d.Migrate(ctx, db); err != nil {
		t.Fatal(err)
	}
	h := outboxtest.Start(t, db, d, outboxtest.Options{Config: relay.Config{Backoff: func(int) time.Duration { return time.Hour }}})
	tx, err := h.Outbox().Begin(ctx, nil, txoutbox.TimeCritical())
	if err != nil {
		t.Fatal(err)
	}
	id, _ := tx.Add(order("8", "order.created"))
	h.Recorder.FailRetryably(1, id)
	changed := h.Recorder.Changed()
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	for h.Recorder.Attempts(id) == 0 {
		select {
		case <-changed:
			changed = h.Recorder.Changed()
		case <-time.After(10 * time.Second):
			t.Fatal("no attempt in 10s")
		}
	}
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if err := outboxtest.AwaitDrained(short, db, d); !errors.Is(err, outboxtest.ErrNotDrained) {
		t.Fatalf("AwaitDrained with a row backing off = %v, want ErrNotDrained", err)
	}
}

func indexOf(ss []string, s string) int {
	for i, x := range ss {
		if x == s {
			return i
		}
	}
	return -1
}

// TestWaitDrained checks the table-polling wait with no harness: it fails
// while a row is pending and returns once a relay has published it.
func TestWaitDrained(t *testing.T) {
	db, _ := testdb.SQLite(t)
	d := testdb.NewDialect(t, "sqlite")
	ctx := t.Context()
	if err := d.Migrate(ctx, db); err != nil {
		t.Fatal(err)
	}
	ob, err := txoutbox.New(db, d)
	if err != nil {
		t.Fatal(err)
	}
	commit(t, ob, false, order("1", "order.created"))
	short, cancel := context.WithTimeout(ctx, 30*time.Millisecond)
	defer cancel()
	if err := outboxtest.AwaitDrained(short, db, d); !errors.Is(err, outboxtest.ErrNotDrained) {
		t.Fatalf("AwaitDrained with no relay = %v", err)
	}
	h := outboxtest.Start(t, db, d, outboxtest.Options{}) // finds the row on its first cycle
	outboxtest.WaitDrained(ctx, t, db, d)
	if n := len(h.Recorder.Messages()); n != 1 {
		t.Fatalf("recorded %d messages", n)
	}
	h.Stop()
	h.Stop() // idempotent
}

// TestHarnessRejectsBadConfig: Start fails the test on a bad relay config.
func TestHarnessRejectsBadConfig(t *testing.T) {
	db, _ := testdb.SQLite(t)
	ft := &fatalT{TB: t}
	done := make(chan struct{})
	go func() { // Fatalf ends this goroutine
		defer close(done)
		outboxtest.Start(ft, db, testdb.NewDialect(t, "sqlite"), outboxtest.Options{Config: relay.Config{BatchSize: -1}})
	}()
	<-done
	if ft.msg == "" {
		t.Fatal("Start accepted BatchSize -1")
	}
}

// fatalT records Fatalf and ends the calling goroutine like testing.T.
type fatalT struct {
	testing.TB
	msg string
}

func (f *fatalT) Helper() {}
func (f *fatalT) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}
