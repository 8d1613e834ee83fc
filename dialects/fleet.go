package dialects

import (
	"errors"
	"time"
)

// ErrInvalidPattern is returned (wrapped) by Dialect.FindTables for a
// table pattern it cannot read: empty, with an empty part, with more parts
// than the dialect's names have, or with a character that is neither one
// of a table name's (ASCII letters, digits, '_') nor '*'.
var ErrInvalidPattern = errors.New("dialects: invalid table pattern")

// TableActivity is what Activity found in one outbox table.
type TableActivity struct {
	// Table is the table's name as given to Activity.
	Table string
	// NextDue is when a pending row of the table is due, by the
	// database's clock (the time the relay's Read compares: a row's next
	// attempt time, which is its delivery time for a scheduled row never
	// attempted). When some row is due it is at or before the database's
	// now (the due time of the first due row in Seq order, not
	// necessarily the earliest); otherwise it is the earliest due time of
	// the pending rows. Zero when the table has no pending row.
	//
	// A row held back behind a dead row or a retry of its aggregate, or
	// behind a scheduled row of its aggregate not yet due, is pending:
	// it shows as due although Read leaves it out until its aggregate is
	// released.
	NextDue time.Time
	// Err is set when this table could not be read; the other tables'
	// results are unaffected. It wraps ErrSchemaVersion when the table
	// does not exist (dropped) or is not at the schema version this code
	// needs, and ErrInvalidTable for a name the dialect refuses.
	Err error
}
