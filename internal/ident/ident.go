// Package ident validates SQL identifiers (table names) before they are
// placed into SQL text. Values are never interpolated; identifiers are, so they
// must be plain.
package ident

import (
	"errors"
	"fmt"
)

// ErrInvalid is returned (wrapped) for any identifier that is not plain.
var ErrInvalid = errors.New("invalid SQL identifier")

// MaxLen is the longest identifier part accepted (PostgreSQL truncates at 63
// bytes, MySQL refuses more than 64).
const MaxLen = 63

// Validate reports whether name is a plain identifier: one or two parts
// separated by a dot (schema.table), each part made of ASCII letters, digits
// and underscores, not starting with a digit, at most MaxLen bytes long.
func Validate(name string) error {
	if name == "" {
		return fmt.Errorf("%w: empty name", ErrInvalid)
	}
	parts := 0
	start := 0
	for i := 0; i <= len(name); i++ {
		if i < len(name) && name[i] != '.' {
			c := name[i]
			ok := c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9' && i > start)
			if !ok {
				return fmt.Errorf("%w: %q: only ASCII letters, digits and '_' are allowed (and no leading digit)", ErrInvalid, name)
			}
			continue
		}
		if i == start {
			return fmt.Errorf("%w: %q: empty part", ErrInvalid, name)
		}
		if i-start > MaxLen {
			return fmt.Errorf("%w: %q: a part is longer than %d bytes", ErrInvalid, name, MaxLen)
		}
		parts++
		start = i + 1
	}
	if parts > 2 {
		return fmt.Errorf("%w: %q: at most schema.table", ErrInvalid, name)
	}
	return nil
}
