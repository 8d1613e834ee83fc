package e2e

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/dialects/mysql"
	"github.com/jitoutbox/jitoutbox/dialects/postgres"
	"github.com/jitoutbox/jitoutbox/dialects/sqlite"
	"github.com/jitoutbox/jitoutbox/internal/e2e/relayproc"
	"github.com/jitoutbox/jitoutbox/internal/testdb"
	"github.com/jitoutbox/jitoutbox/internal/testnats"
	"github.com/jitoutbox/jitoutbox/notify"
	"github.com/jitoutbox/jitoutbox/notify/natsnotify"
	"github.com/jitoutbox/jitoutbox/notify/pgnotify"
	"github.com/jitoutbox/jitoutbox/relay/natspub"
	"github.com/jitoutbox/jitoutbox/txoutbox"
)

// deliveryBound is how long a test waits for an event. The relay polls every
// hour, so an event that arrives within this bound was fetched because of a
// wake (or the relay's start-up cycle, which the scenario rules out).
const deliveryBound = 20 * time.Second

// quietWindow is how long the control step checks that an event committed
// without a wake is NOT delivered.
const quietWindow = time.Second

// runner is a cross-process notifier with a Run loop (pgnotify.Notifier,
// natsnotify.Notifier).
type runner interface {
	notify.Notifier
	Run(ctx context.Context) error
}

// scenario is one database + wake combination.
type scenario struct {
	db       *sql.DB
	dialect  dialects.Dialect
	js       jetstream.JetStream
	stream   jetstream.Stream
	prefix   string
	notifier runner
	// relayArgs are the relay's database, NATS and wake flags.
	relayArgs []string
	// breakWake kills the relay's wake connection.
	breakWake func(t *testing.T, p *relayproc.Process)
	// reconnected is a log fragment the relay writes once its wake
	// connection is back.
	reconnected string
	// secret must never appear in the relay's log (the DSN).
	secret string
}

func TestPostgresListenNotifyWake(t *testing.T) {
	db, dsn := testdb.Postgres(t, "postgres")
	d, err := postgres.New()
	if err != nil {
		t.Fatal(err)
	}
	app := testnats.RandomName("jitrelay_")
	relayDSN := withParam(t, dsn, "application_name", app)
	url := testnats.URL(t)
	nc := testnats.Connect(t, url)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	stream, prefix := testnats.Stream(t, js)
	channel := testnats.RandomName("jit_wake_")
	n, err := pgnotify.NewNotifier(db, pgnotify.WithChannel(channel))
	if err != nil {
		t.Fatal(err)
	}
	runScenario(t, scenario{
		db: db, dialect: d, js: js, stream: stream, prefix: prefix, notifier: n,
		relayArgs: []string{"-dialect", "postgres", "-dsn", relayDSN, "-nats", url, "-wake", "pg", "-wake-channel", channel},
		breakWake: func(t *testing.T, _ *relayproc.Process) {
			// The LISTEN connection: the relay's application_name, and its
			// last statement LISTEN (or the listener's empty ping). A
			// connection the relay has just opened and not used yet also
			// shows an empty query (the ownership watch reopens its
			// connection after each interruption), so look again until
			// exactly one connection matches, then terminate that one.
			deadline := time.Now().Add(5 * time.Second)
			for {
				var pids []int64
				rows, err := db.QueryContext(context.Background(), `SELECT pid FROM pg_stat_activity
					WHERE application_name = $1 AND (query LIKE 'LISTEN %' OR query = '')`, app)
				if err != nil {
					t.Fatalf("pg_stat_activity: %v", err)
				}
				for rows.Next() {
					var pid int64
					if err := rows.Scan(&pid); err != nil {
						t.Fatal(err)
					}
					pids = append(pids, pid)
				}
				rows.Close()
				if len(pids) == 1 {
					var ok bool
					if err := db.QueryRowContext(context.Background(), `SELECT pg_terminate_backend($1)`, pids[0]).Scan(&ok); err != nil || !ok {
						t.Fatalf("pg_terminate_backend(%d): %v %v", pids[0], ok, err)
					}
					return
				}
				if time.Now().After(deadline) {
					t.Fatalf("%d connections look like the relay's listener, want 1", len(pids))
				}
				time.Sleep(20 * time.Millisecond)
			}
		},
		reconnected: `"listener reconnected"`,
		secret:      relayDSN,
	})
}

func TestMariaDBNATSWake(t *testing.T) {
	db, dsn := testdb.MySQL(t)
	d, err := mysql.New()
	if err != nil {
		t.Fatal(err)
	}
	natsScenario(t, db, d, []string{"-dialect", "mysql", "-dsn", dsn}, dsn)
}

// TestSQLiteNATSWake runs without any server: a SQLite file shared by both
// processes and an embedded NATS server.
func TestSQLiteNATSWake(t *testing.T) {
	path := filepath.Join(t.TempDir(), "outbox.db")
	dsn := testdb.SQLiteDSN(path)
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	d, err := sqlite.New()
	if err != nil {
		t.Fatal(err)
	}
	natsScenario(t, db, d, []string{"-dialect", "sqlite", "-dsn", dsn}, path)
}

// natsScenario runs the wake scenario with an embedded NATS server the test
// owns (JetStream and the wake subject), restarted to break the wake.
func natsScenario(t *testing.T, db *sql.DB, d dialects.Dialect, dbArgs []string, secret string) {
	srv := testnats.Server(t)
	nc := testnats.Connect(t, srv.URL)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	stream, prefix := testnats.Stream(t, js)
	subject := testnats.RandomName("jitwake.")
	n, err := natsnotify.NewNotifier(nc, natsnotify.WithSubject(subject))
	if err != nil {
		t.Fatal(err)
	}
	runScenario(t, scenario{
		db: db, dialect: d, js: js, stream: stream, prefix: prefix, notifier: n,
		relayArgs: append(dbArgs, "-nats", srv.URL, "-wake", "nats", "-wake-subject", subject),
		breakWake: func(t *testing.T, _ *relayproc.Process) {
			srv.Restart(t)
		},
		reconnected: `"jitoutbox-relay: NATS reconnected"`,
		secret:      secret,
	})
}

// runScenario: a relay process that polls once an hour; the test process
// commits time-critical transactions whose wake crosses the process boundary.
func runScenario(t *testing.T, s scenario) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := s.dialect.Migrate(ctx, s.db); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(wg.Wait)
	t.Cleanup(cancel)
	wg.Add(1)
	go func() {
		defer wg.Done()
		_ = s.notifier.Run(ctx)
	}()
	ob, err := txoutbox.New(s.db, s.dialect, txoutbox.WithNotifier(s.notifier))
	if err != nil {
		t.Fatal(err)
	}
	recv := consume(t, ctx, s.stream)

	args := append([]string{"-publisher", "jetstream", "-subject-prefix", s.prefix,
		"-poll", "1h", "-log-level", "debug", "-log-format", "json"}, s.relayArgs...)
	p := relayproc.Start(t, relayBin, args...)
	if err := p.Log.Wait(deliveryBound, 1, `"wake source ready"`); err != nil {
		t.Fatalf("relay never listened for wakes: %v", err)
	}

	// 1. A time-critical commit arrives without waiting for the poll. (Its
	// cycle may be the relay's start-up cycle; step 2 rules that out.)
	c1 := commit(t, ctx, ob, "c1", true)
	recv.await(t, c1)

	// 2. Control: an ordinary commit sends no cross-process wake, so the
	// idle relay (polling once an hour) leaves it alone... A wake that came
	// in while c1's cycle ran still owes one more cycle (coalesced wakes mean
	// "at most one more"); give it quietWindow to run before committing n1,
	// or that cycle would take n1 and fail the control. (This wait can only
	// make the control fail spuriously, never pass wrongly.)
	settle := time.NewTimer(quietWindow)
	<-settle.C
	n1 := commit(t, ctx, ob, "c2", false)
	recv.absent(t, n1, quietWindow)
	// ...until a time-critical commit of its aggregate wakes it: the
	// critical read holds that one back behind n1, so the relay's read lane
	// publishes both, in order.
	wakes := p.Log.Count(`"wake received"`)
	c2 := commit(t, ctx, ob, "c2", true)
	recv.await(t, c2, n1)
	// The relay logs the wake before it publishes, but its log reaches this
	// process through a pipe that may lag the broker: give the line a
	// second.
	if err := p.Log.Wait(time.Second, wakes+1, `"wake received"`); err != nil {
		t.Fatalf("event delivered but the relay logged no new wake (%d before, %d after)", wakes, p.Log.Count(`"wake received"`))
	}
	// The wake named c2's partition, so that only its owner reads.
	named := fmt.Sprintf(`"partitions":[%d]`, dialects.PartitionOf("order", "c2", dialects.DefaultPartitions))
	if p.Log.Count(named) == 0 {
		t.Fatalf("no wake logged with %s", named)
	}

	// 3. Kill the relay's wake connection. A commit made meanwhile may lose
	// its wake, but the relay polls once after reconnecting.
	s.breakWake(t, p)
	c3 := commit(t, ctx, ob, "c3", true)
	recv.await(t, c3)
	if err := p.Log.Wait(deliveryBound, 1, s.reconnected); err != nil {
		t.Fatalf("wake connection did not come back: %v", err)
	}
	// 4. Once reconnected, the next time-critical commit arrives by its wake.
	// Let the cycles of the reconnect's wake run out first (as in step 2):
	// a cycle still looping could take c4 before c4's wake is read.
	settle.Reset(quietWindow)
	<-settle.C
	wakes = p.Log.Count(`"wake received"`)
	c4 := commit(t, ctx, ob, "c4", true)
	recv.await(t, c4)
	if err := p.Log.Wait(time.Second, wakes+1, `"wake received"`); err != nil {
		t.Fatalf("after reconnect: event delivered but no new wake logged (%d before, %d after)", wakes, p.Log.Count(`"wake received"`))
	}

	// 5. SIGTERM stops the relay cleanly, and its log never shows the DSN.
	if err := p.Stop(15 * time.Second); err != nil {
		t.Fatalf("relay did not exit cleanly on SIGTERM: %v", err)
	}
	if p.Log.Count(`"jitoutbox-relay stopped"`) != 1 {
		t.Fatal(`relay did not log "jitoutbox-relay stopped"`)
	}
	if strings.Contains(p.Log.String(), s.secret) {
		t.Fatal("relay log contains the DSN")
	}
}

// commit commits one transaction with one event and returns its id.
func commit(t *testing.T, ctx context.Context, ob *txoutbox.Outbox, key string, critical bool) string {
	t.Helper()
	var opts []txoutbox.TxOption
	if critical {
		opts = append(opts, txoutbox.TimeCritical())
	}
	tx, err := ob.Begin(ctx, nil, opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	id, err := tx.Add(txoutbox.Event{AggregateType: "order", AggregateID: key, EventType: "order.placed",
		Payload: []byte(fmt.Sprintf(`{"key":%q}`, key))})
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	return id
}

// receiver collects event ids consumed from the stream.
type receiver struct {
	mu      sync.Mutex
	seen    map[string]bool
	changed chan struct{} // closed and replaced on every message
}

func consume(t *testing.T, ctx context.Context, stream jetstream.Stream) *receiver {
	t.Helper()
	r := &receiver{seen: map[string]bool{}, changed: make(chan struct{})}
	cons, err := stream.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	cc, err := cons.Consume(func(m jetstream.Msg) {
		id := m.Headers().Get(natspub.HeaderEventID)
		r.mu.Lock()
		r.seen[id] = true
		close(r.changed)
		r.changed = make(chan struct{})
		r.mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cc.Stop)
	return r
}

// await waits up to deliveryBound for every id.
func (r *receiver) await(t *testing.T, ids ...string) {
	t.Helper()
	timer := time.NewTimer(deliveryBound)
	defer timer.Stop()
	for {
		r.mu.Lock()
		missing := 0
		for _, id := range ids {
			if !r.seen[id] {
				missing++
			}
		}
		ch := r.changed
		r.mu.Unlock()
		if missing == 0 {
			return
		}
		select {
		case <-ch:
		case <-timer.C:
			t.Fatalf("%d of %d events not delivered within %v (the relay polls only hourly: the wake did not arrive)", missing, len(ids), deliveryBound)
		}
	}
}

// absent checks that id is not delivered within d (a negative check: it
// waits for the whole window).
func (r *receiver) absent(t *testing.T, id string, d time.Duration) {
	t.Helper()
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		r.mu.Lock()
		seen := r.seen[id]
		ch := r.changed
		r.mu.Unlock()
		if seen {
			t.Fatal("an event committed without a wake was delivered although the relay polls hourly: something other than the wake runs cycles")
		}
		select {
		case <-ch:
		case <-timer.C:
			return
		}
	}
}

// withParam adds key=value to a PostgreSQL URL or key=value DSN.
func withParam(t *testing.T, dsn, key, value string) string {
	t.Helper()
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		sep := "?"
		if strings.Contains(dsn, "?") {
			sep = "&"
		}
		return dsn + sep + key + "=" + value
	}
	return dsn + " " + key + "=" + value
}
