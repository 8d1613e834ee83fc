package sqlkit

import (
	"errors"
	"strings"
	"testing"

	"github.com/jitoutbox/jitoutbox/dialects"
)

func TestParsePattern(t *testing.T) {
	for _, c := range []struct {
		pattern      string
		parts        int
		lower        bool
		schema, like string // schema "-": none
	}{
		{"outbox", 2, false, "-", "outbox"},
		{"tenant_*.outbox", 2, false, "tenant!_%", "outbox"},
		{"*.outbox", 2, false, "%", "outbox"},
		{"app.outbox_*", 2, false, "app", "outbox!_%"},
		{"Tenant_A.OutBox", 2, true, "tenant!_a", "outbox"},
		{"Tenant_A.OutBox", 2, false, "Tenant!_A", "OutBox"},
		{"**", 1, false, "-", "%%"},
		{"a1_*_b", 1, false, "-", "a1!_%!_b"},
	} {
		p, err := ParsePattern(c.pattern, c.parts, c.lower)
		if err != nil {
			t.Errorf("ParsePattern(%q): %v", c.pattern, err)
			continue
		}
		schema := "-"
		if p.Schema != nil {
			schema = p.Schema.(string)
		}
		if schema != c.schema || p.Table != c.like {
			t.Errorf("ParsePattern(%q) = %v %q, want %q %q", c.pattern, p.Schema, p.Table, c.schema, c.like)
		}
	}
	for _, c := range []struct {
		pattern string
		parts   int
	}{
		{"", 2}, {".", 2}, {"a.", 2}, {".b", 2}, {"a.b.c", 2}, {"a.b", 1}, {"a%", 2}, {"a!b", 2},
		{"a b", 2}, {"a;b", 2}, {"a'b", 2}, {"é", 2}, {"a\\_", 2}, {"a?", 1},
	} {
		if p, err := ParsePattern(c.pattern, c.parts, false); !errors.Is(err, dialects.ErrInvalidPattern) {
			t.Errorf("ParsePattern(%q, %d) = %+v, %v; want ErrInvalidPattern", c.pattern, c.parts, p, err)
		}
	}
}

// FuzzParsePattern: whatever the pattern, ParsePattern fails with
// ErrInvalidPattern or returns LIKE patterns of the characters of table
// names and LIKE's '%', with every '_' escaped by '!' (and no other '!'),
// one part per part of the pattern.
func FuzzParsePattern(f *testing.F) {
	for _, s := range []string{"tenant_*.outbox", "*.outbox", "app.outbox_*", "a!_b", "a%b", "a..b", "Ä.x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParsePattern(s, 2, true)
		if err != nil {
			if !errors.Is(err, dialects.ErrInvalidPattern) {
				t.Fatalf("ParsePattern(%q): %v, want ErrInvalidPattern", s, err)
			}
			return
		}
		likes := []string{p.Table}
		if p.Schema != nil {
			likes = append(likes, p.Schema.(string))
		}
		if len(likes) != strings.Count(s, ".")+1 {
			t.Fatalf("ParsePattern(%q) = %+v: %d parts", s, p, len(likes))
		}
		for _, l := range likes {
			if l == "" {
				t.Fatalf("ParsePattern(%q) = %+v: an empty part", s, p)
			}
			for _, c := range strings.ReplaceAll(l, "!_", "") { // no '_' or '!' left: each '_' escaped
				if !(c == '%' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
					t.Fatalf("ParsePattern(%q) = %+v: %q in %q", s, p, c, l)
				}
			}
		}
	})
}
