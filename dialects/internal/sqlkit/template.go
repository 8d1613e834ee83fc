package sqlkit

import (
	"fmt"
	"strings"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/internal/ident"
)

// ValidateTable checks a table name with internal/ident and wraps failures
// with dialects.ErrInvalidTable.
func ValidateTable(name string) error {
	if err := ident.Validate(name); err != nil {
		return fmt.Errorf("%w: %w", dialects.ErrInvalidTable, err)
	}
	return nil
}

// LongestSuffix is the length of the longest suffix a dialect appends to
// the table's name to name an index, a constraint or a side table
// ("_idempotency_key_idx"; TestLongestSuffix checks every dialect's SQL).
const LongestSuffix = len("_idempotency_key_idx")

// MaxTableName returns the longest table name (its last part) a database
// with identifiers of at most identLimit bytes accepts: every derived
// name must fit.
func MaxTableName(identLimit int) int { return identLimit - LongestSuffix }

// ValidateTableFor checks name as ValidateTable does and refuses, with a
// *dialects.TableNameError, a last part longer than MaxTableName(identLimit).
func ValidateTableFor(name, dialect string, identLimit int) error {
	if err := ValidateTable(name); err != nil {
		return err
	}
	last := name[strings.LastIndexByte(name, '.')+1:]
	if max := MaxTableName(identLimit); len(last) > max {
		return &dialects.TableNameError{Table: name, Dialect: dialect, Max: max, IdentLimit: identLimit}
	}
	return nil
}

// Render prepares an embedded SQL template: lines starting with "--" are
// dropped, surrounding blank space is trimmed, {{table}} becomes the
// (validated) table name and {{name}} its last part (for index and
// constraint names, which may not be schema-qualified).
func Render(src, table string) string {
	var b strings.Builder
	for line := range strings.Lines(src) {
		if strings.HasPrefix(strings.TrimSpace(line), "--") {
			continue
		}
		b.WriteString(line)
	}
	name := table
	if i := strings.LastIndexByte(table, '.'); i >= 0 {
		name = table[i+1:]
	}
	out := strings.TrimSpace(b.String())
	out = strings.ReplaceAll(out, "{{table}}", table)
	out = strings.ReplaceAll(out, "{{name}}", name)
	return out
}

// Placeholders returns n comma-separated "?" placeholders.
func Placeholders(n int) string {
	if n <= 0 {
		return ""
	}
	return strings.Repeat("?, ", n-1) + "?"
}
