package sqlkit

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"

	"github.com/jitoutbox/jitoutbox/dialects"
)

// Pattern is a table pattern of Dialect.FindTables read by ParsePattern,
// as the LIKE patterns a dialect's find_tables.sql compares with (escape
// character '!', written ESCAPE '!' in the SQL: a character no table name
// has, and one that needs no escaping in any database's string literals).
type Pattern struct {
	// Schema is the LIKE pattern of the schema (database) part; nil for a
	// pattern without one: the current schema.
	Schema any
	// Table is the LIKE pattern of the table part.
	Table string
}

// ParsePattern reads pattern: at most parts parts ("schema.table" for 2,
// "table" for 1) made of ASCII letters, digits, '_' and '*', each not
// empty. '*' becomes LIKE's '%'; '_' is escaped to match only itself.
// lower folds the pattern to lower case (PostgreSQL's unquoted names). A
// pattern it cannot read fails with an error wrapping
// dialects.ErrInvalidPattern.
func ParsePattern(pattern string, parts int, lower bool) (Pattern, error) {
	bad := func(why string) (Pattern, error) {
		return Pattern{}, fmt.Errorf("%w: %q: %s", dialects.ErrInvalidPattern, pattern, why)
	}
	if pattern == "" {
		return bad("empty")
	}
	split := strings.Split(pattern, ".")
	if len(split) > parts {
		if parts == 1 {
			return bad("a table name without a schema is expected here")
		}
		return bad("at most schema.table")
	}
	like := make([]string, len(split))
	for i, part := range split {
		if part == "" {
			return bad("empty part")
		}
		var b strings.Builder
		for j := 0; j < len(part); j++ {
			switch c := part[j]; {
			case c == '*':
				b.WriteByte('%')
			case c == '_':
				b.WriteString("!_")
			case c >= '0' && c <= '9', c >= 'a' && c <= 'z':
				b.WriteByte(c)
			case c >= 'A' && c <= 'Z':
				if lower {
					c += 'a' - 'A'
				}
				b.WriteByte(c)
			default:
				return bad(fmt.Sprintf("%q is not allowed: use ASCII letters, digits, '_' and '*' (any run of characters)", c))
			}
		}
		like[i] = b.String()
	}
	if len(like) == 1 {
		return Pattern{Table: like[0]}, nil
	}
	return Pattern{Schema: like[0], Table: like[1]}, nil
}

// FindTables runs a dialect's find_tables.sql for p (its arguments: @table
// and, if it names it, @schema) and returns the tables it lists (schema,
// "" on SQLite, and name), as "schema.table" or "table", leaving out the
// names valid refuses (those WithTable would not accept), sorted. prefix
// starts the error: the calling dialect's package name.
func FindTables(ctx context.Context, q dialects.Querier, query *Query, p Pattern, prefix string, valid func(string) bool) ([]string, error) {
	args := []sql.NamedArg{sql.Named("table", p.Table)}
	if slices.Contains(query.Names(), "schema") {
		args = append(args, sql.Named("schema", p.Schema))
	}
	rows, err := QueryRows(ctx, q, query, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: find tables: %w", prefix, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var schema, table string
		if err := rows.Scan(&schema, &table); err != nil {
			return nil, fmt.Errorf("%s: find tables: %w", prefix, err)
		}
		if schema != "" {
			table = schema + "." + table
		}
		if valid(table) {
			out = append(out, table)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: find tables: %w", prefix, err)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// CheckVersion fails, wrapping dialects.ErrSchemaVersion, when table's
// schema version (NULL before versioned migrations) is below required.
func CheckVersion(table string, version sql.NullInt64, required int) error {
	if int(version.Int64) < required {
		return fmt.Errorf("%w: table %s is at version %d, this version needs %d", dialects.ErrSchemaVersion, table, version.Int64, required)
	}
	return nil
}
