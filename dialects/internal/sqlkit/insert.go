package sqlkit

import (
	"database/sql"
	"fmt"
	"strings"
	"sync"
)

// InsertBuilder builds "prefix row, row, ... [tail]" multi-row INSERT
// statements and caches the text per row count. The row template and the
// tail name their parameters (@name, each once); the statement numbers
// them in its style, row after row, the tail's after the rows'. AppendRow
// and AppendTail put the arguments in that order by name. The zero value
// is not usable; use NewInsertBuilder. Safe for concurrent use.
type InsertBuilder struct {
	prefix string
	row    *Query // its names are the row's columns, in placeholder order
	tail   *Query // nil: no tail
	style  Style
	cache  sync.Map // int -> string
}

// NewInsertBuilder returns a builder for the given prefix ("INSERT INTO t
// (a, b) VALUES") and row template ("(@a, @b)").
func NewInsertBuilder(prefix, row string, style Style) (*InsertBuilder, error) {
	r, err := parseOnce("insert row", row)
	if err != nil {
		return nil, err
	}
	return &InsertBuilder{prefix: strings.TrimSpace(prefix), row: r, style: style}, nil
}

// parseOnce parses a row or tail template, whose every parameter must
// appear once: they are numbered in order across the statement.
func parseOnce(name, src string) (*Query, error) {
	q, err := ParseQuery(name, src, Question)
	if err != nil {
		return nil, err
	}
	if len(q.params) != len(q.names) || q.lists || len(q.names) > 64 {
		return nil, fmt.Errorf("sqlkit: %s: each parameter must appear once, none be a list, and at most 64", name)
	}
	return q, nil
}

// Columns is the number of bind parameters per row.
func (b *InsertBuilder) Columns() int { return len(b.row.names) }

// SQL returns the statement for n rows (n > 0).
func (b *InsertBuilder) SQL(n int) string {
	if s, ok := b.cache.Load(n); ok {
		return s.(string)
	}
	var sb strings.Builder
	sb.Grow(len(b.prefix) + n*(len(b.row.text)*8+2))
	sb.WriteString(b.prefix)
	sb.WriteByte(' ')
	p := 0
	write := func(q *Query) { // the template, its parameters numbered from p
		for i, part := range q.text {
			sb.WriteString(part)
			if i < len(q.params) {
				sb.WriteString(b.style.placeholder(p))
				p++
			}
		}
	}
	for r := 0; r < n; r++ {
		if r > 0 {
			sb.WriteString(",\n")
		}
		write(b.row)
	}
	if b.tail != nil {
		sb.WriteByte('\n')
		write(b.tail)
	}
	s := sb.String()
	b.cache.Store(n, s)
	return s
}

// WithTail returns a builder whose statements end with tail (a newline, then
// tail), whose parameters follow the rows'.
func (b *InsertBuilder) WithTail(tail string) (*InsertBuilder, error) {
	t, err := parseOnce("insert tail", tail)
	if err != nil {
		return nil, err
	}
	for _, n := range t.names {
		if b.row.index(n, 0) >= 0 {
			return nil, fmt.Errorf("sqlkit: insert tail: @%s is a row's parameter too", n)
		}
	}
	return &InsertBuilder{prefix: b.prefix, row: b.row, tail: t, style: b.style}, nil
}

// AppendRow appends one row's arguments to dst, in the row's order, from
// args, one per parameter of the row template; ErrBind when a name is
// missing, unknown or given twice.
func (b *InsertBuilder) AppendRow(dst []any, args ...sql.NamedArg) ([]any, error) {
	return appendOnce(dst, b.row, args)
}

// AppendTail appends the tail's arguments to dst (after the rows'), as
// AppendRow does for a row.
func (b *InsertBuilder) AppendTail(dst []any, args ...sql.NamedArg) ([]any, error) {
	if b.tail == nil {
		return appendOnce(dst, &Query{name: "insert tail"}, args)
	}
	return appendOnce(dst, b.tail, args)
}

// appendOnce appends q's arguments in its order, without the allocations
// of Bind: a row is bound once per event.
func appendOnce(dst []any, q *Query, args []sql.NamedArg) ([]any, error) {
	base := len(dst)
	for range q.names {
		dst = append(dst, nil)
	}
	var seen uint64 // parseOnce allows at most 64 parameters
	for i, a := range args {
		k := q.index(a.Name, i)
		switch {
		case k < 0:
			return dst[:base], fmt.Errorf("%w: %s: unknown parameter @%s", ErrBind, q.name, a.Name)
		case seen&(1<<k) != 0:
			return dst[:base], fmt.Errorf("%w: %s: parameter @%s given twice", ErrBind, q.name, a.Name)
		}
		seen |= 1 << k
		dst[base+k] = a.Value
	}
	for k, n := range q.names {
		if seen&(1<<k) == 0 {
			return dst[:base], fmt.Errorf("%w: %s: missing parameter @%s", ErrBind, q.name, n)
		}
	}
	return dst, nil
}
