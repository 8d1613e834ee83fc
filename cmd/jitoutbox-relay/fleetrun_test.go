package main

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/dialects/postgres"
	"github.com/jitoutbox/jitoutbox/dialects/sqlite"
	"github.com/jitoutbox/jitoutbox/internal/testdb"
	"github.com/jitoutbox/jitoutbox/internal/testnats"
	"github.com/jitoutbox/jitoutbox/relay/natspub"
	"github.com/jitoutbox/jitoutbox/txoutbox"
)

// TestRunFleetConfig runs the command with a -config of two sources: a
// PostgreSQL database with two tenant schemas (one table named, created
// by -migrate; one found by a pattern, created with Migrate before the
// start) and a SQLite file (created by -migrate). Events committed in each
// of the three tables are all published, each under its source's subject
// prefix; /readyz is 200 and /metrics counts each table's events under
// its source and table.
func TestRunFleetConfig(t *testing.T) {
	pgDSN := testdb.PostgresDSN(t) // skips without PostgreSQL
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	url := testnats.URL(t)
	js, err := jetstream.New(testnats.Connect(t, url))
	if err != nil {
		t.Fatal(err)
	}
	pgPrefix, litePrefix := testnats.RandomName("pg_"), testnats.RandomName("lite_")
	stream, _ := testnats.Stream(t, js, func(c *jetstream.StreamConfig) {
		c.Subjects = []string{pgPrefix + ".>", litePrefix + ".>"}
	})

	pg, err := sql.Open("postgres", pgDSN)
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	tenant := testnats.RandomName("jitfleet_") // unique: other tests share the database
	named, found := tenant+"_a", tenant+"_b1"
	for _, schema := range []string{named, found} {
		if _, err := pg.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _, _ = pg.ExecContext(context.Background(), "DROP SCHEMA "+schema+" CASCADE") })
	}
	foundD, err := postgres.New(postgres.WithTable(found + ".outbox"))
	if err != nil {
		t.Fatal(err)
	}
	if err := foundD.Migrate(ctx, pg); err != nil {
		t.Fatal(err)
	}
	litePath := filepath.Join(t.TempDir(), "lite.db")
	liteDSN := testdb.SQLiteDSN(litePath)

	path := writeConfig(t, fmt.Sprintf(`
settings:
  poll: 200ms
  migrate: true
  log-level: debug
sources:
  - name: pg
    dialect: postgres
    dsn: %q
    tables: [%s.outbox]
    patterns: ["%s_b*.outbox"]
    subject_prefix: %s
  - name: lite
    dialect: sqlite
    dsn: %q
    tables: [outbox]
    subject_prefix: %s
`, pgDSN, named, tenant, pgPrefix, liteDSN, litePrefix))
	r := startRun(t, "-config", path, "-nats", url, "-metrics-addr", "127.0.0.1:0")
	base := "http://" + serverAddr(t, r.log)
	if err := r.log.Wait(60*time.Second, 1, `"jitoutbox-relay starting"`); err != nil { // after -migrate
		t.Fatalf("%v\n%s", err, r.log.String())
	}

	lite, err := sql.Open("sqlite", liteDSN)
	if err != nil {
		t.Fatal(err)
	}
	defer lite.Close()
	namedD, err := postgres.New(postgres.WithTable(named + ".outbox"))
	if err != nil {
		t.Fatal(err)
	}
	liteD, err := sqlite.New()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{} // event id -> subject
	for _, tc := range []struct {
		db     *sql.DB
		d      dialects.Dialect
		prefix string
	}{{pg, namedD, pgPrefix}, {pg, foundD, pgPrefix}, {lite, liteD, litePrefix}} {
		ob, err := txoutbox.New(tc.db, tc.d)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			tx, err := ob.Begin(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			id, err := tx.Add(txoutbox.Event{AggregateType: "order", AggregateID: fmt.Sprint(i), EventType: "placed", Payload: []byte(`{}`)})
			if err != nil {
				t.Fatal(err)
			}
			if err := tx.Commit(); err != nil {
				t.Fatalf("commit to %s: %v", tc.d.Table(), err)
			}
			want[id] = tc.prefix + ".order.placed"
		}
	}

	cons, err := stream.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	for len(want) > 0 {
		msg, err := cons.Next(jetstream.FetchMaxWait(30 * time.Second))
		if err != nil {
			t.Fatalf("%d events not relayed (%v): %v\n%s", len(want), err, want, r.log.String())
		}
		id := msg.Headers().Get(natspub.HeaderEventID)
		subject, ok := want[id]
		if !ok {
			t.Fatalf("unexpected or repeated event %q on %s", id, msg.Subject())
		}
		if msg.Subject() != subject {
			t.Fatalf("event %s on %s, want %s", id, msg.Subject(), subject)
		}
		delete(want, id)
	}
	// Ready: both databases answer, NATS is connected, the three tables
	// are served; every table's series carry its source and table.
	if body := waitStatus(t, base+"/readyz", http.StatusOK, r.log); strings.Contains(body, "table:") {
		t.Errorf("/readyz lists a failing table: %q", body)
	}
	// The hook counts an event once its ack is in, which may be just
	// after the consumer got it.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		_, metrics := get(t, base+"/metrics", "")
		var wrong []string
		for _, st := range []struct{ source, table string }{{"pg", named + ".outbox"}, {"pg", found + ".outbox"}, {"lite", "outbox"}} {
			if got := sample(metrics, "jitoutbox_relay_published_total", `source="`+st.source+`"`, `table="`+st.table+`"`, `critical="false"`); got != "3" {
				wrong = append(wrong, fmt.Sprintf("%s/%s: %q", st.source, st.table, got))
			}
		}
		if len(wrong) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("published events by table, want 3 each: %v\n%s", wrong, metrics)
		}
	}
	r.stop(t)
	if log := r.log.String(); strings.Contains(log, pgDSN) || strings.Contains(log, litePath) {
		t.Fatal("the log holds a source's DSN")
	}
	if r.log.Count(`"jitoutbox-relay source"`) != 2 || r.log.Count(`"jitoutbox-relay stopped"`) != 1 {
		t.Fatalf("no line per source, or no stop line:\n%s", r.log.String())
	}
}
