package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/jitoutbox/jitoutbox/internal/testdb"
	"github.com/jitoutbox/jitoutbox/txoutbox"
)

// TestScheduledCommands: status counts scheduled events and gives the next
// due time, show prints a row's due time, cancel deletes scheduled events
// not yet due and names the ids it left alone.
func TestScheduledCommands(t *testing.T) {
	for _, tgt := range testdb.Targets() {
		if tgt.Name == "postgres-pgx" {
			continue // the CLI opens PostgreSQL with lib/pq
		}
		t.Run(tgt.Name, func(t *testing.T) { testScheduledCommands(t, tgt) })
	}
}

func testScheduledCommands(t *testing.T, tgt testdb.Target) {
	db, dsn := tgt.Open(t)
	tbl := uniqueTable()
	g := []string{"-dsn", dsn, "-table", tbl}
	if tgt.Dialect == "mysql" {
		g = append(g, "-dialect", "mysql")
	}
	gj := append(append([]string(nil), g...), "-json")
	ctl(t, nil, append(gj, "migrate")...)
	d, err := newDialect(tgt.Dialect, tbl)
	if err != nil {
		t.Fatal(err)
	}
	ob, err := txoutbox.New(db, d, txoutbox.WithoutLazyWake())
	if err != nil {
		t.Fatal(err)
	}
	tx, err := ob.Begin(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i, delay := range []time.Duration{time.Hour, 2 * time.Hour, 0} {
		id, err := tx.Add(txoutbox.Event{AggregateType: "order", AggregateID: string(rune('a' + i)), EventType: "x", Delay: delay})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}

	var st statusJSON
	ctl(t, &st, append(gj, "status")...)
	if st.Scheduled != 2 || st.NextDue == nil || st.Pending != 3 {
		t.Fatalf("status: scheduled %d, next due %v, pending %d; want 2 scheduled, a next due time, 3 pending", st.Scheduled, st.NextDue, st.Pending)
	}
	if wait := time.Until(*st.NextDue); wait < 50*time.Minute || wait > 61*time.Minute {
		t.Fatalf("next due %v is not the one-hour event's", st.NextDue)
	}
	var out, errOut bytes.Buffer
	if err := run(t.Context(), append(g, "status"), &out, &errOut); err != nil || !strings.Contains(out.String(), "scheduled\t") && !strings.Contains(out.String(), "scheduled ") {
		t.Fatalf("status text: %v\n%s", err, out.String())
	}
	var ev eventJSON
	ctl(t, &ev, append(gj, "show", ids[0])...)
	if ev.DeliverAt == nil || !ev.DeliverAt.Equal(*st.NextDue) {
		t.Fatalf("show: deliver_at %v, want %v", ev.DeliverAt, st.NextDue)
	}
	var plain eventJSON
	ctl(t, &plain, append(gj, "show", ids[2])...)
	if plain.DeliverAt != nil {
		t.Fatalf("show of a plain event: deliver_at %v", plain.DeliverAt)
	}

	// The console: the overview's scheduled card, the event page's due time.
	c, err := newConsole(&env{stderr: t.Output(), db: db, d: d}, consoleOptions{addr: "127.0.0.1:0", limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(c.handler())
	defer srv.Close()
	for path, wants := range map[string][]string{
		"/":                 {`id="scheduled"`, `<div class="value">2</div>`, "next due " + shortTime(*st.NextDue)},
		"/events/" + ids[0]: {"scheduled for", shortTime(*st.NextDue)},
	} {
		code, body, _ := get(t, srv.URL, path)
		if code != http.StatusOK {
			t.Fatalf("GET %s = %d: %s", path, code, body)
		}
		for _, w := range wants {
			if !strings.Contains(body, w) {
				t.Errorf("GET %s lacks %q", path, w)
			}
		}
	}
	if _, body, _ := get(t, srv.URL, "/events/"+ids[2]); strings.Contains(body, "scheduled for") {
		t.Errorf("the event page of a plain event shows a due time")
	}

	var res struct {
		Cancelled    []string `json:"cancelled"`
		NotCancelled []string `json:"not_cancelled"`
	}
	ctl(t, &res, append(gj, "cancel", ids[0], ids[2])...)
	if len(res.Cancelled) != 1 || res.Cancelled[0] != ids[0] || len(res.NotCancelled) != 1 || res.NotCancelled[0] != ids[2] {
		t.Fatalf("cancel: %+v; want %s cancelled, the plain %s not", res, ids[0], ids[2])
	}
	ctl(t, &st, append(gj, "status")...)
	if st.Scheduled != 1 || st.Pending != 2 {
		t.Fatalf("status after cancel: scheduled %d, pending %d", st.Scheduled, st.Pending)
	}
	if err := run(t.Context(), append(g, "cancel", "not-an-id"), &out, &errOut); err == nil {
		t.Fatal("cancel of a malformed id succeeded")
	}
	if err := run(t.Context(), append(g, "cancel"), &out, &errOut); err == nil {
		t.Fatal("cancel without ids succeeded")
	}
}
