package sqlkit

import (
	"strings"
	"sync"
)

// InsertBuilder builds "prefix row, row, ... [tail]" multi-row INSERT
// statements and caches the text per row count. The row template and the
// tail mark each bind parameter with '?'; Placeholder renders the i-th
// (0-based) parameter of the statement, the tail's numbered after the rows'.
// The zero value is not usable; use NewInsertBuilder. Safe for concurrent use.
type InsertBuilder struct {
	prefix      string
	rowParts    []string // row template split around '?'
	tailParts   []string // tail split around '?'; nil: no tail
	cols        int      // parameters per row
	placeholder func(i int) string
	cache       sync.Map // int -> string
}

// NewInsertBuilder returns a builder for the given prefix ("INSERT INTO t
// (a, b) VALUES") and row template ("(?, ?)").
func NewInsertBuilder(prefix, row string, placeholder func(i int) string) *InsertBuilder {
	parts := strings.Split(row, "?")
	return &InsertBuilder{
		prefix:      strings.TrimSpace(prefix),
		rowParts:    parts,
		cols:        len(parts) - 1,
		placeholder: placeholder,
	}
}

// Columns is the number of bind parameters per row.
func (b *InsertBuilder) Columns() int { return b.cols }

// SQL returns the statement for n rows (n > 0).
func (b *InsertBuilder) SQL(n int) string {
	if s, ok := b.cache.Load(n); ok {
		return s.(string)
	}
	var sb strings.Builder
	sb.Grow(len(b.prefix) + n*(len(b.rowParts)*8+2))
	sb.WriteString(b.prefix)
	sb.WriteByte(' ')
	p := 0
	write := func(parts []string) { // parts joined by the next placeholders
		for i, part := range parts {
			sb.WriteString(part)
			if i < len(parts)-1 {
				sb.WriteString(b.placeholder(p))
				p++
			}
		}
	}
	for r := 0; r < n; r++ {
		if r > 0 {
			sb.WriteString(",\n")
		}
		write(b.rowParts)
	}
	if b.tailParts != nil {
		sb.WriteByte('\n')
		write(b.tailParts)
	}
	s := sb.String()
	b.cache.Store(n, s)
	return s
}

// WithTail returns a builder whose statements end with tail (a newline, then
// tail), whose '?' parameters follow the rows'.
func (b *InsertBuilder) WithTail(tail string) *InsertBuilder {
	return &InsertBuilder{
		prefix:      b.prefix,
		rowParts:    b.rowParts,
		tailParts:   strings.Split(tail, "?"),
		cols:        b.cols,
		placeholder: b.placeholder,
	}
}

// QuestionMark renders every parameter as "?" (MySQL).
func QuestionMark(int) string { return "?" }
