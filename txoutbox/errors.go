package txoutbox

import (
	"database/sql"
	"errors"
	"fmt"

	"github.com/jitoutbox/jitoutbox/dialects"
)

// Sentinel errors callers can branch on with errors.Is.
var (
	// ErrInvalidEvent matches every *ValidationError returned by Add.
	ErrInvalidEvent = errors.New("txoutbox: invalid event")
	// ErrPayloadTooLarge matches the *ValidationError returned by Add when
	// the payload exceeds the configured maximum (see WithMaxPayload).
	ErrPayloadTooLarge = errors.New("txoutbox: payload too large")
	// ErrHeadersTooLarge matches the *ValidationError returned by Add when
	// an event's headers (names and values, with those set by header
	// injectors) exceed MaxHeaderBytes.
	ErrHeadersTooLarge = errors.New("txoutbox: headers too large")
	// ErrFlush matches the error Commit returns when the buffered events
	// could not be written; the transaction has then been rolled back.
	ErrFlush = errors.New("txoutbox: flush failed")
	// ErrInvalidEventID is returned (wrapped) by Cancel for an id that is
	// not an event id (a UUID in canonical text form, as Add returns).
	ErrInvalidEventID = errors.New("txoutbox: invalid event id")
	// ErrNoTransaction is returned by the package-level Add when the context
	// carries no transaction.
	ErrNoTransaction = errors.New("txoutbox: no transaction in context")
	// ErrInvalidOption is returned (wrapped) by New and NewX for a bad
	// argument or option, and by Adopt, AdoptX, NewCapture and
	// Capture.WriteTo for a bad argument (nothing is changed then).
	ErrInvalidOption = errors.New("txoutbox: invalid option")
	// ErrDuplicateIdempotencyKey matches the *FlushError Commit (and the
	// error Capture.WriteTo) returns when an event's IdempotencyKey is
	// already in the outbox table: the transaction has been rolled back
	// (by Commit; after WriteTo the caller must roll back) and nothing of
	// it is committed. The error also matches the driver's unique-violation
	// error. Add returns a *ValidationError matching it when the key was
	// already given to another event of the same transaction. It is the
	// same value as dialects.ErrDuplicateIdempotencyKey.
	ErrDuplicateIdempotencyKey = dialects.ErrDuplicateIdempotencyKey
)

// ValidationError describes why Add refused an event. Nothing is buffered
// and the transaction stays usable. It matches ErrInvalidEvent, and also
// ErrPayloadTooLarge when the payload was too large, ErrHeadersTooLarge
// when the headers were, and ErrDuplicateIdempotencyKey when the key was
// already given to another event of the transaction.
type ValidationError struct {
	// Field names the offending field, e.g. "AggregateID" or
	// `Headers["X-Trace"]`.
	Field string
	// Reason says what is wrong with it.
	Reason string

	tooLarge        bool
	headersTooLarge bool
	duplicate       bool
}

// Error implements error.
func (e *ValidationError) Error() string {
	return "txoutbox: invalid event: " + e.Field + ": " + e.Reason
}

// Is reports whether target is ErrInvalidEvent (or ErrPayloadTooLarge for an
// oversized payload, ErrHeadersTooLarge for oversized headers,
// ErrDuplicateIdempotencyKey for a key used twice).
func (e *ValidationError) Is(target error) bool {
	return target == ErrInvalidEvent || (e.tooLarge && target == ErrPayloadTooLarge) ||
		(e.headersTooLarge && target == ErrHeadersTooLarge) ||
		(e.duplicate && target == ErrDuplicateIdempotencyKey)
}

// FlushError is returned by Commit when writing the buffered events failed.
// The transaction has been rolled back. It matches ErrFlush and the cause
// (and the rollback error, if rolling back failed too).
type FlushError struct {
	// Events is the number of events that were to be written.
	Events int
	// Err is the dialect's error.
	Err error
	// RollbackErr is the error from rolling back after the failed flush, if
	// any (nil when the rollback succeeded or the transaction was already
	// finished, e.g. by context cancellation).
	RollbackErr error
}

// Error implements error.
func (e *FlushError) Error() string {
	s := fmt.Sprintf("txoutbox: flush %d events: %v", e.Events, e.Err)
	if e.RollbackErr != nil {
		s += fmt.Sprintf(" (rollback: %v)", e.RollbackErr)
	}
	return s
}

// Unwrap returns ErrFlush, the cause and the rollback error, if any.
func (e *FlushError) Unwrap() []error {
	errs := []error{ErrFlush, e.Err}
	if e.RollbackErr != nil {
		errs = append(errs, e.RollbackErr)
	}
	return errs
}

// errTxDone builds the error for use of a finished transaction.
func errTxDone(op string) error {
	return fmt.Errorf("txoutbox: %s: %w", op, sql.ErrTxDone)
}
