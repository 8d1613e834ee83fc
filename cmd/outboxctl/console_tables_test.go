package main

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/internal/testdb"
)

// TestConsoleAllTables: with -all-tables the console lists the tables
// found with their backlog, oldest pending age, blocked and dead counts
// and health, each linking to its own pages, which show that table's rows
// and keep it in every link and form; an unknown table is 404, a dropped
// one fails alone and leaves the list at the next look.
func TestConsoleAllTables(t *testing.T) {
	consoleTargets(t, func(t *testing.T, tgt testdb.Target) {
		f := newTenantFixture(t, tgt)
		d0, err := newDialect(tgt.Dialect, dialects.DefaultTable)
		if err != nil {
			t.Fatal(err)
		}
		e := &env{g: &globals{allTables: true, pattern: f.pattern}, stderr: t.Output(), db: f.db, d: d0,
			redact: func(err error) error { return redact(err, f.dsn) }}
		c, err := newConsole(e, consoleOptions{addr: "127.0.0.1:0", limit: 50, refresh: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.discover(t.Context()); err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(c.handler())
		defer srv.Close()

		if code, _, h := get(t, srv.URL, "/"); code != http.StatusSeeOther || h.Get("Location") != "/tables" {
			t.Fatalf("GET / = %d to %q, want a redirect to /tables", code, h.Get("Location"))
		}
		body := getPage(t, srv.URL, "/tables")
		row := func(body, table string) string {
			t.Helper()
			_, after, ok := strings.Cut(body, `data-table="`+table+`"`)
			if !ok {
				t.Fatalf("no row for %s:\n%s", table, body)
			}
			r, _, _ := strings.Cut(after, "</tr>")
			return r
		}
		a := row(body, f.tables["a"])
		for _, w := range []string{`data-health="ok"`, `href="/t/` + f.tables["a"] + `/"`, `<td class="num pending">2</td>`,
			`<td class="num blocked">1 <span class="muted">(1 dead)</span>`, `<span class="reason dead">1</span>`, "(64/64 partitions owned)"} {
			if !strings.Contains(a, w) {
				t.Errorf("a's row lacks %q:\n%s", w, a)
			}
		}
		if b := row(body, f.tables["b"]); !strings.Contains(b, `<td class="num scheduled">1</td>`) || strings.Contains(b, `<td class="oldest">-</td>`) {
			t.Errorf("b's row:\n%s", b)
		}
		if c := row(body, f.tables["c"]); !strings.Contains(c, `<td class="oldest">-</td>`) || !strings.Contains(c, `<td class="num pending">0</td>`) {
			t.Errorf("c's row:\n%s", c)
		}
		if d := row(body, f.tables["d"]); !strings.Contains(d, `data-health="`+healthSchema+`"`) || !strings.Contains(d, "version") {
			t.Errorf("d's row (old schema version):\n%s", d)
		}
		if !strings.Contains(body, `<span class="warn" id="unreadable">1 unreadable</span>`) || strings.Contains(body, f.dsn) {
			t.Errorf("tables page: the unreadable count, never the DSN:\n%s", body)
		}

		// a's pages: its rows, and links and forms that keep the table.
		base := "/t/" + f.tables["a"]
		for path, wants := range map[string][]string{
			base + "/": {`<code id="table">` + f.tables["a"] + `</code>`, `<div class="value">2</div>`, f.deadID,
				`href="` + base + `/events/` + f.deadID + `"`, `action="` + base + `/requeue"`, `value="` + base + `/"`, `href="/tables"`},
			base + "/dead":               {f.deadID, `action="` + base + `/dead"`, `href="` + base + `/dead" class="on"`},
			base + "/blocked":            {"order/1", `href="` + base + `/dead?aggregate_type=order&amp;aggregate_id=1"`},
			base + "/partitions":         {"tenant-relay", "0-63"},
			base + "/events/" + f.deadID: {"poison &lt;b&gt;a&lt;/b&gt;", `action="` + base + `/skip"`},
		} {
			body := getPage(t, srv.URL, path, wants...)
			if strings.Contains(body, `href="/dead`) || strings.Contains(body, `href="/events/`) || strings.Contains(body, `action="/requeue"`) {
				t.Errorf("GET %s has a link that loses the table", path)
			}
		}
		// b's dead letters are b's: none.
		if _, body, _ := get(t, srv.URL, "/t/"+f.tables["b"]+"/dead"); strings.Contains(body, f.deadID) || !strings.Contains(body, "No dead letters") {
			t.Errorf("b's dead letters show a's")
		}
		// a's event is not b's.
		if code, _, _ := get(t, srv.URL, "/t/"+f.tables["b"]+"/events/"+f.deadID); code != http.StatusNotFound {
			t.Errorf("a's event under b = %d, want 404", code)
		}

		// An action on a table stays on it: skip a's dead event.
		code, _, h := post(t, srv.URL, base+"/skip", url.Values{csrfField: {c.csrf}, "id": {f.deadID}, "back": {base + "/dead"}})
		if code != http.StatusSeeOther || !strings.HasPrefix(h.Get("Location"), base+"/dead?done=skip&n=1") {
			t.Fatalf("POST %s/skip = %d to %q", base, code, h.Get("Location"))
		}
		if _, body, _ := get(t, srv.URL, "/tables"); !strings.Contains(row(body, f.tables["a"]), `<td class="num blocked">0</td>`) {
			t.Errorf("a still blocked after skip:\n%s", row(body, f.tables["a"]))
		}

		// Unknown tables, found by no look: 404, whatever the name.
		for _, p := range []string{"/t/nope.outbox/", "/t/" + url.PathEscape(f.tables["a"]+"x") + "/dead", "/t/%3Cscript%3E/", "/t/" + dialects.DefaultTable + "/"} {
			if code, body, _ := get(t, srv.URL, p); code != http.StatusNotFound || strings.Contains(body, "<script>") {
				t.Errorf("GET %s = %d, want 404", p, code)
			}
		}
		if code, _, _ := post(t, srv.URL, "/t/nope.outbox/requeue", url.Values{csrfField: {c.csrf}, "all": {"1"}}); code != http.StatusNotFound {
			t.Errorf("POST to an unknown table = %d, want 404", code)
		}

		// c dropped after the look: its page fails alone; the next look
		// of the tables page leaves it out, and its pages are then 404.
		f.drop("c")
		if code, _, _ := get(t, srv.URL, "/t/"+f.tables["c"]+"/"); code != http.StatusInternalServerError {
			t.Errorf("dropped table's overview = %d, want 500", code)
		}
		if code, _, _ := get(t, srv.URL, base+"/"); code != http.StatusOK {
			t.Errorf("a's overview after c was dropped = %d", code)
		}
		_, body, _ = get(t, srv.URL, "/tables")
		if strings.Contains(body, f.tables["c"]) || !strings.Contains(body, f.tables["b"]) {
			t.Errorf("tables page after c was dropped:\n%s", body)
		}
		if code, _, _ := get(t, srv.URL, "/t/"+f.tables["c"]+"/"); code != http.StatusNotFound {
			t.Errorf("dropped table after the next look = %d, want 404", code)
		}
	})
}

// getPage gets path, which must answer 200 with each of wants, and returns
// its body.
func getPage(t *testing.T, base, path string, wants ...string) string {
	t.Helper()
	code, body, _ := get(t, base, path)
	if code != http.StatusOK {
		t.Fatalf("GET %s = %d: %s", path, code, body)
	}
	for _, w := range wants {
		if !strings.Contains(body, w) {
			t.Errorf("GET %s lacks %q", path, w)
		}
	}
	return body
}
