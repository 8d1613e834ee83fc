package natsnotify

import (
	"strings"
	"testing"
)

// FuzzValidateSubject checks that every accepted subject is a literal NATS
// subject: non-empty tokens of printable ASCII, no wildcards, no whitespace.
func FuzzValidateSubject(f *testing.F) {
	for _, s := range []string{"jitoutbox.wake", "a..b", "a.*", "a.>", " a", "é.x", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if ValidateSubject(s) != nil {
			return
		}
		for _, tok := range strings.Split(s, ".") {
			if tok == "" || tok == "*" || tok == ">" {
				t.Fatalf("accepted %q", s)
			}
		}
		for i := 0; i < len(s); i++ {
			if s[i] <= ' ' || s[i] >= 0x7f || s[i] == '*' || s[i] == '>' {
				t.Fatalf("accepted %q with byte %#x", s, s[i])
			}
		}
	})
}
