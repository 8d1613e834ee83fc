package inbox

// Result is what Handle did with a message.
type Result int

// Results of Handle.
const (
	// Failed is returned with every error: the side effect was not applied
	// and nothing was recorded (with one exception: when the COMMIT itself
	// fails, the outcome is unknown; a redelivery finds out).
	Failed Result = iota
	// Applied: the event was new; the side effect ran and the event id was
	// recorded, in one transaction.
	Applied
	// Duplicate: the event id was recorded before with the same payload (a
	// redelivery, or a republish after a relay crash); nothing ran and
	// nothing changed. Acknowledge the message.
	Duplicate
	// Skipped: the event was out of order and Config.OnOutOfOrder returned
	// Skip: its id was recorded (a redelivery is a Duplicate) but the side
	// effect did not run. Acknowledge the message.
	Skipped
)

// String returns "failed", "applied", "duplicate" or "skipped".
func (r Result) String() string {
	switch r {
	case Applied:
		return "applied"
	case Duplicate:
		return "duplicate"
	case Skipped:
		return "skipped"
	default:
		return "failed"
	}
}

// Decision is Config.OnOutOfOrder's answer for an event older than the
// last one applied for its aggregate.
type Decision int

// Decisions.
const (
	// Reject: do not apply the event and do not record it; Handle returns
	// an *OutOfOrderError (ErrOutOfOrder). The zero value, so that a
	// callback that forgets to decide applies nothing.
	Reject Decision = iota
	// Skip: record the event id without applying the side effect; Handle
	// returns Skipped.
	Skip
	// Apply: apply the event anyway (the aggregate's last seq is not
	// lowered); Handle returns Applied.
	Apply
)

// String returns "reject", "skip" or "apply".
func (d Decision) String() string {
	switch d {
	case Skip:
		return "skip"
	case Apply:
		return "apply"
	default:
		return "reject"
	}
}
