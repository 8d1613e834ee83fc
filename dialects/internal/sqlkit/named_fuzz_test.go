package sqlkit

import (
	"database/sql"
	"strings"
	"testing"
)

// FuzzParseQuery: whatever the text, ParseQuery fails or returns a query
// that gives back the text when each parameter is written as its name
// again, and that binds one value per name: one argument per placeholder
// with '?', one per name in the numbered styles.
func FuzzParseQuery(f *testing.F) {
	for _, s := range []string{
		"SELECT @a, @b::int FROM t WHERE x IN (@l...) AND y = @a",
		"SELECT '@x', \"@y\", `@z` /* @w ? */, @@v, a@b",
		"SELECT $1, ?, @",
		"SELECT 'open",
		"@a@b @_1 @9",
	} {
		f.Add(s, uint8(0))
	}
	f.Fuzz(func(t *testing.T, src string, style uint8) {
		st := Style(style % 3)
		q, err := ParseQuery("fuzz.sql", src, st)
		if err != nil {
			return
		}
		var b strings.Builder
		for i, k := range q.params {
			b.WriteString(q.text[i] + "@" + q.names[k])
			if q.list[k] {
				b.WriteString("...")
			}
		}
		b.WriteString(q.text[len(q.params)])
		if b.String() != src {
			t.Fatalf("names written back give %q, want %q", b.String(), src)
		}
		args := make([]sql.NamedArg, len(q.names))
		for k, n := range q.names {
			args[k] = sql.Named(n, k)
			if q.list[k] {
				args[k] = sql.Named(n, []int{k})
			}
		}
		_, vals, err := q.Bind(args...)
		if err != nil {
			t.Fatalf("Bind with every name: %v", err)
		}
		want := len(q.names)
		if st == Question {
			want = len(q.params)
		}
		if len(vals) != want {
			t.Fatalf("%d arguments, want %d", len(vals), want)
		}
	})
}
