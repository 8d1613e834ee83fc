package inbox

import (
	"errors"
	"fmt"
)

// Sentinel errors. Handle wraps them in the typed errors below; test with
// errors.Is. Every one of them means that the side effect was not applied
// and nothing was recorded.
var (
	// ErrInvalidConfig is returned by New for a Config it cannot use.
	ErrInvalidConfig = errors.New("inbox: invalid config")
	// ErrNoEventID: the message carries no event id (no Jitoutbox-Event-Id
	// header, nor the Debezium "id" header). It cannot be deduplicated;
	// redelivering it does not help.
	ErrNoEventID = errors.New("inbox: message has no event id")
	// ErrBadEventID: the event id is not a UUID (or is the nil UUID).
	ErrBadEventID = errors.New("inbox: event id is not a UUID")
	// ErrBadMessage: another part of the message is unusable: a seq header
	// that is not a positive decimal, a text that is not valid UTF-8 or is
	// longer than the table holds.
	ErrBadMessage = errors.New("inbox: malformed message")
	// ErrEncoded: the payload is still as the producer encoded it (the
	// Jitoutbox-Encoding header of txoutbox.WithPayloadEncoder): call
	// Message.Decode first, so that the side effect never sees ciphertext
	// and the recorded hash is the decoded payload's.
	ErrEncoded = errors.New("inbox: payload still encoded (call Message.Decode)")
	// ErrPayloadMismatch: the event id was processed before with a
	// different payload. Either the producer reused an id or the message
	// was altered on the way; it is not applied, nor reported as a
	// duplicate.
	ErrPayloadMismatch = errors.New("inbox: event id reused with a different payload")
	// ErrOutOfOrder: the event is older than the last one applied for its
	// aggregate and Config.OnOutOfOrder returned Reject.
	ErrOutOfOrder = errors.New("inbox: event older than the last applied for its aggregate")
)

// MessageError is returned for a message Handle refuses before touching the
// database: Err is ErrNoEventID, ErrBadEventID or ErrBadMessage.
type MessageError struct {
	// EventID is the event id as the message carried it ("" if none).
	EventID string
	// Err is the sentinel.
	Err error
	// Detail says what is wrong.
	Detail string
}

func (e *MessageError) Error() string {
	if e.EventID == "" {
		return fmt.Sprintf("%v: %s", e.Err, e.Detail)
	}
	return fmt.Sprintf("%v: event %q: %s", e.Err, e.EventID, e.Detail)
}

// Unwrap returns the sentinel.
func (e *MessageError) Unwrap() error { return e.Err }

// MismatchError is returned when an event id was processed before with a
// different payload hash (SHA-256). It unwraps to ErrPayloadMismatch.
type MismatchError struct {
	EventID string
	// Stored is the hash recorded at first delivery, Got the hash of this
	// delivery's payload.
	Stored, Got []byte
}

func (e *MismatchError) Error() string {
	return fmt.Sprintf("%v: event %s: recorded payload sha256 %x, this delivery %x", ErrPayloadMismatch, e.EventID, e.Stored, e.Got)
}

// Unwrap returns ErrPayloadMismatch.
func (e *MismatchError) Unwrap() error { return ErrPayloadMismatch }

// OutOfOrderError is returned when an event's seq is lower than the last
// applied for its aggregate and Config.OnOutOfOrder returned Reject. It
// unwraps to ErrOutOfOrder.
type OutOfOrderError struct {
	EventID                    string
	AggregateType, AggregateID string
	// Seq is the event's, LastSeq the last applied for its aggregate.
	Seq, LastSeq int64
}

func (e *OutOfOrderError) Error() string {
	return fmt.Sprintf("%v: event %s of %s %q has seq %d, last applied %d", ErrOutOfOrder,
		e.EventID, e.AggregateType, e.AggregateID, e.Seq, e.LastSeq)
}

// Unwrap returns ErrOutOfOrder.
func (e *OutOfOrderError) Unwrap() error { return ErrOutOfOrder }
