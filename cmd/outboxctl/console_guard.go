package main

import (
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"golang.org/x/time/rate"
)

// Limits on wrong tokens, per remote address: a burst of wrongTokenBurst,
// then one more every wrongTokenEvery. A token has at least minTokenLen
// characters, so this only keeps a guesser slow and its noise in the log
// bounded.
const (
	wrongTokenBurst = 5
	wrongTokenEvery = 5 * time.Second
	// maxTrackedAddrs bounds the addresses the limiter remembers; past it,
	// those whose bucket is full again are forgotten.
	maxTrackedAddrs = 4096
)

// tokenLimiter counts wrong tokens per remote address (a token bucket
// each). Only wrong tokens take from a bucket; an empty bucket refuses
// every token from its address, right or wrong, until it refills.
type tokenLimiter struct {
	mu    sync.Mutex
	addrs map[string]*rate.Limiter
}

func newTokenLimiter() *tokenLimiter { return &tokenLimiter{addrs: map[string]*rate.Limiter{}} }

// blocked reports whether addr has used up its wrong tokens at now.
func (l *tokenLimiter) blocked(addr string, now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	lim, ok := l.addrs[addr]
	return ok && lim.TokensAt(now) < 1
}

// wrong records a wrong token from addr at now.
func (l *tokenLimiter) wrong(addr string, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	lim, ok := l.addrs[addr]
	if !ok {
		if len(l.addrs) >= maxTrackedAddrs {
			for a, x := range l.addrs {
				if x.TokensAt(now) >= wrongTokenBurst {
					delete(l.addrs, a)
				}
			}
		}
		lim = rate.NewLimiter(rate.Every(wrongTokenEvery), wrongTokenBurst)
		l.addrs[addr] = lim
	}
	lim.AllowN(now, 1)
}

// remoteHost is r's remote address without its port.
func remoteHost(r *http.Request) string { return hostOnly(r.RemoteAddr) }

// proxied reports whether r came through a proxy that says so: a
// Forwarded, X-Forwarded-* or Via header. The console's Host check cannot
// tell a proxy's request from a local one (nginx forwards Host:
// 127.0.0.1 by default), so without a token such a request is refused.
func proxied(r *http.Request) bool {
	for k := range r.Header {
		if k == "Forwarded" || k == "Via" || strings.HasPrefix(k, "X-Forwarded-") {
			return true
		}
	}
	return false
}

// forwardedHTTPS reports whether a proxy says the browser used https
// (X-Forwarded-Proto or Forwarded's proto=): the session cookie is then
// Secure. A client can send the header itself; it only makes its own
// cookie Secure.
func forwardedHTTPS(r *http.Request) bool {
	if strings.EqualFold(strings.TrimSpace(strings.Split(r.Header.Get("X-Forwarded-Proto"), ",")[0]), "https") {
		return true
	}
	for _, f := range strings.FieldsFunc(r.Header.Get("Forwarded"), func(c rune) bool { return c == ';' || c == ',' }) {
		k, v, _ := strings.Cut(strings.TrimSpace(f), "=")
		if strings.EqualFold(k, "proto") && strings.EqualFold(strings.Trim(v, `"`), "https") {
			return true
		}
	}
	return false
}

// secureCookie reports whether the session cookie set in answer to r is
// Secure: with -cookie-secure, when the console serves TLS itself, or when
// a proxy says the browser used https.
func (c *console) secureCookie(r *http.Request) bool {
	return c.opts.cookieSecure || r.TLS != nil || forwardedHTTPS(r)
}

// isEventID reports whether s is an event id in canonical UUID text form
// (8-4-4-4-12 hex digits): malformed ids are refused before the database.
func isEventID(s string) bool {
	return len(s) == 36 && uuid.Validate(s) == nil
}

// checkIDs returns the first id that is not an event id, or "".
func checkIDs(ids []string) (string, bool) {
	for _, id := range ids {
		if !isEventID(id) {
			return id, false
		}
	}
	return "", true
}
