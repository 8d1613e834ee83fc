package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/internal/testdb"
	"github.com/jitoutbox/jitoutbox/outboxtest"
	"github.com/jitoutbox/jitoutbox/relay"
)

// screenshot makes TestConsoleBrowser write the overview to docs/console.png:
//
//	go test ./cmd/outboxctl/ -run TestConsoleBrowser -args -console.screenshot
var screenshot = flag.Bool("console.screenshot", false, "write the console's overview to docs/console.png")

// browserEnv set to 1 makes a missing Chromium fail the browser test
// instead of skipping it (CI sets it).
const browserEnv = "JITOUTBOX_BROWSER"

// chromium returns the path of Debian's Chromium, or skips t (fails it when
// JITOUTBOX_BROWSER=1) when there is none.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"/usr/bin/chromium", "chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv(browserEnv) == "1" {
		t.Fatalf("%s=1 but Chromium is not installed: apt-get install -y chromium", browserEnv)
	}
	t.Skipf("Chromium is not installed (apt-get install -y chromium): skipping the browser test; set %s=1 to fail instead", browserEnv)
	return ""
}

// browser starts a headless Chromium for t and returns its context; it is
// stopped on cleanup.
func browser(t *testing.T) context.Context {
	t.Helper()
	opts := append(slices.Clone(chromedp.DefaultExecAllocatorOptions[:]),
		chromedp.ExecPath(chromium(t)),
		chromedp.NoSandbox, // CI runs as root
		chromedp.DisableGPU,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1360, 900),
		// The machine's network is closed: keep Chromium from calling home.
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("no-first-run", true),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx, chromedp.WithLogf(t.Logf))
	ctx, cancelTimeout := context.WithTimeout(ctx, 2*time.Minute)
	t.Cleanup(func() {
		cancelTimeout()
		cancel()
		cancelAlloc()
	})
	if err := chromedp.Do(ctx); err != nil { // starts the browser
		t.Fatalf("start Chromium: %v", err)
	}
	return ctx
}

// TestConsoleBrowser drives outboxctl serve on PostgreSQL in headless
// Chromium with a relay publishing to a Recorder: the pages load, a payload
// with HTML shows as text, a requeued dead letter is published, a skip
// releases a blocked aggregate, a form without its CSRF token is refused,
// and the login form admits the token.
func TestConsoleBrowser(t *testing.T) {
	ctx := browser(t)
	f := newFixture(t, testdb.Targets()[1]) // postgres-libpq; skips when JITOUTBOX_POSTGRES_DSN is unset
	if err := f.sess.Close(); err != nil {  // the relay takes the partitions
		t.Fatal(err)
	}
	h := outboxtest.Start(t, f.db, f.d, outboxtest.Options{Config: relay.Config{Owner: "relay-1"}})
	c := f.console(t, consoleOptions{retention: relay.DefaultRetention}) // serve's default
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
	steps := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, actions...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	text := func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("text of %s: %v", sel, err)
		}
		return strings.TrimSpace(s)
	}

	// The overview: counts, cleanup's health, blocked aggregates with their
	// reason, dead letters.
	steps("load the overview", chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(chromedp.ID("pending")))
	dead, blockers, deadRow := text("#dead .value"), text(`tr.blocker[data-aggregate="order/c"]`), text(`tr.deadrow[data-id="`+f.heads["a"]+`"]`)
	if dead != "2" || !strings.Contains(blockers, "backing-off") || !strings.Contains(blockers, "broker down") ||
		!strings.Contains(deadRow, "poison <b>a</b>") {
		t.Fatalf("overview: dead %q, order/c %q, a's dead row %q", dead, blockers, deadRow)
	}
	if past := text("#past-retention"); !strings.Contains(past, "Past retention") || !strings.Contains(past, "retention 168h0m0s") {
		t.Fatalf("overview: past retention card %q", past)
	}
	if *screenshot {
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)) // 100: PNG
		if err != nil {
			t.Fatalf("screenshot: %v", err)
		}
		out := filepath.Join("..", "..", "docs", "console.png")
		if err := os.WriteFile(out, png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s (%d bytes)", out, len(png))
	}

	// The partitions page shows the relay that owns them.
	steps("load the partitions", chromedp.Navigate(srv.URL+"/partitions"), chromedp.WaitVisible(chromedp.CSS("tr.relay")))
	if relays, free := text("tr.relay"), text("#free"); !strings.Contains(relays, "relay-1") || !strings.Contains(relays, "0-63") || free != "none" {
		t.Fatalf("partitions: relay %q, free %q", relays, free)
	}

	// A payload with HTML shows as text and runs nothing.
	steps("load a's dead head", chromedp.Navigate(srv.URL+"/events/"+f.heads["a"]), chromedp.WaitVisible(chromedp.ID("payload")))
	scripts, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("script").length`))
	if err != nil {
		t.Fatal(err)
	}
	if payload, lastErr := text("#payload"), text("#last-error"); payload != scriptPayload || lastErr != "poison <b>a</b>" || scripts != 0 {
		t.Fatalf("event page: payload %q, last error %q, %d script elements", payload, lastErr, scripts)
	}

	// Requeue it: it is published, then a's later event.
	steps("requeue a's head", chromedp.Click(chromedp.CSS(`button[data-act="requeue:id:`+f.heads["a"]+`"]`)),
		chromedp.WaitVisible(chromedp.CSS(".msg")))
	if msg := text(".msg"); !strings.Contains(msg, "requeued 1 dead event") {
		t.Fatalf("after requeue the page says %q", msg)
	}
	h.WaitPublished(t.Context(), f.heads["a"], f.later["a"])
	got := h.Recorder.IDs()
	if slices.Index(got, f.heads["a"]) > slices.Index(got, f.later["a"]) {
		t.Fatalf("published %v: a's later event before its requeued head", got)
	}
	// The relay marks a row after the broker's ack, off the publish path:
	// the Recorder can hold the event while its row still reads pending.
	for deadline := time.Now().Add(10 * time.Second); state(f.heads["a"]) != dialects.StatePublished; {
		if time.Now().After(deadline) {
			t.Fatalf("a's head is %v 10s after its publish, want published", state(f.heads["a"]))
		}
		time.Sleep(20 * time.Millisecond)
	}
	steps("reload the event", chromedp.Navigate(srv.URL+"/events/"+f.heads["a"]), chromedp.WaitVisible(chromedp.ID("state")))
	if st := text("#state"); st != "published" {
		t.Fatalf("a's head shows state %q after its requeue, want published", st)
	}

	// Skip b from the overview: b's later event is published, b's head stays dead.
	steps("skip order/b", chromedp.Navigate(srv.URL+"/"),
		chromedp.Click(chromedp.CSS(`button[data-act="skip:aggregate:order/b"]`)), chromedp.WaitVisible(chromedp.CSS(".msg")))
	if msg := text(".msg"); !strings.Contains(msg, "skipped 1 dead event") {
		t.Fatalf("after skip the page says %q", msg)
	}
	h.WaitPublished(t.Context(), f.later["b"])
	if state(f.heads["b"]) != dialects.StateDead || slices.Contains(h.Recorder.IDs(), f.heads["b"]) {
		t.Fatal("skipped b's head was published")
	}

	// A form whose CSRF token was removed is refused, and changes nothing.
	steps("requeue all without the CSRF token", chromedp.Navigate(srv.URL+"/dead"),
		chromedp.WaitVisible(chromedp.CSS(`button[data-act="requeue:all"]`)))
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.querySelector('button[data-act="requeue:all"]').form.querySelector('input[name=csrf]').remove() === undefined`)); err != nil {
		t.Fatal(err)
	}
	steps("submit it", chromedp.Click(chromedp.CSS(`button[data-act="requeue:all"]`)), chromedp.WaitVisible(chromedp.ID("error")))
	if refusal := text("#error"); !strings.Contains(refusal, "CSRF") || state(f.heads["b"]) != dialects.StateDead {
		t.Fatalf("POST without CSRF: page says %q, b's head %v", refusal, state(f.heads["b"]))
	}
	status, err := chromedp.Run(ctx, chromedp.Evaluate[int](
		`fetch("/skip", {method: "POST", headers: {"Content-Type": "application/x-www-form-urlencoded"}, body: "all=1"}).then(r => r.status)`,
		chromedp.EvalAwaitPromise))
	if err != nil || status != 403 {
		t.Fatalf("fetch POST without CSRF = %d, %v; want 403", status, err)
	}

	t.Run("token", func(t *testing.T) { testBrowserToken(t, ctx, f) })
}

// testBrowserToken: serve refuses a non-loopback address without a token;
// with one, the browser sees the login form until it gives the token.
func testBrowserToken(t *testing.T, ctx context.Context, f *fixture) {
	err := runEnv(t.Context(), []string{"-dsn", f.dsn, "-table", f.d.Table(), "serve", "-addr", "0.0.0.0:0"},
		io.Discard, io.Discard, func(string) string { return "" })
	if !errors.Is(err, errNeedToken) {
		t.Fatalf("serve on 0.0.0.0 without a token = %v, want %v", err, errNeedToken)
	}
	const token = "browser-console-token"
	srv := httptest.NewServer(f.console(t, consoleOptions{token: token}).handler())
	defer srv.Close()
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS(`input[name=token]`)),
		chromedp.SendKeys(chromedp.CSS(`input[name=token]`), "not-the-token"), chromedp.Submit(chromedp.CSS(`input[name=token]`)),
		chromedp.WaitVisible(chromedp.ID("login-error"))); err != nil {
		t.Fatalf("log in with a wrong token: %v", err)
	}
	loginErr, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("login-error")))
	if err != nil || loginErr != "wrong token" {
		t.Fatalf("login error %q, %v", loginErr, err)
	}
	if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.CSS(`input[name=token]`), token), chromedp.Submit(chromedp.CSS(`input[name=token]`)),
		chromedp.WaitVisible(chromedp.ID("pending"))); err != nil {
		t.Fatalf("log in: %v", err)
	}
	if dead, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#dead .value"))); err != nil || dead != "1" {
		t.Fatalf("after login the dead count is %q, %v; want 1", dead, err)
	}
}
