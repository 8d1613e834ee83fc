package main

import (
	"context"
	"database/sql"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/internal/testdb"
	"github.com/jitoutbox/jitoutbox/txoutbox"
)

// scriptPayload is a JSON payload that a careless page would run.
const scriptPayload = `{"note":"<script>alert('pwned')</script>"}`

// fixture is an outbox with blocked aggregates: order/a and order/b are
// held behind a dead head, order/c behind a head backing off; each has one
// later event. order/a's head carries scriptPayload, order/b's a binary
// payload.
type fixture struct {
	db    *sql.DB
	d     dialects.Dialect
	dsn   string
	heads map[string]string // aggregate id -> head event id
	later map[string]string // aggregate id -> later event id
	sess  dialects.Session  // owns every partition until closed
}

func newFixture(t *testing.T, tgt testdb.Target) *fixture {
	t.Helper()
	db, dsn := tgt.Open(t)
	d, err := newDialect(tgt.Dialect, uniqueTable())
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Migrate(t.Context(), db); err != nil {
		t.Fatal(err)
	}
	f := &fixture{db: db, d: d, dsn: dsn, heads: map[string]string{}, later: map[string]string{}}
	ob, err := txoutbox.New(db, d)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := ob.Begin(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	add := func(agg, contentType string, payload []byte) string {
		id, err := tx.Add(txoutbox.Event{AggregateType: "order", AggregateID: agg, EventType: "order.changed",
			ContentType: contentType, Payload: payload})
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	f.heads["a"] = add("a", "", []byte(scriptPayload))
	f.heads["b"] = add("b", "application/octet-stream", []byte{0xde, 0xad, '<', 'b', '>'})
	f.heads["c"] = add("c", "", []byte(`{}`))
	for _, agg := range []string{"a", "b", "c"} {
		f.later[agg] = add(agg, "", []byte(`{}`))
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	f.sess = ownAll(t, db, d, "console-relay")
	recs := readAll(t, db, d, now)
	if len(recs) != 6 {
		t.Fatalf("read %d rows, want 6", len(recs))
	}
	fail(t, db, d, f.sess, recs[0], "poison <b>a</b>", now, true)
	fail(t, db, d, f.sess, recs[1], "poison b", now, true)
	fail(t, db, d, f.sess, recs[2], "broker down", now.Add(time.Hour), false)
	return f
}

// console returns a console on f with opts (defaults filled in).
func (f *fixture) console(t *testing.T, o consoleOptions) *console {
	t.Helper()
	if o.addr == "" {
		o.addr = "127.0.0.1:0"
	}
	if o.limit == 0 {
		o.limit = 50
	}
	e := &env{stderr: t.Output(), db: f.db, d: f.d,
		redact: func(err error) error { return redact(err, f.dsn) }}
	c, err := newConsole(e, o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// client is an HTTP client that does not follow redirects.
func client() *http.Client {
	return &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// do sends a request and returns the status and body.
func do(t *testing.T, req *http.Request) (int, string, http.Header) {
	t.Helper()
	resp, err := client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b), resp.Header
}

func get(t *testing.T, base, path string) (int, string, http.Header) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	return do(t, req)
}

func post(t *testing.T, base, path string, form url.Values) (int, string, http.Header) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, base+path, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return do(t, req)
}

// consoleTargets runs fn (a console or CLI test) on SQLite, PostgreSQL
// (lib/pq, as the CLI opens it) and MariaDB/MySQL; the server targets skip
// when their variable is unset.
func consoleTargets(t *testing.T, fn func(t *testing.T, tgt testdb.Target)) {
	for _, tgt := range testdb.Targets() {
		if tgt.Name == "postgres-pgx" {
			continue
		}
		t.Run(tgt.Name, func(t *testing.T) { fn(t, tgt) })
	}
}

// TestConsolePages: every page renders with what an operator needs, with
// the security headers, and a payload with HTML shows as text.
func TestConsolePages(t *testing.T) {
	consoleTargets(t, func(t *testing.T, tgt testdb.Target) {
		f := newFixture(t, tgt)
		c := f.console(t, consoleOptions{refresh: 5 * time.Second})
		srv := httptest.NewServer(c.handler())
		defer srv.Close()

		for path, wants := range map[string][]string{
			"/": {`id="pending"`, "Backlog (pending)", `<div class="value">4</div>`, "Dead letters", `<div class="value">2</div>`,
				"Oldest pending age", "Published, kept", `data-aggregate="order/a"`, `data-aggregate="order/c"`,
				"backing-off", "broker down", f.heads["a"], f.heads["b"], `<meta http-equiv="refresh" content="5; url=/">`,
				`name="csrf" value="` + c.csrf + `"`, `data-act="requeue:all"`, `data-act="skip:aggregate:order/a"`},
			"/blocked": {"order/a", "order/b", "order/c", "retries by itself", "poison &lt;b&gt;a&lt;/b&gt;"},
			"/dead":    {f.heads["a"], f.heads["b"], `data-act="requeue:id:` + f.heads["b"] + `"`},
			"/dead?aggregate_type=order&aggregate_id=b": {f.heads["b"], `data-act="skip:aggregate:order/b"`},
			"/partitions":             {"console-relay", f.sess.Token(), "0-63", `<span id="free">none</span>`},
			"/events/" + f.heads["a"]: {"&lt;script&gt;alert(", "dead", "poison &lt;b&gt;a&lt;/b&gt;", "JSON text", `data-act="requeue:id:` + f.heads["a"] + `"`},
			"/events/" + f.heads["b"]: {"3q08Yj4=", "base64", "de ad 3c 62 3e", "application/octet-stream"},
			"/events/" + f.later["a"]: {"pending", "next attempt"},
		} {
			code, body, h := get(t, srv.URL, path)
			if code != http.StatusOK {
				t.Fatalf("GET %s = %d: %s", path, code, body)
			}
			for _, w := range wants {
				if !strings.Contains(body, w) {
					t.Errorf("GET %s lacks %q", path, w)
				}
			}
			if strings.Contains(body, "<script") || strings.Contains(body, "<b>a</b>") {
				t.Errorf("GET %s has unescaped HTML from the database", path)
			}
			if strings.Contains(body, f.dsn) {
				t.Errorf("GET %s shows the DSN", path)
			}
			for k, v := range map[string]string{"X-Frame-Options": "DENY", "X-Content-Type-Options": "nosniff"} {
				if h.Get(k) != v {
					t.Errorf("GET %s: %s = %q, want %q", path, k, h.Get(k), v)
				}
			}
			if csp := h.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") {
				t.Errorf("GET %s: CSP %q", path, csp)
			}
		}
		if code, _, _ := get(t, srv.URL, "/events/00000000-0000-7000-8000-000000000000"); code != http.StatusNotFound {
			t.Errorf("unknown event = %d, want 404", code)
		}
		if _, body, _ := get(t, srv.URL, "/?msg=all+good&done=hacked&n=1"); strings.Contains(body, "all good") || strings.Contains(body, "hacked") || strings.Contains(body, `class="msg"`) {
			t.Error("a link made the console show a message of its choosing")
		}
		if code, _, _ := get(t, srv.URL, "/dead?aggregate_type=order"); code != http.StatusBadRequest {
			t.Errorf("half an aggregate = %d, want 400", code)
		}
		if code, _, h := get(t, srv.URL, "/static/console.css"); code != http.StatusOK || !strings.HasPrefix(h.Get("Content-Type"), "text/css") {
			t.Errorf("stylesheet = %d %q", code, h.Get("Content-Type"))
		}
	})
}

// TestConsoleActions: requeue and skip change the database as the CLI's
// do; a POST without the CSRF token, or from another origin, changes
// nothing.
func TestConsoleActions(t *testing.T) {
	consoleTargets(t, func(t *testing.T, tgt testdb.Target) {
		f := newFixture(t, tgt)
		c := f.console(t, consoleOptions{refresh: 5 * time.Second})
		srv := httptest.NewServer(c.handler())
		defer srv.Close()
		in := f.d
		state := func(id string) dialects.State {
			t.Helper()
			r, err := in.Get(t.Context(), f.db, id)
			if err != nil {
				t.Fatal(err)
			}
			return r.State
		}

		for name, form := range map[string]url.Values{
			"no CSRF token":    {"all": {"1"}},
			"wrong CSRF token": {"all": {"1"}, csrfField: {strings.Repeat("0", len(c.csrf))}},
		} {
			for _, path := range []string{"/requeue", "/skip"} {
				if code, body, _ := post(t, srv.URL, path, form); code != http.StatusForbidden || !strings.Contains(body, "CSRF") {
					t.Fatalf("POST %s with %s = %d, want 403: %s", path, name, code, body)
				}
			}
		}
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+"/requeue",
			strings.NewReader(url.Values{"all": {"1"}, csrfField: {c.csrf}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", "http://evil.example")
		if code, _, _ := do(t, req); code != http.StatusForbidden {
			t.Fatalf("cross-origin POST = %d, want 403", code)
		}
		if state(f.heads["a"]) != dialects.StateDead || state(f.heads["b"]) != dialects.StateDead {
			t.Fatal("a refused POST changed the table")
		}
		if code, _, _ := post(t, srv.URL, "/requeue", url.Values{csrfField: {c.csrf}}); code != http.StatusBadRequest {
			t.Fatalf("requeue without a selector = %d, want 400", code)
		}

		// Requeue a's head: it goes back to pending and is read before a's later event.
		code, _, h := post(t, srv.URL, "/requeue", url.Values{csrfField: {c.csrf}, "id": {f.heads["a"]}, "back": {"/events/" + f.heads["a"]}})
		if code != http.StatusSeeOther || !strings.HasPrefix(h.Get("Location"), "/events/"+f.heads["a"]+"?done=requeue&n=1") {
			t.Fatalf("requeue = %d, Location %q", code, h.Get("Location"))
		}
		if state(f.heads["a"]) != dialects.StatePending {
			t.Fatal("requeued event is not pending")
		}
		if _, body, _ := get(t, srv.URL, h.Get("Location")); !strings.Contains(body, "requeued 1 dead event") || !strings.Contains(body, `id="state">pending`) ||
			!strings.Contains(body, `content="5; url=/events/`+f.heads["a"]+`"`) {
			t.Fatalf("the event page after requeue lacks the message or the state:\n%s", body)
		}
		// Skip b by aggregate: its head stays dead, its later event flows.
		code, _, h = post(t, srv.URL, "/skip", url.Values{csrfField: {c.csrf}, "aggregate_type": {"order"}, "aggregate_id": {"b"}, "back": {"//evil.example/"}})
		if code != http.StatusSeeOther || !strings.HasPrefix(h.Get("Location"), "/?done=skip&n=1") {
			t.Fatalf("skip = %d, Location %q (a foreign back must become /)", code, h.Get("Location"))
		}
		if state(f.heads["b"]) != dialects.StateDead {
			t.Fatal("skipped event is not dead")
		}
		if got := idsOf(readAll(t, f.db, f.d, time.Now())); !slices.Equal(got, []string{f.heads["a"], f.later["a"], f.later["b"]}) {
			t.Fatalf("read after requeue a and skip b = %v, want a's head %s, a's later %s, b's later %s", got, f.heads["a"], f.later["a"], f.later["b"])
		}
		// Nothing dead is blocking now; requeue all requeues b's skipped head.
		if code, _, h = post(t, srv.URL, "/requeue", url.Values{csrfField: {c.csrf}, "all": {"1"}, "back": {"/dead"}}); code != http.StatusSeeOther ||
			!strings.Contains(h.Get("Location"), "done=requeue&n=1") {
			t.Fatalf("requeue all = %d %q", code, h.Get("Location"))
		}
		if state(f.heads["b"]) != dialects.StatePending {
			t.Fatal("requeue all left b's head dead")
		}
	})
}

// TestConsoleReadOnly: -read-only shows no action and refuses every one.
func TestConsoleReadOnly(t *testing.T) {
	f := newFixture(t, testdb.Targets()[0])
	c := f.console(t, consoleOptions{readOnly: true})
	srv := httptest.NewServer(c.handler())
	defer srv.Close()
	for _, path := range []string{"/", "/blocked", "/dead", "/events/" + f.heads["a"]} {
		code, body, _ := get(t, srv.URL, path)
		if code != http.StatusOK || strings.Contains(body, `method="post"`) || strings.Contains(body, "data-act=") || !strings.Contains(body, "read-only") {
			t.Fatalf("read-only GET %s = %d, with actions or without the badge:\n%s", path, code, body)
		}
	}
	for _, path := range []string{"/requeue", "/skip"} {
		if code, _, _ := post(t, srv.URL, path, url.Values{csrfField: {c.csrf}, "all": {"1"}}); code != http.StatusForbidden {
			t.Fatalf("read-only POST %s = %d, want 403", path, code)
		}
	}
	if r, err := f.d.Get(t.Context(), f.db, f.heads["a"]); err != nil || r.State != dialects.StateDead {
		t.Fatalf("read-only console changed a's head: %v %v", r.State, err)
	}
}

// TestConsoleToken: with a token, every request needs it (a bearer header
// or the cookie of the login form); without one, only loopback hosts are
// answered.
func TestConsoleToken(t *testing.T) {
	f := newFixture(t, testdb.Targets()[0])
	const token = "s3cret-console-token"
	c := f.console(t, consoleOptions{token: token})
	srv := httptest.NewServer(c.handler())
	defer srv.Close()

	if code, body, _ := get(t, srv.URL, "/dead"); code != http.StatusUnauthorized || !strings.Contains(body, `name="token"`) || strings.Contains(body, f.heads["a"]) {
		t.Fatalf("GET without a token = %d (want 401 and the login form, no data)", code)
	}
	if code, _, _ := post(t, srv.URL, "/requeue", url.Values{csrfField: {c.csrf}, "all": {"1"}}); code != http.StatusUnauthorized {
		t.Fatalf("POST without a token = %d, want 401", code)
	}
	bearer := func(tok string) int {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+"/", nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		code, _, _ := do(t, req)
		return code
	}
	if code := bearer("wrong-token-wrong-token"); code != http.StatusUnauthorized {
		t.Fatalf("wrong bearer token = %d, want 401", code)
	}
	if code := bearer(token); code != http.StatusOK {
		t.Fatalf("right bearer token = %d, want 200", code)
	}
	if code, body, _ := post(t, srv.URL, "/login", url.Values{"token": {"nope"}}); code != http.StatusUnauthorized || !strings.Contains(body, "wrong token") {
		t.Fatalf("login with a wrong token = %d", code)
	}
	code, _, h := post(t, srv.URL, "/login", url.Values{"token": {token}})
	ck := (&http.Response{Header: h}).Cookies()
	if code != http.StatusSeeOther || len(ck) != 1 || ck[0].Name != sessionCookie || !ck[0].HttpOnly || ck[0].SameSite != http.SameSiteStrictMode || ck[0].Value == token {
		t.Fatalf("login = %d, cookies %v", code, ck)
	}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+"/dead", nil)
	req.AddCookie(ck[0])
	if code, body, _ := do(t, req); code != http.StatusOK || !strings.Contains(body, f.heads["a"]) {
		t.Fatalf("GET with the session cookie = %d", code)
	}
	req.Header.Set("Cookie", sessionCookie+"=forged")
	if code, _, _ := do(t, req); code != http.StatusUnauthorized {
		t.Fatalf("GET with a forged cookie = %d, want 401", code)
	}

	// Without a token, a request for another host (DNS rebinding) is refused.
	open := httptest.NewServer(f.console(t, consoleOptions{}).handler())
	defer open.Close()
	req, _ = http.NewRequestWithContext(t.Context(), http.MethodGet, open.URL+"/", nil)
	req.Host = "attacker.example"
	if code, _, _ := do(t, req); code != http.StatusForbidden {
		t.Fatalf("foreign Host without a token = %d, want 403", code)
	}
}

// TestServeListen: a non-loopback address needs a token; serve stops
// cleanly when its context ends and never prints the DSN.
func TestServeListen(t *testing.T) {
	dsn := "file:" + t.TempDir() + "/console.db"
	noEnv := func(string) string { return "" }
	for _, c := range []struct {
		args []string
		env  func(string) string
		want error
	}{
		{[]string{"-addr", "0.0.0.0:0"}, noEnv, errNeedToken},
		{[]string{"-addr", ":0"}, noEnv, errNeedToken},
		{[]string{"-addr", "192.0.2.1:0"}, noEnv, errNeedToken},
		{[]string{"-addr", "0.0.0.0:0", "-token", "short"}, noEnv, errUsage},
		{[]string{"-addr", "nonsense"}, noEnv, errUsage},
		{[]string{"-addr", "0.0.0.0:0"}, func(k string) string { return map[string]string{consoleTokenEnv: "x"}[k] }, errUsage},
	} {
		var out strings.Builder
		err := runEnv(t.Context(), append([]string{"-dsn", dsn, "serve"}, c.args...), &out, &out, c.env)
		if !errors.Is(err, c.want) {
			t.Errorf("serve %q = %v, want %v", c.args, err, c.want)
		}
	}
	if err := run(t.Context(), []string{"-dsn", dsn, "migrate"}, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	logs := &lineWaiter{lines: make(chan string, 16)}
	done := make(chan error, 1)
	go func() {
		done <- runEnv(ctx, []string{"-dsn", dsn, "serve", "-addr", "localhost:0"}, io.Discard, logs, noEnv)
	}()
	var line string
	select {
	case line = <-logs.lines:
	case err := <-done:
		t.Fatalf("serve returned before listening: %v", err)
	}
	_, rest, ok := strings.Cut(line, "url=")
	if !ok || strings.Contains(line, dsn) {
		t.Fatalf("serve's first log line %q: no url, or the DSN", line)
	}
	base := strings.TrimSuffix(strings.Fields(rest)[0], "/")
	if code, _, _ := get(t, base, "/"); code != http.StatusOK {
		t.Fatalf("GET / on serve = %d", code)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve after cancel = %v, want nil", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop within 10s of its context ending")
	}
}

// lineWaiter is an io.Writer that sends each written line on a channel
// (dropping lines nobody reads).
type lineWaiter struct{ lines chan string }

func (w *lineWaiter) Write(p []byte) (int, error) {
	for l := range strings.Lines(string(p)) {
		select {
		case w.lines <- l:
		default:
		}
	}
	return len(p), nil
}
