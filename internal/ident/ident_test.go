package ident

import (
	"errors"
	"strings"
	"testing"
)

func TestValidate(t *testing.T) {
	good := []string{"outbox", "Outbox_2", "_x", "app.outbox", strings.Repeat("a", MaxLen)}
	for _, name := range good {
		if err := Validate(name); err != nil {
			t.Errorf("Validate(%q) = %v, want nil", name, err)
		}
	}
	bad := []string{"", "a;b", `a"b`, "1abc", "a b", "a-b", strings.Repeat("a", MaxLen+1), "x.y.z", ".x", "x.", "x..y",
		"ou\x00tbox", "outbox; DROP TABLE users", "é", "a.1b", "`x`", "x'--"}
	for _, name := range bad {
		err := Validate(name)
		if !errors.Is(err, ErrInvalid) {
			t.Errorf("Validate(%q) = %v, want ErrInvalid", name, err)
		}
	}
}

func FuzzValidate(f *testing.F) {
	for _, s := range []string{"outbox", "a.b", "a;b", `a"b`, "1a", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if Validate(s) != nil {
			return
		}
		// Anything accepted must be safe to place into SQL unquoted.
		for _, c := range s {
			ok := c == '_' || c == '.' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
			if !ok {
				t.Fatalf("accepted %q with %q", s, c)
			}
		}
		if strings.Count(s, ".") > 1 || strings.HasPrefix(s, ".") || strings.HasSuffix(s, ".") {
			t.Fatalf("accepted %q", s)
		}
	})
}
