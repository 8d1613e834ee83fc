package main

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/jitoutbox/jitoutbox/internal/redact"
)

// secrets returns every string the relay must never print: the DSN (each
// source's with -config), the NATS URLs (each of a comma-separated list,
// and the list), the AMQP URL and the metrics token, with the passwords
// they carry in every form redact.Secrets knows. It works on whatever parseFlags filled in, so a
// start-up error that quotes a malformed URL is hidden too.
func (c config) secrets() []string {
	var out []string
	add := func(s string) { out = append(out, redact.Secrets(s)...) }
	add(c.dsn)
	for _, src := range c.sources {
		add(src.dsn)
		add(src.DSN)
	}
	add(c.natsURL)
	if strings.Contains(c.natsURL, ",") {
		for _, u := range strings.Split(c.natsURL, ",") {
			add(strings.TrimSpace(u))
		}
	}
	add(c.amqpURL)
	if c.metricsToken != "" {
		out = append(out, c.metricsToken)
	}
	// A shorter secret inside a longer one must be replaced after it.
	sortLongestFirst(out)
	return out
}

func sortLongestFirst(ss []string) {
	for i := 1; i < len(ss); i++ {
		for j := i; j > 0 && len(ss[j]) > len(ss[j-1]); j-- {
			ss[j], ss[j-1] = ss[j-1], ss[j]
		}
	}
}

// redactHandler is a slog.Handler that replaces every secret in a record's
// message and attribute values (strings, errors, anything printed with %v)
// before the wrapped handler encodes it. Redacting before encoding, not the
// encoded bytes, matters: JSON escapes '"', '<', '>' and '&', so a password
// holding one would not match in the output. Every line of the relay goes
// through it, the relay's own and its libraries' (relay, pgnotify, the
// drivers' complaints, nats.go's handlers).
type redactHandler struct {
	h       slog.Handler
	secrets []string
}

func (r redactHandler) Enabled(ctx context.Context, l slog.Level) bool { return r.h.Enabled(ctx, l) }

func (r redactHandler) Handle(ctx context.Context, rec slog.Record) error {
	out := slog.NewRecord(rec.Time, rec.Level, redact.String(rec.Message, r.secrets...), rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(r.attr(a))
		return true
	})
	return r.h.Handle(ctx, out)
}

func (r redactHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	red := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		red[i] = r.attr(a)
	}
	return redactHandler{h: r.h.WithAttrs(red), secrets: r.secrets}
}

func (r redactHandler) WithGroup(name string) slog.Handler {
	return redactHandler{h: r.h.WithGroup(name), secrets: r.secrets}
}

// attr returns a with its value redacted; a value with no secret in it is
// kept as it is (a number stays a number, a list a list).
func (r redactHandler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, redact.String(v.String(), r.secrets...))
	case slog.KindGroup:
		g := v.Group()
		red := make([]any, len(g))
		for i, ga := range g {
			red[i] = r.attr(ga)
		}
		return slog.Group(a.Key, red...)
	case slog.KindAny:
		var text string
		switch x := v.Any().(type) {
		case error:
			text = x.Error()
		default:
			text = fmt.Sprint(x)
		}
		if red := redact.String(text, r.secrets...); red != text {
			return slog.String(a.Key, red)
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}
