package main

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"
)

// unsafeRune reports whether r must not reach a terminal as it is: C0
// controls (ESC starts the sequences that move the cursor, clear the
// screen or set the window title), DEL, C1 controls (U+0080 to U+009F,
// which some terminals obey like ESC sequences: U+009B is CSI) and the
// bidirectional overrides and isolates that make text display in another
// order than it reads.
func unsafeRune(r rune) bool {
	return r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f) ||
		(r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069)
}

// safe returns s with every unsafe rune (see unsafeRune) and every byte
// that is not UTF-8 escaped as Go escapes them (\x1b, \n, \u009b, \xff),
// so that row data and errors print as one inert line. Every text output
// of outboxctl that carries row data or an error goes through it; JSON
// output through writeJSON.
func safe(s string) string {
	i := 0
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if unsafeRune(r) || (r == utf8.RuneError && n == 1) {
			break
		}
		i += n
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.WriteString(s[:i])
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x80:
			if unsafeRune(r) {
				fmt.Fprintf(&b, `\x%02x`, r)
			} else {
				b.WriteRune(r)
			}
		case unsafeRune(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// safeJSON escapes, in encoded JSON, the unsafe runes encoding/json leaves
// as they are (DEL, C1 controls, bidirectional controls: it escapes C0
// itself) as \uXXXX: the same JSON value, inert on a terminal.
func safeJSON(b []byte) []byte {
	if !bytes.ContainsFunc(b, func(r rune) bool { return r >= 0x7f && unsafeRune(r) }) {
		return b
	}
	var out bytes.Buffer
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r >= 0x7f && unsafeRune(r) {
			fmt.Fprintf(&out, `\u%04x`, r)
		} else {
			out.Write(b[:n])
		}
		b = b[n:]
	}
	return out.Bytes()
}
