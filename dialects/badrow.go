package dialects

import "errors"

// ErrBadRow is matched by every *RowError: a row of the outbox table
// that a read returned but could not decode.
var ErrBadRow = errors.New("dialects: bad row")

// MaxRawBytes is the most bytes of an undecodable column's stored value
// kept in RowError.Raw.
const MaxRawBytes = 4096

// RowError says why a row read from the outbox table could not be
// decoded: a column whose stored value is not what the schema's writers
// write (headers that are not a JSON object of strings, or not JSON at
// all on databases whose column takes any text; a time that does not
// parse; a number or boolean of the wrong kind on SQLite, whose columns
// take any value; a partition outside [0, P) for the table's partition
// count P).
//
// A read never fails on such a row: Dialect.Read and the Inspector return
// it with Record.Bad set and the columns that could be decoded filled in
// (the bad column's field is left zero). The relay dead-letters it at
// once, without publishing it (see the relay package). Only the first
// undecodable column, in the read's column order, is reported.
type RowError struct {
	// Column names the column ("headers", "created_at", "part", ...).
	Column string
	// Raw is the column's stored value as text, as the driver returned
	// it, cut to MaxRawBytes ("" for NULL). It may hold any bytes: escape
	// it before showing it.
	Raw string
	// Err is the problem.
	Err error
}

// Error returns "bad row: column <name>: <problem>".
func (e *RowError) Error() string {
	return "bad row: column " + e.Column + ": " + e.Err.Error()
}

// Unwrap returns the problem.
func (e *RowError) Unwrap() error { return e.Err }

// Is reports whether target is ErrBadRow.
func (e *RowError) Is(target error) bool { return target == ErrBadRow }
