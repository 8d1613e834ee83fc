package migrate

import "strings"

// SplitStatements splits a schema text on ";\n" (the separator promised by
// dialects.Dialect.Schema), except inside dollar-quoted bodies ($tag$ ...
// $tag$, as in a PostgreSQL function), and drops empty statements and a
// trailing ';'.
func SplitStatements(schema string) []string {
	var out []string
	add := func(s string) {
		s = strings.TrimSpace(s)
		s = strings.TrimSuffix(s, ";")
		if s != "" {
			out = append(out, s)
		}
	}
	start, quote := 0, ""
	for i := 0; i < len(schema); i++ {
		switch {
		case schema[i] == '$':
			if tag := dollarTag(schema[i:]); tag != "" {
				if quote == "" {
					quote = tag
				} else if tag == quote {
					quote = ""
				}
				i += len(tag) - 1
			}
		case quote == "" && strings.HasPrefix(schema[i:], ";\n"):
			add(schema[start:i])
			start = i + 2
			i++
		}
	}
	add(schema[start:])
	return out
}

// dollarTag returns the dollar-quote tag ("$$" or "$name$") at the start of
// s, or "".
func dollarTag(s string) string {
	for j := 1; j < len(s); j++ {
		c := s[j]
		switch {
		case c == '$':
			return s[:j+1]
		case c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (j > 1 && c >= '0' && c <= '9'):
		default:
			return ""
		}
	}
	return ""
}
