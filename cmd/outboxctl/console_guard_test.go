package main

import (
	"bytes"
	"context"
	"database/sql"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/internal/testdb"
)

// syncBuffer is a bytes.Buffer safe for the console's log.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// loggedConsole is f.console with its log in a buffer.
func (f *fixture) loggedConsole(t *testing.T, o consoleOptions) (*console, *syncBuffer) {
	t.Helper()
	if o.addr == "" {
		o.addr = "127.0.0.1:0"
	}
	if o.limit == 0 {
		o.limit = 50
	}
	logs := &syncBuffer{}
	c, err := newConsole(&env{stderr: logs, db: f.db, d: f.d, redact: func(err error) error { return redact(err, f.dsn) }}, o)
	if err != nil {
		t.Fatal(err)
	}
	return c, logs
}

// serve sends req to c's handler from remote (host:port) and returns the
// recorded answer.
func serveTo(c *console, req *http.Request, remote string) *httptest.ResponseRecorder {
	req.RemoteAddr = remote
	rec := httptest.NewRecorder()
	c.handler().ServeHTTP(rec, req)
	return rec
}

func newReq(t *testing.T, method, path string, form url.Values) *http.Request {
	t.Helper()
	var body *strings.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	} else {
		body = strings.NewReader("")
	}
	req := httptest.NewRequestWithContext(t.Context(), method, "http://127.0.0.1:8080"+path, body)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	return req
}

// TestConsoleRefusesProxiedWithoutToken: without a token, a request that a
// proxy forwarded (nginx sends Host: 127.0.0.1, so the Host check passes)
// is refused with a plain error that says to set a token, logged once;
// with a token the same request is served.
func TestConsoleRefusesProxiedWithoutToken(t *testing.T) {
	f := newFixture(t, testdb.Targets()[0])
	c, logs := f.loggedConsole(t, consoleOptions{})
	for _, h := range [][2]string{
		{"X-Forwarded-For", "203.0.113.7"}, {"X-Forwarded-Proto", "https"}, {"X-Forwarded-Host", "ops.example"},
		{"Forwarded", "for=203.0.113.7;proto=https"}, {"Via", "1.1 proxy"},
	} {
		for _, path := range []string{"/", "/dead", "/events/" + f.heads["a"]} {
			req := newReq(t, http.MethodGet, path, nil)
			req.Header.Set(h[0], h[1])
			rec := serveTo(c, req, "127.0.0.1:5555")
			body := rec.Body.String()
			if rec.Code != http.StatusForbidden || !strings.Contains(body, "no token") || !strings.Contains(body, "-token-file") ||
				!strings.HasPrefix(rec.Header().Get("Content-Type"), "text/plain") || strings.Contains(body, f.heads["a"]) {
				t.Fatalf("GET %s with %s = %d %q: %s", path, h[0], rec.Code, rec.Header().Get("Content-Type"), body)
			}
		}
	}
	req := newReq(t, http.MethodPost, "/requeue", url.Values{csrfField: {c.csrf}, "all": {"1"}})
	req.Header.Set("X-Forwarded-For", "203.0.113.7")
	if rec := serveTo(c, req, "127.0.0.1:5555"); rec.Code != http.StatusForbidden {
		t.Fatalf("proxied POST without a token = %d, want 403", rec.Code)
	}
	if r, err := f.d.Get(t.Context(), f.db, f.heads["a"]); err != nil || r.State != dialects.StateDead {
		t.Fatalf("a refused proxied POST changed the table: %v %v", r.State, err)
	}
	if n := strings.Count(logs.String(), "refused a request through a proxy"); n != 1 {
		t.Fatalf("the refusal was logged %d times, want once:\n%s", n, logs)
	}
	if rec := serveTo(c, newReq(t, http.MethodGet, "/", nil), "127.0.0.1:5555"); rec.Code != http.StatusOK {
		t.Fatalf("a direct loopback request = %d, want 200", rec.Code)
	}

	const token = "proxy-console-token-1234"
	tc, _ := f.loggedConsole(t, consoleOptions{token: token})
	req = newReq(t, http.MethodGet, "/dead", nil)
	req.Header.Set("X-Forwarded-For", "203.0.113.7")
	req.Header.Set("Authorization", "Bearer "+token)
	if rec := serveTo(tc, req, "127.0.0.1:5555"); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), f.heads["a"]) {
		t.Fatalf("proxied request with the token = %d", rec.Code)
	}
}

// TestConsoleCookieSecure: the session cookie is Secure when a proxy says
// the browser used https (X-Forwarded-Proto or Forwarded) and with
// -cookie-secure; not on plain http without them.
func TestConsoleCookieSecure(t *testing.T) {
	f := newFixture(t, testdb.Targets()[0])
	const token = "cookie-console-token-1234"
	login := func(c *console, hdr ...string) *http.Cookie {
		t.Helper()
		req := newReq(t, http.MethodPost, "/login", url.Values{"token": {token}})
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		rec := serveTo(c, req, "127.0.0.1:5555")
		ck := rec.Result().Cookies()
		if rec.Code != http.StatusSeeOther || len(ck) != 1 || ck[0].Name != sessionCookie {
			t.Fatalf("login %q = %d, cookies %v", hdr, rec.Code, ck)
		}
		return ck[0]
	}
	c, _ := f.loggedConsole(t, consoleOptions{token: token})
	if login(c).Secure {
		t.Error("plain http without a proxy header: Secure cookie (a browser would drop it)")
	}
	for _, hdr := range [][]string{{"X-Forwarded-Proto", "https"}, {"X-Forwarded-Proto", "HTTPS, http"}, {"Forwarded", `for=1.2.3.4;proto="https"`}} {
		if !login(c, hdr...).Secure {
			t.Errorf("login behind a proxy saying %q: cookie not Secure", hdr)
		}
	}
	if login(c, "X-Forwarded-Proto", "http").Secure {
		t.Error("X-Forwarded-Proto http: Secure cookie")
	}
	always, _ := f.loggedConsole(t, consoleOptions{token: token, cookieSecure: true})
	if !login(always).Secure {
		t.Error("-cookie-secure: cookie not Secure")
	}
}

// TestConsoleWrongTokens: wrong tokens are logged with the remote address
// and never the token; after wrongTokenBurst of them an address gets 429
// for every token, the right one too, until its bucket refills; another
// address is not affected.
func TestConsoleWrongTokens(t *testing.T) {
	f := newFixture(t, testdb.Targets()[0])
	const token = "limited-console-token-1234"
	c, logs := f.loggedConsole(t, consoleOptions{token: token})
	now := time.Now()
	c.now = func() time.Time { return now }
	bearer := func(tok, remote string) int {
		req := newReq(t, http.MethodGet, "/", nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		return serveTo(c, req, remote).Code
	}
	const attacker, other = "198.51.100.9:4000", "192.0.2.44:4000"
	for i := range wrongTokenBurst {
		if code := bearer("guess-number-"+string(rune('a'+i)), attacker); code != http.StatusUnauthorized {
			t.Fatalf("wrong token %d = %d, want 401", i, code)
		}
	}
	rec := serveTo(c, func() *http.Request {
		r := newReq(t, http.MethodGet, "/", nil)
		r.Header.Set("Authorization", "Bearer "+token)
		return r
	}(), attacker)
	if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") == "" {
		t.Fatalf("right token after %d wrong ones = %d (Retry-After %q), want 429", wrongTokenBurst, rec.Code, rec.Header().Get("Retry-After"))
	}
	if rec := serveTo(c, newReq(t, http.MethodPost, "/login", url.Values{"token": {token}}), attacker); rec.Code != http.StatusTooManyRequests {
		t.Fatalf("login form from a limited address = %d, want 429", rec.Code)
	}
	if code := bearer(token, other); code != http.StatusOK {
		t.Fatalf("right token from another address = %d, want 200", code)
	}
	if rec := serveTo(c, newReq(t, http.MethodPost, "/login", url.Values{"token": {"wrong-login-token"}}), other); rec.Code != http.StatusUnauthorized {
		t.Fatalf("wrong login = %d, want 401", rec.Code)
	}
	// A proxy's Basic credentials are no wrong token.
	for range wrongTokenBurst + 1 {
		req := newReq(t, http.MethodGet, "/", nil)
		req.SetBasicAuth("ops", "proxy-password")
		if rec := serveTo(c, req, other); rec.Code != http.StatusUnauthorized {
			t.Fatalf("Basic credentials = %d, want 401 (the login form)", rec.Code)
		}
	}
	if code := bearer(token, other); code != http.StatusOK {
		t.Fatalf("right token after Basic credentials = %d, want 200", code)
	}
	now = now.Add(wrongTokenEvery)
	if code := bearer(token, attacker); code != http.StatusOK {
		t.Fatalf("right token once the bucket refilled = %d, want 200", code)
	}
	out := logs.String()
	if n := strings.Count(out, "wrong token refused"); n != wrongTokenBurst+1 {
		t.Fatalf("%d wrong tokens logged, want %d:\n%s", n, wrongTokenBurst+1, out)
	}
	if !strings.Contains(out, "remote="+attacker) || !strings.Contains(out, "via=\"login form\"") {
		t.Fatalf("the log lacks the remote address or the way:\n%s", out)
	}
	if strings.Contains(out, "guess-number") || strings.Contains(out, "wrong-login-token") || strings.Contains(out, token) {
		t.Fatalf("the log shows a token:\n%s", out)
	}
}

// TestConsoleMalformedIDs: an id that is not a UUID answers 400 with a
// plain message, before the database (PostgreSQL would fail the uuid cast
// with a 500 and its raw error).
func TestConsoleMalformedIDs(t *testing.T) {
	consoleTargets(t, func(t *testing.T, tgt testdb.Target) {
		f := newFixture(t, tgt)
		c, _ := f.loggedConsole(t, consoleOptions{})
		for _, path := range []string{"/skip", "/requeue"} {
			for _, ids := range [][]string{{"not-a-uuid"}, {f.heads["a"], "x'; DROP TABLE x; --"}, {f.heads["a"] + "0"}} {
				rec := serveTo(c, newReq(t, http.MethodPost, path, url.Values{csrfField: {c.csrf}, "id": ids}), "127.0.0.1:5555")
				body := rec.Body.String()
				if rec.Code != http.StatusBadRequest || !strings.Contains(body, "not an event id") ||
					strings.Contains(body, "pq:") || strings.Contains(body, "invalid input syntax") {
					t.Fatalf("POST %s id=%q = %d: %s", path, ids, rec.Code, body)
				}
			}
		}
		if r, err := f.d.Get(t.Context(), f.db, f.heads["a"]); err != nil || r.State != dialects.StateDead {
			t.Fatalf("a refused action changed a's head: %v %v", r.State, err)
		}
		rec := serveTo(c, newReq(t, http.MethodGet, "/events/not-a-uuid", nil), "127.0.0.1:5555")
		if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "not an event id") {
			t.Fatalf("GET /events/not-a-uuid = %d", rec.Code)
		}
	})
}

// payloadFreeDialect fails the test when a page fetches payloads it does
// not show.
type payloadFreeDialect struct {
	dialects.Dialect
	t *testing.T
}

func (d payloadFreeDialect) List(ctx context.Context, db *sql.DB, f dialects.ListFilter) ([]dialects.Row, error) {
	d.t.Errorf("a list page called List (payloads) instead of ListSummaries")
	return d.Dialect.List(ctx, db, f)
}

func (d payloadFreeDialect) Blockers(ctx context.Context, db *sql.DB, now time.Time, limit int) ([]dialects.Blocker, error) {
	d.t.Errorf("a list page called Blockers (payloads) instead of BlockerSummaries")
	return d.Dialect.Blockers(ctx, db, now, limit)
}

// TestConsoleListsWithoutPayloads: the overview, dead and blocked pages
// read payload sizes, never payloads.
func TestConsoleListsWithoutPayloads(t *testing.T) {
	f := newFixture(t, testdb.Targets()[0])
	f.d = payloadFreeDialect{f.d, t}
	c, _ := f.loggedConsole(t, consoleOptions{})
	for _, path := range []string{"/", "/dead", "/blocked", "/dead?aggregate_type=order&aggregate_id=a"} {
		rec := serveTo(c, newReq(t, http.MethodGet, path, nil), "127.0.0.1:5555")
		if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), f.heads["a"]) {
			t.Fatalf("GET %s = %d, without a's head", path, rec.Code)
		}
	}
}

// TestServeLimitAndTokenFile: -limit is capped (no overflow to a 400 on
// every page); the token comes from -token-file (trimmed) so that it does
// not show in ps; -token with -token-file, an empty or missing file are
// usage errors; -token warns that it shows in ps.
func TestServeLimitAndTokenFile(t *testing.T) {
	dsn := "file:" + t.TempDir() + "/console.db"
	noEnv := func(string) string { return "" }
	for _, limit := range []string{"0", "1001", "9223372036854775807"} {
		var out bytes.Buffer
		err := runEnv(t.Context(), []string{"-dsn", dsn, "serve", "-limit", limit}, &out, &out, noEnv)
		if err == nil || !strings.Contains(err.Error(), "between 1 and 1000") {
			t.Errorf("serve -limit %s = %v, want a usage error naming the bounds", limit, err)
		}
	}

	dir := t.TempDir()
	file := filepath.Join(dir, "token")
	if err := os.WriteFile(file, []byte("  file-token-0123456789\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	e := &env{stderr: &logs, cmdline: map[string]bool{"token": true}}
	o := consoleOptions{}
	if err := o.readToken(e, file); err != nil || o.token != "file-token-0123456789" {
		t.Fatalf("-token-file: token %q, %v", o.token, err)
	}
	for _, c := range []struct {
		token, file string
	}{{"cli-token-0123456789", file}, {"", empty}, {"", filepath.Join(dir, "missing")}} {
		o := consoleOptions{token: c.token}
		if err := o.readToken(e, c.file); err == nil {
			t.Errorf("-token %q -token-file %s: no error", c.token, c.file)
		}
	}
	o = consoleOptions{token: "cli-token-0123456789"}
	if err := o.readToken(e, ""); err != nil || !strings.Contains(logs.String(), "shows in the process list") ||
		strings.Contains(logs.String(), "cli-token-0123456789") {
		t.Fatalf("-token: %v; log %q (want a warning without the token)", err, logs.String())
	}
	// serve refuses a non-loopback address without a token, and takes
	// the file's token for one.
	var out bytes.Buffer
	if err := runEnv(t.Context(), []string{"-dsn", dsn, "serve", "-addr", "0.0.0.0:0", "-token-file", empty}, &out, &out, noEnv); err == nil {
		t.Fatal("serve with an empty token file started")
	}
}
