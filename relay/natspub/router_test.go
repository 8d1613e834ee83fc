package natspub_test

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/jitoutbox/jitoutbox/relay"
	"github.com/jitoutbox/jitoutbox/relay/natspub"
)

func TestDefaultRouter(t *testing.T) {
	r, err := natspub.DefaultRouter("outbox")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct{ agg, ev, want string }{
		{"order", "created", "outbox.order.created"},
		{"order", "order.paid", "outbox.order.order.paid"},
		{"billing.invoice", "sent", "outbox.billing_invoice.sent"},
		{"", "", "outbox._._"},
		{"a b", "x\ty", "outbox.a_b.x_y"},
		{"a*", ">", "outbox.a_._"},
		{"o", ".paid.", "outbox.o._.paid._"},
		{"o", "a..b", "outbox.o.a._.b"},
		{"ordre", "créé", "outbox.ordre.créé"},
		{"o", "bad\xffutf8", "outbox.o.bad_utf8"},
	}
	for _, c := range cases {
		got, err := r(relay.Message{AggregateType: c.agg, EventType: c.ev})
		if err != nil || got != c.want {
			t.Errorf("route(%q, %q) = %q, %v; want %q", c.agg, c.ev, got, err, c.want)
		}
	}
	_, err = r(relay.Message{AggregateType: "o", EventType: strings.Repeat("x", natspub.MaxSubjectLen)})
	if !relay.IsPermanent(err) || !errors.Is(err, natspub.ErrInvalidSubject) {
		t.Errorf("too long subject: err = %v, want permanent ErrInvalidSubject", err)
	}
	for _, bad := range []string{"", "a..b", "a.*", ">", "a b", ".a", "a."} {
		if _, err := natspub.DefaultRouter(bad); !errors.Is(err, natspub.ErrInvalidSubject) {
			t.Errorf("DefaultRouter(%q) err = %v, want ErrInvalidSubject", bad, err)
		}
	}
}

func TestAggregateTypeRouter(t *testing.T) {
	r, err := natspub.AggregateTypeRouter(natspub.DebeziumSubjectPrefix)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ agg, want string }{
		{"order", "outbox.event.order"},
		{"billing.invoice", "outbox.event.billing_invoice"},
		{"", "outbox.event._"},
		{"a*", "outbox.event.a_"},
	} {
		got, err := r(relay.Message{AggregateType: c.agg, EventType: "any.thing"})
		if err != nil || got != c.want {
			t.Errorf("route(%q) = %q, %v; want %q", c.agg, got, err, c.want)
		}
	}
	if _, err := r(relay.Message{AggregateType: strings.Repeat("x", natspub.MaxSubjectLen)}); !relay.IsPermanent(err) {
		t.Errorf("too long subject: err = %v, want permanent", err)
	}
	if _, err := natspub.AggregateTypeRouter("a..b"); !errors.Is(err, natspub.ErrInvalidSubject) {
		t.Errorf("bad prefix: err = %v", err)
	}
}

func TestValidateSubject(t *testing.T) {
	for _, ok := range []string{"a", "a.b.c", "svc.outbox.a*b", "ü.x"} {
		if err := natspub.ValidateSubject(ok); err != nil {
			t.Errorf("ValidateSubject(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"", "a..b", "a.*", "a.>.b", "a b", "a\tb", "a\nb", ".a", "a.", "\xff", "a\x00b",
		strings.Repeat("a", natspub.MaxSubjectLen+1)} {
		if err := natspub.ValidateSubject(bad); !errors.Is(err, natspub.ErrInvalidSubject) {
			t.Errorf("ValidateSubject(%q) = %v, want ErrInvalidSubject", bad, err)
		}
	}
}

func TestOptionsFailFast(t *testing.T) {
	r, _ := natspub.DefaultRouter("x")
	bad := [][]natspub.Option{
		{natspub.WithRouter(nil)},
		{natspub.WithSubjectPrefix("a..b")},
		{natspub.WithMaxPending(0)},
		{natspub.WithAckTimeout(0)},
		{natspub.WithExpectStream("")},
		{natspub.WithRouter(r), natspub.WithSubjectPrefix("y")},
	}
	for i, opts := range bad {
		if _, err := natspub.NewCore(nil, opts...); !errors.Is(err, natspub.ErrInvalidOption) {
			t.Errorf("case %d: err = %v, want ErrInvalidOption", i, err)
		}
		if _, err := natspub.NewJetStream(nil, opts...); !errors.Is(err, natspub.ErrInvalidOption) {
			t.Errorf("case %d: err = %v, want ErrInvalidOption", i, err)
		}
	}
}

// FuzzDefaultRouter checks that the default router always yields a valid
// subject (or a permanent error for an over-long one), deterministically,
// with the aggregate type as exactly one token.
func FuzzDefaultRouter(f *testing.F) {
	f.Add("order", "order.paid")
	f.Add("", "")
	f.Add("a.b", "..")
	f.Add("*", ">")
	f.Add(" \t", "\r\n")
	f.Add("\xff\xfe", "x\x00y")
	r, err := natspub.DefaultRouter("outbox")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, agg, ev string) {
		m := relay.Message{AggregateType: agg, EventType: ev}
		s, err := r(m)
		if err != nil {
			if !relay.IsPermanent(err) || !errors.Is(err, natspub.ErrInvalidSubject) {
				t.Fatalf("route(%q, %q) error %v is not a permanent ErrInvalidSubject", agg, ev, err)
			}
			if len(agg)+len(ev) < natspub.MaxSubjectLen/4 {
				t.Fatalf("route(%q, %q) failed for short input: %v", agg, ev, err)
			}
			return
		}
		if err := natspub.ValidateSubject(s); err != nil {
			t.Fatalf("route(%q, %q) = %q: %v", agg, ev, s, err)
		}
		if s2, _ := r(m); s2 != s {
			t.Fatalf("route not deterministic: %q then %q", s, s2)
		}
		toks := strings.Split(s, ".")
		if toks[0] != "outbox" || len(toks) != 3+strings.Count(ev, ".") {
			t.Fatalf("route(%q, %q) = %q: wrong token layout", agg, ev, s)
		}
		if clean(agg) && !strings.Contains(agg, ".") && clean(ev) && s != "outbox."+agg+"."+ev {
			t.Fatalf("route(%q, %q) = %q changed clean input", agg, ev, s)
		}
	})
}

// clean reports whether s needs no sanitizing as dot-separated tokens.
func clean(s string) bool {
	return natspub.ValidateSubject(s) == nil && !strings.ContainsAny(s, "*>") && utf8.ValidString(s)
}
