package relay

import "context"

// wakeReason says why a cycle ran.
type wakeReason string

const (
	reasonStart   wakeReason = "start"   // first cycle of Run
	reasonWake    wakeReason = "wake"    // urgent wake from a Source
	reasonLazy    wakeReason = "lazy"    // lazy wake, after LazyDelay
	reasonPoll    wakeReason = "poll"    // safety-net poll
	reasonRetry   wakeReason = "retry"   // a retry or release time came due
	reasonMore    wakeReason = "more"    // the previous batch was full, or rows were unblocked
	reasonTrouble wakeReason = "trouble" // after the outage / database error back-off
	reasonOwn     wakeReason = "own"     // the relay took partitions
)

// cycleSignal reports one finished cycle to a test.
type cycleSignal struct {
	Reason    wakeReason
	Claimed   int
	Published int
	Outage    bool
	DBError   error
}

// testSignals are test-only hooks (River testsignal style): nil channels do
// nothing; tests arm them before Run.
type testSignals struct {
	cycle chan cycleSignal
}

func (s *testSignals) cycleDone(ctx context.Context, sig cycleSignal) {
	if s.cycle == nil {
		return
	}
	select {
	case s.cycle <- sig:
	case <-ctx.Done():
	}
}
