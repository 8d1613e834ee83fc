package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/internal/testdb"
	"github.com/jitoutbox/jitoutbox/txoutbox"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// ctl runs the CLI with args and decodes its JSON output into v.
func ctl(t *testing.T, v any, args ...string) {
	t.Helper()
	var out, errOut bytes.Buffer
	if err := run(t.Context(), args, &out, &errOut); err != nil {
		t.Fatalf("outboxctl %q: %v (stderr %s)", args, err, errOut.String())
	}
	if v != nil {
		if err := json.Unmarshal(out.Bytes(), v); err != nil {
			t.Fatalf("outboxctl %q: bad JSON %q: %v", args, out.String(), err)
		}
	}
}

// TestEndToEnd drives every command against every database.
func TestEndToEnd(t *testing.T) {
	for _, tgt := range testdb.Targets() {
		if tgt.Name == "postgres-pgx" {
			continue // the CLI opens PostgreSQL with lib/pq; one run is enough
		}
		t.Run(tgt.Name, func(t *testing.T) { testEndToEnd(t, tgt) })
	}
}

func testEndToEnd(t *testing.T, tgt testdb.Target) {
	db, dsn := tgt.Open(t)
	ctx := t.Context()
	tbl := uniqueTable()
	g := []string{"-dsn", dsn, "--json", "-table", tbl}
	if tgt.Dialect == "mysql" {
		g = append(g, "-dialect", "mysql")
	}

	var mig map[string]any
	ctl(t, &mig, append(g, "migrate")...)
	if mig["migrated"] != true || mig["dialect"] != tgt.Dialect {
		t.Fatalf("migrate = %v", mig)
	}
	d, err := newDialect(tgt.Dialect, tbl)
	if err != nil {
		t.Fatal(err)
	}
	ob, err := txoutbox.New(db, d)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := ob.Begin(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	add := func(id, typ string, payload []byte) string {
		eid, err := tx.Add(txoutbox.Event{AggregateType: "order", AggregateID: id, EventType: typ, Payload: payload})
		if err != nil {
			t.Fatal(err)
		}
		return eid
	}
	deadID := add("1", "order.created", []byte(`{"n":1}`))
	heldID := add("1", "order.paid", []byte{0xde, 0xad})
	add("2", "order.created", []byte(`{"n":2}`))
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	sess := ownAll(t, db, d, "ctl-test")
	recs := readAll(t, db, d, now)
	if len(recs) != 3 {
		t.Fatalf("read %d rows, want 3", len(recs))
	}
	fail(t, db, d, sess, recs[0], "rejected by broker", now, true)
	if n, err := d.Mark(ctx, db, dialects.Mark{Token: sess.Token(), Seqs: []int64{recs[2].Seq}, At: now.Add(-10 * 24 * time.Hour)}); err != nil || n != 1 {
		t.Fatalf("mark = %d, %v", n, err)
	}
	if err := sess.Close(); err != nil {
		t.Fatal(err)
	}

	var st statusJSON
	ctl(t, &st, append(g, "status")...)
	if st.Pending != 1 || st.Dead != 1 || st.Published != 1 || st.OldestPending == nil || len(st.Blockers) != 1 ||
		st.Blockers[0].AggregateID != "1" || st.Blockers[0].Reason != "dead" || st.Blockers[0].Head == nil ||
		st.Blockers[0].Head.ID != deadID || st.Blockers[0].Pending != 1 {
		t.Fatalf("status = %+v", st)
	}

	var list struct {
		State  string      `json:"state"`
		Events []eventJSON `json:"events"`
	}
	ctl(t, &list, append(g, "list", "-state", "dead")...)
	if list.State != "dead" || len(list.Events) != 1 || list.Events[0].ID != deadID || list.Events[0].LastError != "rejected by broker" {
		t.Fatalf("list dead = %+v", list)
	}
	ctl(t, &list, append(g, "list", "-state", "pending", "-aggregate-type", "order", "-aggregate-id", "2")...)
	if len(list.Events) != 0 {
		t.Fatalf("list pending order/2 = %+v", list)
	}

	var ev eventJSON
	ctl(t, &ev, "-dsn", dsn, "-dialect", tgt.Dialect, "-table", tbl, "show", deadID, "--json") // flags after the id
	if ev.ID != deadID || ev.State != "dead" || ev.PayloadEncoding != "text" || ev.Payload == nil || *ev.Payload != `{"n":1}` || ev.Attempts != 1 {
		t.Fatalf("show dead = %+v", ev)
	}
	ctl(t, &ev, append(g, "show", heldID)...)
	if ev.PayloadEncoding != "base64" || *ev.Payload != "3q0=" || ev.State != "pending" {
		t.Fatalf("show held = %+v", ev)
	}

	var rq map[string]int64
	ctl(t, &rq, append(g, "requeue", "-aggregate-type", "order", "-aggregate-id", "1")...)
	if rq["requeued"] != 1 {
		t.Fatalf("requeue = %v", rq)
	}
	// The requeued event comes first, then its aggregate's later one.
	if got := idsOf(readAll(t, db, d, time.Now())); !slices.Equal(got, []string{deadID, heldID}) {
		t.Fatalf("read after requeue = %v, want %s then %s", got, deadID, heldID)
	}
	ctl(t, &rq, append(g, "requeue", "-all")...)
	if rq["requeued"] != 0 {
		t.Fatalf("requeue -all after requeue = %v", rq)
	}

	var pg map[string]any
	ctl(t, &pg, append(g, "purge", "-older-than", "300h")...) // the row was published 240h ago: kept
	if pg["deleted"] != 0.0 {
		t.Fatalf("purge -older-than 300h = %v", pg)
	}
	ctl(t, &pg, append(g, "purge", "-older-than", "168h", "-batch", "1")...)
	if pg["deleted"] != 1.0 {
		t.Fatalf("purge -older-than 168h = %v", pg)
	}
	st = statusJSON{}
	ctl(t, &st, append(g, "status")...)
	if st.Pending != 2 || st.Dead != 0 || st.Published != 0 || len(st.Blockers) != 0 {
		t.Fatalf("status after requeue and purge = %+v", st)
	}

	// Human output works and never shows the DSN.
	var out bytes.Buffer
	if err := run(ctx, []string{"-dsn", dsn, "-dialect", tgt.Dialect, "-table", tbl, "status"}, &out, &out); err != nil || !strings.Contains(out.String(), "pending") {
		t.Fatalf("human status: %v %q", err, out.String())
	}
	if err := run(ctx, []string{"-dsn", dsn, "-dialect", tgt.Dialect, "-table", tbl, "list", "-state", "pending"}, &out, &out); err != nil || !strings.Contains(out.String(), heldID) {
		t.Fatalf("human list: %v %q", err, out.String())
	}
	if strings.Contains(out.String(), dsn) {
		t.Fatal("output contains the DSN")
	}
	var sink bytes.Buffer
	if err := run(ctx, append(g, "show", "00000000-0000-7000-8000-000000000000"), &sink, &sink); !errors.Is(err, dialects.ErrEventNotFound) {
		t.Fatalf("show unknown = %v", err)
	}
}

func TestInferDialect(t *testing.T) {
	for dsn, want := range map[string]string{
		"postgres://u:p@h/db":             "postgres",
		"postgresql://h/db":               "postgres",
		"host=h dbname=d sslmode=disable": "postgres",
		"root@tcp(127.0.0.1:3306)/test":   "mysql",
		"u:p@unix(/tmp/s)/db":             "mysql",
		"file:/tmp/x.db?_pragma=foo":      "sqlite",
		"/var/lib/app/outbox.db":          "sqlite",
		"data.sqlite3":                    "sqlite",
	} {
		if got, err := inferDialect(dsn); err != nil || got != want {
			t.Errorf("inferDialect(%q) = %q, %v; want %q", dsn, got, err, want)
		}
	}
	if _, err := inferDialect("what"); !errors.Is(err, errUsage) {
		t.Fatalf("inferDialect(what) = %v", err)
	}
}

func TestResolveDSNFromEnv(t *testing.T) {
	env := map[string]string{"JITOUTBOX_MYSQL_DSN": "root@tcp(h:3306)/db", "JITOUTBOX_POSTGRES_DSN": "postgres://h/db"}
	get := func(k string) string { return env[k] }
	if d, dsn, err := resolveDSN("mysql", "", get); err != nil || d != "mysql" || dsn != env["JITOUTBOX_MYSQL_DSN"] {
		t.Fatalf("resolve mysql = %q %q %v", d, dsn, err)
	}
	if _, _, err := resolveDSN("", "", get); !errors.Is(err, errUsage) {
		t.Fatalf("ambiguous env = %v", err)
	}
	delete(env, "JITOUTBOX_MYSQL_DSN")
	if d, _, err := resolveDSN("", "", get); err != nil || d != "postgres" {
		t.Fatalf("resolve from one env = %q %v", d, err)
	}
}

// TestRedactsPassword: a failing connection's error never shows the DSN or
// its password.
func TestRedactsPassword(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	for _, dsn := range []string{
		"postgres://admin:s3cr3tPW@127.0.0.1:1/db?sslmode=disable&connect_timeout=2",
		"admin:s3cr3tPW@tcp(127.0.0.1:1)/db?timeout=2s",
	} {
		var out bytes.Buffer
		err := run(ctx, []string{"-dsn", dsn, "status"}, &out, &out)
		if err == nil {
			t.Fatalf("status on a closed port succeeded")
		}
		if strings.Contains(err.Error(), "s3cr3tPW") || strings.Contains(out.String(), "s3cr3tPW") {
			t.Fatalf("password leaked: %v / %q", err, out.String())
		}
	}
	err := redact(errors.New(`parse "postgres://u:pw1234@h/db": bad`), "postgres://u:pw1234@h/db")
	if strings.Contains(err.Error(), "pw1234") {
		t.Fatalf("redact = %v", err)
	}
}

func TestUsageErrors(t *testing.T) {
	noEnv := func(string) string { return "" }
	dsn := "file:" + t.TempDir() + "/x.db"
	for _, args := range [][]string{
		{},
		{"frobnicate"},
		{"status"}, // no DSN anywhere
		{"-dsn", dsn, "list"},
		{"-dsn", dsn, "list", "-state", "dead", "-aggregate-type", "order"},
		{"-dsn", dsn, "requeue"},
		{"-dsn", dsn, "requeue", "-all", "-id", "x"},
		{"-dsn", dsn, "skip"},
		{"-dsn", dsn, "skip", "-all", "-aggregate-type", "order", "-aggregate-id", "1"},
		{"-dsn", dsn, "skip", "-aggregate-id", "1"},
		{"-dsn", dsn, "purge"},
		{"-dsn", dsn, "show"},
		{"-dsn", dsn, "migrate", "extra"},
		{"-dsn", dsn, "status", "-retention", "-1h"},
		{"-dsn", dsn, "serve", "-retention", "-1h"},
	} {
		var out bytes.Buffer
		if err := runEnv(t.Context(), args, &out, &out, noEnv); !errors.Is(err, errUsage) {
			t.Errorf("%q: %v, want a usage error", args, err)
		}
	}
}
