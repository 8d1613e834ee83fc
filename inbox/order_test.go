package inbox_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jitoutbox/jitoutbox/inbox"
)

// TestOutOfOrder: an event whose seq is lower than the last applied for its
// aggregate goes to OnOutOfOrder with that last seq; each Decision does
// what it says, and other aggregates are not affected.
func TestOutOfOrder(t *testing.T) {
	var decision inbox.Decision
	type call struct {
		id   string
		last int64
	}
	var calls []call
	cfg := inbox.Config{OnOutOfOrder: func(_ context.Context, m inbox.Message, last int64) inbox.Decision {
		calls = append(calls, call{m.EventID, last})
		return decision
	}}
	eachDB(t, cfg, func(t *testing.T, e *env) {
		calls = nil
		for _, seq := range []int64{1, 3} {
			if res, err := e.handle(newMsg("o-1", seq, "x")); err != nil || res != inbox.Applied {
				t.Fatalf("seq %d: %v, %v", seq, res, err)
			}
		}
		// Another aggregate has its own last seq; no seq means no check.
		for _, m := range []inbox.Message{newMsg("o-2", 2, "x"), newMsg("o-1", 0, "x")} {
			if res, err := e.handle(m); err != nil || res != inbox.Applied {
				t.Fatalf("%s seq %d: %v, %v", m.AggregateID, m.Seq, res, err)
			}
		}
		if len(calls) != 0 {
			t.Fatalf("callback called for events in order: %v", calls)
		}

		stale := newMsg("o-1", 2, "x")
		decision = inbox.Reject
		res, err := e.handle(stale)
		var oe *inbox.OutOfOrderError
		if !errors.Is(err, inbox.ErrOutOfOrder) || !errors.As(err, &oe) || res != inbox.Failed {
			t.Fatalf("reject: %v, %v", res, err)
		}
		if oe.Seq != 2 || oe.LastSeq != 3 || oe.AggregateID != "o-1" || e.effects(stale.EventID) != 0 {
			t.Fatalf("reject: %+v, %d effects", oe, e.effects(stale.EventID))
		}

		decision = inbox.Skip
		if res, err := e.handle(stale); err != nil || res != inbox.Skipped || e.effects(stale.EventID) != 0 {
			t.Fatalf("skip: %v, %v, %d effects", res, err, e.effects(stale.EventID))
		}
		if res, err := e.handle(stale); err != nil || res != inbox.Duplicate {
			t.Fatalf("skipped event redelivered: %v, %v", res, err)
		}

		decision = inbox.Apply
		stale2 := newMsg("o-1", 1, "x")
		if res, err := e.handle(stale2); err != nil || res != inbox.Applied || e.effects(stale2.EventID) != 1 {
			t.Fatalf("apply: %v, %v", res, err)
		}
		// Applying a stale event does not lower the last seq.
		if n := e.count(`SELECT last_seq FROM inbox_aggregates WHERE aggregate_type = ? AND aggregate_id = ?`, "order", "o-1"); n != 3 {
			t.Fatalf("last seq %d, want 3", n)
		}
		want := []call{{stale.EventID, 3}, {stale.EventID, 3}, {stale2.EventID, 3}}
		if len(calls) != len(want) {
			t.Fatalf("calls %v, want %v", calls, want)
		}
		for i := range want {
			if calls[i] != want[i] {
				t.Fatalf("calls %v, want %v", calls, want)
			}
		}
	})
}
