// Package redact hides secrets (DSN and URL passwords, tokens) in text the
// binaries print: log lines, errors, help. It finds a secret without
// parsing the string the way a driver would, so that a malformed DSN (an
// unescaped '%' in a password, a '"' or '#') is hidden as well as a valid
// one: a parse error is exactly when a driver quotes the whole DSN back.
package redact

import (
	"errors"
	"net/url"
	"strconv"
	"strings"
)

// Mask replaces every secret in printed text.
const Mask = "[REDACTED]"

// minPiece is the shortest cut password Secrets adds on its own.
const minPiece = 3

// Secrets returns the strings of s that must never be printed: s itself
// and the password it carries in any of the forms known here (URL userinfo
// "scheme://user:pass@host", MySQL "user:pass@tcp(...)", key=value
// "password=..."), raw and escaped. Empty strings are left out.
func Secrets(s string) []string {
	if s == "" {
		return nil
	}
	var out []string
	add := func(p string) {
		if p == "" {
			return
		}
		out = append(out, p)
		// %q and JSON print '"' and '\' escaped.
		if q := strconv.Quote(p); q[1:len(q)-1] != p {
			out = append(out, q[1:len(q)-1])
		}
		if u, err := url.PathUnescape(p); err == nil && u != p {
			out = append(out, u)
		}
		if e := url.QueryEscape(p); e != p {
			out = append(out, e)
		}
		if e := url.PathEscape(p); e != p {
			out = append(out, e)
		}
	}
	add(s)
	pw := userinfoPassword(s)
	add(pw)
	// url.Parse cuts a URL at its first '#' (the fragment) and its
	// authority at the first '/' or '?', so a password holding one of them
	// is quoted cut there ("invalid port \":p%zz\" after host"). The cut
	// is hidden when it has at least minPiece bytes: a shorter one would
	// blank every such letter of the message and hides next to nothing.
	if i := strings.IndexAny(pw, "#?/"); i >= minPiece {
		add(pw[:i])
	}
	for _, f := range strings.Fields(s) {
		if v, ok := cutKey(f, "password="); ok {
			add(strings.Trim(v, `'"`))
		}
	}
	// A secret that is a prefix of a longer one must be replaced after it.
	sortLongestFirst(out)
	return out
}

// userinfoPassword returns the password between "user:" and the last '@'
// before the host, for "scheme://user:pass@host/..." and MySQL's
// "user:pass@tcp(host)/db". It does not unescape or validate anything.
func userinfoPassword(s string) string {
	rest := s
	if i := strings.Index(rest, "://"); i >= 0 {
		rest = rest[i+3:]
	}
	// The host part starts after the last '@' that precedes the path: a
	// password may itself contain '@', '/', '#' or '?'.
	at := strings.LastIndex(rest, "@")
	if at < 0 {
		return ""
	}
	userinfo := rest[:at]
	colon := strings.IndexByte(userinfo, ':')
	if colon < 0 {
		return ""
	}
	return userinfo[colon+1:]
}

// cutKey reports the value of a key=value field, the key matched without
// regard to case.
func cutKey(f, key string) (string, bool) {
	if len(f) < len(key) || !strings.EqualFold(f[:len(key)], key) {
		return "", false
	}
	return f[len(key):], true
}

func sortLongestFirst(ss []string) {
	for i := 1; i < len(ss); i++ {
		for j := i; j > 0 && len(ss[j]) > len(ss[j-1]); j-- {
			ss[j], ss[j-1] = ss[j-1], ss[j]
		}
	}
}

// String returns text with every secret replaced by Mask.
func String(text string, secrets ...string) string {
	for _, sec := range secrets {
		if sec != "" {
			text = strings.ReplaceAll(text, sec, Mask)
		}
	}
	return text
}

// Error wraps err so that its text holds none of secrets; errors.Is and
// errors.As still see the chain. A nil err stays nil.
func Error(err error, secrets ...string) error {
	if err == nil {
		return nil
	}
	return &redactedError{err: err, secrets: secrets}
}

type redactedError struct {
	err     error
	secrets []string
}

func (e *redactedError) Error() string { return String(e.err.Error(), e.secrets...) }
func (e *redactedError) Unwrap() error { return e.err }

var _ interface{ Unwrap() error } = (*redactedError)(nil)

// Is reports whether err is a redacted error (for tests and callers that
// must not wrap twice).
func Is(err error) bool {
	var r *redactedError
	return errors.As(err, &r)
}
