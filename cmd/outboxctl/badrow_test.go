package main

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/jitoutbox/jitoutbox/internal/testdb"
)

// TestBadRowsShown: a row whose headers cannot be decoded (dead-lettered,
// as the relay does) and a row whose partition is outside [0, P) (written
// before the schema refused it) are shown by list, show, status and the
// console's event page, with the column, its raw text (control characters
// escaped in human output and in the page) and the problem; status counts
// the bad partition.
func TestBadRowsShown(t *testing.T) { consoleTargets(t, testBadRowsShown) }

func testBadRowsShown(t *testing.T, tgt testdb.Target) {
	db, d, g, gj := migratedTable(t, tgt)
	ctx := t.Context()
	ids := add(t, db, d, "good", "bad-headers", "bad-part")
	// The headers hold an escape sequence that would recolour a terminal.
	headers, raw, problem := "'{\"k\": \"\x1b[31m'", "{\"k\": \"\x1b[31m", `invalid character '\x1b' in string literal`
	if tgt.Dialect == "postgres" { // json: only valid JSON, of the wrong shape
		headers, raw, problem = `'"\u001b[31m"'`, `"\u001b[31m"`, "cannot unmarshal string"
	}
	exec := func(q string) {
		t.Helper()
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec(fmt.Sprintf("UPDATE %s SET headers = %s WHERE id = '%s'", d.Table(), headers, ids[1]))
	// A row from before the partition check: drop it, write, put it back
	// as the migration left it (existing rows unchecked).
	n, err := d.Partitions(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	setPart := fmt.Sprintf("UPDATE %s SET part = %d WHERE id = '%s'", d.Table(), n+2, ids[2])
	switch tgt.Dialect {
	case "postgres":
		exec("ALTER TABLE " + d.Table() + " DROP CONSTRAINT " + d.Table() + "_part_ck")
		exec(setPart)
		exec(fmt.Sprintf("ALTER TABLE %s ADD CONSTRAINT %s_part_ck CHECK (part >= 0 AND part < %d) NOT VALID", d.Table(), d.Table(), n))
	case "mysql":
		conn, err := db.Conn(ctx) // the session variable holds on this connection
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range []string{"SET SESSION check_constraint_checks = 0", setPart, "SET SESSION check_constraint_checks = DEFAULT"} {
			if _, err := conn.ExecContext(ctx, q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		if err := conn.Close(); err != nil {
			t.Fatal(err)
		}
	default:
		exec("DROP TRIGGER " + d.Table() + "_part_ck_update")
		exec(setPart)
	}
	// The relay's way with the bad headers: a dead failure naming them.
	now := time.Now()
	sess := ownAll(t, db, d, "ctl-test")
	recs := readAll(t, db, d, now)
	if len(recs) != 2 || recs[1].ID != ids[1] || recs[1].Bad == nil {
		t.Fatalf("read %+v: want the good row and the bad-headers row, marked bad", recs)
	}
	fail(t, db, d, sess, recs[1], recs[1].Bad.Error(), now, true)

	var list struct{ Events []eventJSON }
	ctl(t, &list, append(gj, "list", "-state", "dead")...)
	if len(list.Events) != 1 || list.Events[0].Bad == nil || list.Events[0].Bad.Column != "headers" ||
		list.Events[0].Bad.Raw != raw || !strings.Contains(list.Events[0].Bad.Error, problem) ||
		!strings.HasPrefix(list.Events[0].LastError, "bad row: column headers: ") {
		t.Fatalf("list -state dead: %+v", list.Events)
	}
	ctl(t, &list, append(gj, "list", "-state", "pending")...)
	if len(list.Events) != 2 || list.Events[1].ID != ids[2] || list.Events[1].Bad == nil ||
		list.Events[1].Bad.Column != "part" || list.Events[1].Bad.Raw != fmt.Sprint(n+2) {
		t.Fatalf("list -state pending: %+v", list.Events)
	}
	var ev eventJSON
	ctl(t, &ev, append(gj, "show", ids[1])...)
	if ev.Bad == nil || ev.Bad.Raw != raw || ev.Headers != nil || ev.AggregateID != "bad-headers" {
		t.Fatalf("show: %+v", ev)
	}
	var st statusJSON
	ctl(t, &st, append(gj, "status")...)
	if st.BadPartition != 1 || st.Pending != 2 || st.Dead != 1 || len(st.Blockers) != 1 ||
		st.Blockers[0].Head == nil || st.Blockers[0].Head.Bad == nil || st.Blockers[0].Head.Bad.Column != "headers" {
		t.Fatalf("status: %+v", st)
	}

	// Human output: the problem shown, no raw control character.
	human := func(args ...string) string {
		t.Helper()
		var out bytes.Buffer
		if err := run(ctx, append(g, args...), &out, &out); err != nil {
			t.Fatalf("outboxctl %q: %v", args, err)
		}
		if strings.ContainsAny(out.String(), "\x1b\x00") {
			t.Fatalf("outboxctl %q printed a control character: %q", args, out.String())
		}
		return out.String()
	}
	if out := human("show", ids[1]); !strings.Contains(out, "bad row") || !strings.Contains(out, "column headers: ") ||
		!strings.Contains(out, `\u001b[31m`) && !strings.Contains(out, `\x1b[31m`) {
		t.Fatalf("show:\n%s", out)
	}
	if out := human("list", "-state", "pending"); !strings.Contains(out, "bad row: column part: partition") {
		t.Fatalf("list -state pending:\n%s", out)
	}
	if out := human("status"); !strings.Contains(out, "bad partition") || !strings.Contains(out, "bad row: column headers") {
		t.Fatalf("status:\n%s", out)
	}

	// The console's event page.
	f := &fixture{db: db, d: d, dsn: g[1]}
	srv := httptest.NewServer(f.console(t, consoleOptions{}).handler())
	defer srv.Close()
	code, body, _ := get(t, srv.URL, "/events/"+ids[1])
	if code != http.StatusOK || !strings.Contains(body, `id="bad-row"`) || !strings.Contains(body, "column headers: ") ||
		strings.Contains(body, "\x1b") || !strings.Contains(body, `[31m`) {
		t.Fatalf("event page: %d\n%s", code, body)
	}
	if code, body, _ := get(t, srv.URL, "/"); code != http.StatusOK || !strings.Contains(body, `id="bad-partition"`) {
		t.Fatalf("overview: %d\n%s", code, body)
	}
}
