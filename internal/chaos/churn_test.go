package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// minFleet is the fewest relays a membership change leaves running.
const minFleet = 2

// membership changes the fleet while a relay is SIGKILLed: a relay joins
// (a new slot: it takes free partitions, and the others release their
// surplus at their next rebalance) or leaves for good (SIGTERM, not
// replaced: it releases its partitions after its batch), and at the same
// moment a relay that owns partitions, not the one joining or leaving, is
// SIGKILLed; it is restarted 0-1.5 s later. A join turns into a leave when
// the fleet has s.relays+2 relays, a leave into a join when it has
// minFleet. It returns the kill's record.
func membership(ctx context.Context, t *testing.T, tg target, f *fleet, rng *rand.Rand, kind string, s size) killRec {
	t.Helper()
	live := f.live()
	if kind == "join" && len(live) >= s.relays+2 {
		kind = "leave"
	}
	if kind == "leave" && len(live) <= minFleet {
		kind = "join"
	}
	var rec killRec
	var victim int
	switch kind {
	case "join":
		slot := f.add()
		pause(ctx, time.Duration(rng.IntN(300))*time.Millisecond) // the newcomer is starting
		victim = ownerSlot(ctx, t, tg, f, rng, slot)
		rec = killSlots(ctx, t, tg, f, []int{victim}, kind)
	case "leave":
		slot := live[rng.IntN(len(live))]
		victim = ownerSlot(ctx, t, tg, f, rng, slot)
		f.started(slot)
		p := f.procs[slot]
		left := make(chan error, 1)
		go func() { left <- p.Stop(15 * time.Second) }()
		pause(ctx, time.Duration(rng.IntN(300))*time.Millisecond) // the leaver is releasing
		rec = killSlots(ctx, t, tg, f, []int{victim}, kind)
		if err := <-left; err != nil {
			f.leaveErrs = append(f.leaveErrs, fmt.Sprintf("relay slot %d generation %d leaving for good: %v", slot, f.gen[slot], err))
		}
		f.procs[slot] = nil
		f.departures++
	}
	pause(ctx, time.Duration(rng.IntN(1500))*time.Millisecond)
	f.restartKilled(victim)
	return rec
}
