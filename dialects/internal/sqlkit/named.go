package sqlkit

import (
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrBind reports a statement bound with a parameter it does not name, or
// without one it names, or with a value a list parameter cannot take: a
// mistake in the dialect's code, never in the data.
var ErrBind = errors.New("sqlkit: bind")

// Style is how a database marks bind parameters.
type Style int

const (
	// Question marks each parameter "?" (MySQL; SQLite's multi-row
	// INSERT): a name used twice is bound twice.
	Question Style = iota
	// Dollar numbers the parameters "$1", "$2", ... in the order their
	// names first appear (PostgreSQL): a name used twice is bound once.
	Dollar
	// QuestionNumbered numbers them "?1", "?2", ... as Dollar does
	// (SQLite).
	QuestionNumbered
)

// placeholder renders the parameter numbered i (0-based).
func (s Style) placeholder(i int) string {
	switch s {
	case Dollar:
		return "$" + strconv.Itoa(i+1)
	case QuestionNumbered:
		return "?" + strconv.Itoa(i+1)
	default:
		return "?"
	}
}

// Query is a statement whose parameters are named: "@name" in the SQL,
// "@name..." for a list (Question style only) that expands to one
// placeholder per element, or to one "(?, ?, ...)" group per element of a
// list of tuples. Bind turns the names into the style's placeholders and
// the arguments into their order. A Query is immutable and safe for
// concurrent use.
type Query struct {
	name   string   // the file, for errors
	style  Style    //
	text   []string // the SQL around the parameters: len(params)+1 parts
	params []int    // each parameter's place: an index into names
	names  []string // distinct names, in order of first appearance
	list   []bool   // per name: a list
	lists  bool     // some name is a list
	sql    string   // the SQL, when no name is a list
}

// ParseQuery reads the named parameters of src (rendered SQL: no comment
// lines). It fails on a raw placeholder ("?", "$1") outside quotes, as a
// statement is either named or positional, and on a list in a numbered
// style.
func ParseQuery(name, src string, style Style) (*Query, error) {
	q := &Query{name: name, style: style}
	index := map[string]int{}
	start := 0
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case c == '\'' || c == '"' || c == '`':
			j := strings.IndexByte(src[i+1:], c)
			if j < 0 {
				return nil, fmt.Errorf("sqlkit: %s: unterminated %c quote", name, c)
			}
			i += j + 1
		case c == '/' && strings.HasPrefix(src[i:], "/*"):
			j := strings.Index(src[i:], "*/")
			if j < 0 {
				return nil, fmt.Errorf("sqlkit: %s: unterminated comment", name)
			}
			i += j + 1
		case c == '?', c == '$' && i+1 < len(src) && isDigit(src[i+1]):
			return nil, fmt.Errorf("sqlkit: %s: positional placeholder %q at byte %d: name the parameter (@name)", name, src[i:min(i+2, len(src))], i)
		case c == '@' && i+1 < len(src) && isNameStart(src[i+1]) && (i == 0 || !isNameByte(src[i-1]) && src[i-1] != '@'):
			j := i + 1
			for j < len(src) && isNameByte(src[j]) {
				j++
			}
			n := src[i+1 : j]
			list := strings.HasPrefix(src[j:], "...")
			if list {
				j += 3
				if style != Question {
					return nil, fmt.Errorf("sqlkit: %s: list @%s... needs '?' placeholders", name, n)
				}
			}
			k, ok := index[n]
			if !ok {
				k = len(q.names)
				index[n] = k
				q.names = append(q.names, n)
				q.list = append(q.list, list)
			} else if q.list[k] != list {
				return nil, fmt.Errorf("sqlkit: %s: @%s is used both as a list and as a value", name, n)
			}
			q.text = append(q.text, src[start:i])
			q.params = append(q.params, k)
			start = j
			i = j - 1
		}
	}
	q.text = append(q.text, src[start:])
	for _, l := range q.list {
		q.lists = q.lists || l
	}
	if !q.lists {
		q.sql = q.render(nil)
	}
	return q, nil
}

func isDigit(c byte) bool     { return c >= '0' && c <= '9' }
func isNameStart(c byte) bool { return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isNameByte(c byte) bool  { return isNameStart(c) || isDigit(c) }

// render writes the SQL: each parameter as the style's placeholder, each
// list as lists[name index] (its placeholders, from Bind).
func (q *Query) render(lists []string) string {
	var b strings.Builder
	for i, k := range q.params {
		b.WriteString(q.text[i])
		switch {
		case q.list[k]:
			b.WriteString(lists[k])
		case q.style == Question:
			b.WriteByte('?')
		default:
			b.WriteString(q.style.placeholder(k))
		}
	}
	b.WriteString(q.text[len(q.params)])
	return b.String()
}

// Name is the statement's file name.
func (q *Query) Name() string { return q.name }

// Names returns the statement's parameter names, in order of first
// appearance (the numbered styles' order).
func (q *Query) Names() []string { return append([]string(nil), q.names...) }

// IsList reports whether the parameter name is a list (@name...).
func (q *Query) IsList(name string) bool {
	k := q.index(name, 0)
	return k >= 0 && q.list[k]
}

// SQL returns the statement's text; for a statement with a list it is
// only known once bound (Bind), and SQL returns "".
func (q *Query) SQL() string { return q.sql }

// index returns the index of name, looking first at hint (the order the
// caller most likely gives), or -1.
func (q *Query) index(name string, hint int) int {
	if hint < len(q.names) && q.names[hint] == name {
		return hint
	}
	for k, n := range q.names {
		if n == name {
			return k
		}
	}
	return -1
}

// values places args by name: the value of each name, in names' order.
func (q *Query) values(args []sql.NamedArg) ([]any, error) {
	vals := make([]any, len(q.names))
	seen := make([]bool, len(q.names))
	for i, a := range args {
		k := q.index(a.Name, i)
		if k < 0 {
			return nil, fmt.Errorf("%w: %s: unknown parameter @%s", ErrBind, q.name, a.Name)
		}
		if seen[k] {
			return nil, fmt.Errorf("%w: %s: parameter @%s given twice", ErrBind, q.name, a.Name)
		}
		seen[k], vals[k] = true, a.Value
	}
	for k, ok := range seen {
		if !ok {
			return nil, fmt.Errorf("%w: %s: missing parameter @%s", ErrBind, q.name, q.names[k])
		}
	}
	return vals, nil
}

// Bind returns the statement's SQL and its arguments in placeholder order
// for args, one per name of the statement (sql.Named("after", seq)). It
// fails with ErrBind when a name is missing, unknown or given twice, or a
// list's value is empty or not a list ([]int, []int64, []string, or
// [][]any for a list of tuples).
func (q *Query) Bind(args ...sql.NamedArg) (string, []any, error) {
	vals, err := q.values(args)
	if err != nil {
		return "", nil, err
	}
	if q.style != Question {
		return q.sql, vals, nil // one placeholder per name, numbered in names' order
	}
	if !q.lists {
		out := make([]any, len(q.params))
		for i, k := range q.params {
			out[i] = vals[k]
		}
		return q.sql, out, nil
	}
	lists := make([]string, len(q.names))
	n := 0
	for k, v := range vals {
		if !q.list[k] {
			continue
		}
		ph, m, err := listPlaceholders(v)
		if err != nil {
			return "", nil, fmt.Errorf("%w: %s: @%s...: %w", ErrBind, q.name, q.names[k], err)
		}
		lists[k] = ph
		n += m
	}
	out := make([]any, 0, len(q.params)+n)
	for _, k := range q.params {
		if q.list[k] {
			out = appendList(out, vals[k])
		} else {
			out = append(out, vals[k])
		}
	}
	return q.render(lists), out, nil
}

// listPlaceholders returns the placeholders of a list's value and how many
// arguments it binds.
func listPlaceholders(v any) (string, int, error) {
	var n, width int
	switch l := v.(type) {
	case []int:
		n, width = len(l), 1
	case []int64:
		n, width = len(l), 1
	case []string:
		n, width = len(l), 1
	case [][]any:
		n = len(l)
		if n > 0 {
			width = len(l[0])
		}
		for _, t := range l {
			if len(t) != width || width == 0 {
				return "", 0, errors.New("tuples of different or no width")
			}
		}
	default:
		return "", 0, fmt.Errorf("%T is not a list", v)
	}
	if n == 0 {
		return "", 0, errors.New("empty list")
	}
	if _, tuples := v.([][]any); !tuples {
		return Placeholders(n), n, nil
	}
	group := "(" + Placeholders(width) + ")"
	return strings.Repeat(group+", ", n-1) + group, n * width, nil
}

// appendList appends a list's elements (listPlaceholders accepted it).
func appendList(out []any, v any) []any {
	switch l := v.(type) {
	case []int:
		for _, x := range l {
			out = append(out, x)
		}
	case []int64:
		for _, x := range l {
			out = append(out, x)
		}
	case []string:
		for _, x := range l {
			out = append(out, x)
		}
	case [][]any:
		for _, t := range l {
			out = append(out, t...)
		}
	}
	return out
}
