package sqlkit

import (
	"strings"
	"sync"
)

// InsertBuilder builds "prefix row, row, ..." multi-row INSERT statements and
// caches the text per row count. The row template marks each bind parameter
// with '?'; Placeholder renders the i-th (0-based) parameter of the statement.
// The zero value is not usable; use NewInsertBuilder. Safe for concurrent use.
type InsertBuilder struct {
	prefix      string
	rowParts    []string // row template split around '?'
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
	for r := 0; r < n; r++ {
		if r > 0 {
			sb.WriteString(",\n")
		}
		for i, part := range b.rowParts {
			sb.WriteString(part)
			if i < len(b.rowParts)-1 {
				sb.WriteString(b.placeholder(p))
				p++
			}
		}
	}
	s := sb.String()
	b.cache.Store(n, s)
	return s
}

// QuestionMark renders every parameter as "?" (MySQL).
func QuestionMark(int) string { return "?" }
