package cloudevents

import (
	"fmt"
	"net/url"
	"strings"
)

// ValidateSource checks that s can be a CloudEvents source: a non-empty
// URI-reference (RFC 3986), such as "https://orders.example.com",
// "urn:example:orders" or "/orders". It refuses what RFC 3986 does not
// allow: characters outside its set (spaces, non-ASCII, quotes, braces), a
// "%" not followed by two hex digits, a malformed scheme ("1x:..." or a
// first path segment with a colon), more than one "#", brackets outside an
// IP-literal host. The error wraps [ErrInvalidSource].
func ValidateSource(s string) error {
	if s == "" {
		return fmt.Errorf("%w: empty (give a URI-reference, e.g. https://orders.example.com or /orders)", ErrInvalidSource)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '%':
			if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
				return fmt.Errorf("%w: %q: %% at byte %d not followed by two hex digits", ErrInvalidSource, s, i)
			}
		case !uriChar(c):
			return fmt.Errorf("%w: %q: byte %d (%q) is not allowed in a URI-reference", ErrInvalidSource, s, i, c)
		}
	}
	if strings.Count(s, "#") > 1 {
		return fmt.Errorf("%w: %q: more than one '#'", ErrInvalidSource, s)
	}
	// A colon before the first '/', '?' or '#' ends a scheme; a
	// relative reference may not have one there.
	head := s
	if end := strings.IndexAny(s, "/?#"); end >= 0 {
		head = s[:end]
	}
	if scheme, _, ok := strings.Cut(head, ":"); ok && !validScheme(scheme) {
		return fmt.Errorf("%w: %q: %q is not a scheme (a relative reference cannot have a colon in its first segment)", ErrInvalidSource, s, scheme)
	}
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidSource, err)
	}
	// Only an IP-literal host may hold brackets, one pair.
	if strings.ContainsAny(s, "[]") &&
		(strings.Count(s, "[") != 1 || strings.Count(s, "]") != 1 || !strings.HasPrefix(u.Host, "[")) {
		return fmt.Errorf("%w: %q: brackets outside an IP-literal host", ErrInvalidSource, s)
	}
	return nil
}

// uriChar reports whether c is an unreserved or reserved character of
// RFC 3986 ('%' is checked apart).
func uriChar(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("-._~:/?#[]@!$&'()*+,;=", c) >= 0
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// validScheme reports whether s is ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ).
func validScheme(s string) bool {
	if s == "" || !('a' <= s[0] && s[0] <= 'z' || 'A' <= s[0] && s[0] <= 'Z') {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '+' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}
