package main

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"embed"
	"encoding/hex"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
)

// assets are the console's templates and stylesheet, embedded in the binary.
//
//go:embed console
var assets embed.FS

// Names of the console's cookie and form fields.
const (
	// sessionCookie holds the session proof a browser gets after it logs in
	// with the token.
	sessionCookie = "outboxctl_session"
	// csrfField is the form field every POST must carry.
	csrfField = "csrf"
)

// console is the web console of one outbox table: outboxctl serve.
//
// Access: with a token, every request must carry "Authorization: Bearer
// <token>" or the session cookie that the login form (POST /login with the
// token) sets; the cookie's value is derived from a per-process secret, so
// a restart logs every browser out. Without a token the console answers
// only on a loopback address, only to requests whose Host is a loopback
// name (a DNS-rebinding page cannot reach it), and to no request that a
// proxy forwarded (a Forwarded, X-Forwarded-* or Via header: a reverse
// proxy on the same machine would otherwise open it to its clients). Wrong
// tokens are logged and limited per remote address (tokenLimiter); the
// session cookie is Secure behind TLS, behind a proxy that says https, or
// with -cookie-secure.
//
// Actions (POST /requeue, POST /skip) carry a CSRF token: a value derived
// from the same per-process secret, written into every form (synchronizer
// token). A POST without it, or from another Origin, is refused with 403.
type console struct {
	db *sql.DB
	// d is the table's dialect; with -all-tables, the one that finds the
	// tables (each table's is in tables).
	d      dialects.Dialect
	tables *consoleTables // nil without -all-tables
	opts   consoleOptions
	log    *slog.Logger
	redact func(error) error

	csrf    string // the CSRF token of this process
	session string // the session cookie's value of this process
	pages   map[string]*template.Template

	now          func() time.Time // the limiter's clock
	limits       *tokenLimiter    // wrong tokens per remote address
	proxyLogOnce sync.Once        // the log line of the first proxied request refused
}

// newConsole builds the console on e's database and dialect.
func newConsole(e *env, o consoleOptions) (*console, error) {
	var secret [32]byte
	if _, err := rand.Read(secret[:]); err != nil {
		return nil, fmt.Errorf("console secret: %w", err)
	}
	c := &console{db: e.db, d: e.d, opts: o, log: e.logger(), redact: e.redact,
		csrf: derive(secret[:], "csrf"), session: derive(secret[:], "session"),
		now: time.Now, limits: newTokenLimiter()}
	if c.redact == nil {
		c.redact = func(err error) error { return err }
	}
	if e.g != nil && e.g.allTables {
		c.tables = newConsoleTables(e)
	}
	var err error
	if c.pages, err = parsePages(); err != nil {
		return nil, err
	}
	return c, nil
}

// derive returns HMAC-SHA256(secret, purpose) in hex.
func derive(secret []byte, purpose string) string {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(purpose))
	return hex.EncodeToString(m.Sum(nil))
}

// parsePages parses each page template with the shared layout.
func parsePages() (map[string]*template.Template, error) {
	base, err := template.New("layout.html").Funcs(templateFuncs).ParseFS(assets, "console/layout.html")
	if err != nil {
		return nil, fmt.Errorf("console templates: %w", err)
	}
	names, err := fs.Glob(assets, "console/page_*.html")
	if err != nil {
		return nil, fmt.Errorf("console templates: %w", err)
	}
	pages := map[string]*template.Template{}
	for _, n := range names {
		t, err := template.Must(base.Clone()).ParseFS(assets, n)
		if err != nil {
			return nil, fmt.Errorf("console templates: %w", err)
		}
		name := strings.TrimSuffix(strings.TrimPrefix(n, "console/page_"), ".html")
		pages[name] = t
	}
	return pages, nil
}

// handler routes the console's pages behind its guards.
func (c *console) handler() http.Handler {
	mux := http.NewServeMux()
	static, _ := fs.Sub(assets, "console")
	mux.Handle("GET /static/console.css", http.StripPrefix("/static/", http.FileServerFS(static)))
	// One table's pages: at the root, or with -all-tables under
	// /t/<table>/ for each table found (inTable), the root redirecting to
	// the tables page.
	for _, p := range []struct {
		pattern string
		h       http.HandlerFunc
	}{
		{"GET /{$}", c.overview},
		{"GET /partitions", c.partitions},
		{"GET /blocked", c.blocked},
		{"GET /dead", c.dead},
		{"GET /events/{id}", c.event},
		{"POST /requeue", c.action("requeue")},
		{"POST /skip", c.action("skip")},
	} {
		if c.tables == nil {
			mux.HandleFunc(p.pattern, p.h)
			continue
		}
		method, path, _ := strings.Cut(p.pattern, " ")
		mux.HandleFunc(method+" "+tablePrefix+"{table}"+path, c.inTable(p.h))
	}
	if c.tables != nil {
		mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "/tables", http.StatusSeeOther)
		})
		mux.HandleFunc("GET /tables", c.tablesPage)
	}
	mux.HandleFunc("GET /login", c.loginPage)
	mux.HandleFunc("POST /login", c.login)
	return c.guard(mux)
}

// guard sets the security headers and checks the Host, the token and, for
// every POST, the CSRF token.
func (c *console) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'")
		h.Set("X-Frame-Options", "DENY")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-store")
		if c.opts.token == "" && proxied(r) {
			c.proxyLogOnce.Do(func() {
				c.log.Warn("console: refused a request through a proxy (Forwarded, X-Forwarded-* or Via header): "+
					"behind a proxy the console needs a token", "remote", r.RemoteAddr)
			})
			http.Error(w, "outboxctl console: this request came through a proxy and the console has no token: "+
				"start outboxctl serve with -token-file or "+consoleTokenEnv, http.StatusForbidden)
			return
		}
		if c.opts.token == "" && !isLoopback(hostOnly(r.Host)) {
			c.fail(w, r, http.StatusForbidden, "this console answers only to localhost: start it with -token-file or "+consoleTokenEnv+" to use it from elsewhere")
			return
		}
		if r.Method == http.MethodPost {
			r.Body = http.MaxBytesReader(w, r.Body, 1<<16)
		}
		if c.opts.token != "" && presentsToken(r) && c.limits.blocked(remoteHost(r), c.now()) {
			w.Header().Set("Retry-After", strconv.Itoa(int(wrongTokenEvery/time.Second)))
			c.fail(w, r, http.StatusTooManyRequests, "too many wrong tokens from this address: wait and try again")
			return
		}
		if r.URL.Path == "/login" || r.URL.Path == "/static/console.css" {
			next.ServeHTTP(w, r)
			return
		}
		if !c.authorized(r) {
			if hasBearer(r) {
				c.wrongToken(r, "Authorization header")
			}
			if r.Method == http.MethodGet {
				c.render(w, r, http.StatusUnauthorized, "login", "Log in", nil)
				return
			}
			c.fail(w, r, http.StatusUnauthorized, "a valid token is required")
			return
		}
		if r.Method == http.MethodPost {
			if err := c.checkPost(r); err != nil {
				c.fail(w, r, http.StatusForbidden, err.Error())
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// authorized reports whether r may use the console.
func (c *console) authorized(r *http.Request) bool {
	if c.opts.token == "" {
		return true
	}
	if bearer, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		return hmac.Equal([]byte(bearer), []byte(c.opts.token))
	}
	if ck, err := r.Cookie(sessionCookie); err == nil {
		return hmac.Equal([]byte(ck.Value), []byte(c.session))
	}
	return false
}

// presentsToken reports whether r offers the token: a bearer token or the
// login form. (A session cookie is not a token: a stale one, after a
// restart, is no guess; nor is another scheme's Authorization, such as a
// proxy's Basic credentials.)
func presentsToken(r *http.Request) bool {
	return hasBearer(r) || (r.Method == http.MethodPost && r.URL.Path == "/login")
}

// hasBearer reports whether r carries "Authorization: Bearer ...".
func hasBearer(r *http.Request) bool {
	return strings.HasPrefix(r.Header.Get("Authorization"), "Bearer ")
}

// wrongToken logs a wrong token (never the token itself) and counts it
// against the remote address.
func (c *console) wrongToken(r *http.Request, via string) {
	c.limits.wrong(remoteHost(r), c.now())
	c.log.Warn("console: wrong token refused", "via", via, "remote", r.RemoteAddr, "path", r.URL.Path)
}

// checkPost refuses a POST from another origin or without the CSRF token.
func (c *console) checkPost(r *http.Request) error {
	if o := r.Header.Get("Origin"); o != "" && o != "null" {
		u, err := url.Parse(o)
		if err != nil || u.Host != r.Host {
			return fmt.Errorf("cross-origin request refused (Origin %q)", o)
		}
	}
	if !hmac.Equal([]byte(r.PostFormValue(csrfField)), []byte(c.csrf)) {
		return fmt.Errorf("missing or wrong CSRF token: reload the page and try again")
	}
	return nil
}

// hostOnly returns the host of a Host header without its port.
func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return hostport
}

// loginPage shows the token form.
func (c *console) loginPage(w http.ResponseWriter, r *http.Request) {
	if c.authorized(r) {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	c.render(w, r, http.StatusOK, "login", "Log in", nil)
}

// login checks the token and sets the session cookie.
func (c *console) login(w http.ResponseWriter, r *http.Request) {
	if c.opts.token == "" {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	if !hmac.Equal([]byte(r.PostFormValue("token")), []byte(c.opts.token)) {
		c.wrongToken(r, "login form")
		c.render(w, r, http.StatusUnauthorized, "login", "Log in", "wrong token")
		return
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: c.session, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: c.secureCookie(r)})
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// view is what every page template receives.
type view struct {
	Title string
	Path  string
	// Base prefixes the links to the table's pages: "" for the one table,
	// "/t/<table>" with -all-tables.
	Base string
	// Table is the table the page shows; "" on the tables page.
	Table string
	// Pattern is -tables-pattern with -all-tables, else "".
	Pattern  string
	Dialect  string
	Refresh  int    // seconds; 0: no refresh
	Reload   string // the page to refresh to: this one without its message
	CSRF     string
	ReadOnly bool
	Authed   bool // a token is in use and this browser is logged in
	Msg      string
	Now      time.Time
	Data     any
}

// render executes a page into a buffer, then writes it with status.
func (c *console) render(w http.ResponseWriter, r *http.Request, status int, page, title string, data any) {
	t, ok := c.pages[page]
	if !ok {
		http.Error(w, "no such page", http.StatusInternalServerError)
		return
	}
	v := view{Title: title, Path: r.URL.Path, Dialect: c.d.Name(), CSRF: c.csrf,
		ReadOnly: c.opts.readOnly, Authed: c.opts.token != "" && c.authorized(r), Msg: doneMessage(r.URL.Query()),
		Now: time.Now(), Data: data}
	if d, ok := c.tableOf(r); ok {
		v.Table = d.Table()
	}
	if c.tables != nil {
		v.Pattern = c.tables.pattern
		if v.Table != "" {
			v.Base = tablePath(v.Table)
		}
	}
	if page != "login" && page != "error" {
		v.Refresh = int(c.opts.refresh.Round(time.Second) / time.Second)
		u := *r.URL
		q := u.Query()
		q.Del("done")
		q.Del("n")
		u.RawQuery = q.Encode()
		v.Reload = u.RequestURI()
	}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, "layout.html", v); err != nil {
		c.log.Error("console: render page", "page", page, "err", err)
		http.Error(w, "cannot render the page: see the console's log", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes()) // the client left: nothing to do

}

// fail answers with an error page.
func (c *console) fail(w http.ResponseWriter, r *http.Request, status int, msg string) {
	c.render(w, r, status, "error", http.StatusText(status), msg)
}

// dbFail logs a database error and answers 500 with its (redacted) text.
func (c *console) dbFail(w http.ResponseWriter, r *http.Request, what string, err error) {
	err = c.redact(fmt.Errorf("%s: %w", what, err))
	c.log.Error("console: "+what, "path", r.URL.Path, "err", err)
	c.fail(w, r, http.StatusInternalServerError, err.Error())
}
