package chaos

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
)

// killRec is one SIGKILL fired by the harness, with the partitions its
// victims owned just before.
type killRec struct {
	at    time.Time
	parts []partRef
	// all: every relay was killed at once, so the partitions wait for a
	// restarted relay, not for a survivor.
	all bool
	// during: the kill hit while another relay joined or left ("join",
	// "leave"; "" otherwise).
	during string
}

// partRef is one partition of one tenant's table.
type partRef struct {
	tenant string
	part   int
}

// killSlots SIGKILLs the relays in slots and returns the record of the
// kill, with the partitions they owned just before.
func killSlots(ctx context.Context, t *testing.T, tg target, f *fleet, slots []int, during string) killRec {
	t.Helper()
	var owners []string
	for _, i := range slots {
		owners = append(owners, owner(i, f.gen[i]))
	}
	parts, err := ownedBy(ctx, tg.db, tg.tenants.all(), tg.bind, owners)
	if err != nil {
		t.Fatal(err)
	}
	all := len(slots) == len(f.live())
	f.kill(slots...)
	return killRec{at: time.Now(), parts: parts, all: all, during: during}
}

// owner is the -owner of the relay in slot at generation gen; a session's
// token, the owner column of its partitions, is "<owner>/<random>".
func owner(slot, gen int) string { return fmt.Sprintf("chaos-%d-%d", slot, gen) }

// ownedBy reads the partitions of tenants' tables owned by sessions of
// owners (a read of each partitions table; a dead owner stays named until
// its partition is taken).
func ownedBy(ctx context.Context, db *sql.DB, tenants []*tenant, bind func(int) string, owners []string) ([]partRef, error) {
	var parts []partRef
	for _, tn := range tenants {
		for _, o := range owners {
			rows, err := db.QueryContext(ctx, "SELECT part FROM "+tn.d.Table()+"_partitions WHERE owner LIKE "+bind(1), o+"/%")
			if err != nil {
				return nil, fmt.Errorf("read partition owners of %s: %w", tn.d.Table(), err)
			}
			for rows.Next() {
				var p int
				if err := rows.Scan(&p); err != nil {
					rows.Close()
					return nil, err
				}
				parts = append(parts, partRef{tenant: tn.name, part: p})
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return nil, err
			}
		}
	}
	return parts, nil
}

// ownerSlot picks a random slot among the live relays that own
// partitions, or any live slot if none does; never the slot not.
func ownerSlot(ctx context.Context, t *testing.T, tg target, f *fleet, rng *rand.Rand, not int) int {
	var owning []int
	live := slices.DeleteFunc(f.live(), func(i int) bool { return i == not })
	for _, i := range live {
		parts, err := ownedBy(ctx, tg.db, tg.tenants.all(), tg.bind, []string{owner(i, f.gen[i])})
		if err != nil {
			t.Fatal(err)
		}
		if len(parts) > 0 {
			owning = append(owning, i)
		}
	}
	if len(owning) == 0 {
		return live[rng.IntN(len(live))]
	}
	return owning[rng.IntN(len(owning))]
}

// stallWindow is how close to a kill an event must commit to count in its
// failover.
const stallWindow = 2 * time.Second

// failovers measures each kill: for every partition its victims owned, the
// longest wait of an event of that partition committed within stallWindow
// of the kill and first delivered after it, counted from the kill or from
// its commit if later; the kill's failover is the longest over its
// partitions (kills whose partitions saw no such event are left out). The
// waits include the time to commit and publish, and any fault that hit at
// the same moment (a connection cut, a broker restart): an upper bound of
// the ownership failover.
func failovers(kills []killRec, nparts int, l *ledger, r *recorder) (one, all, churn []time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r.mu.Lock()
	defer r.mu.Unlock()
	type ev struct{ commit, first time.Time }
	byPart := map[partRef][]ev{}
	for id, ref := range l.committed {
		f, ok := r.first[id]
		if ref.at.IsZero() || !ok {
			continue
		}
		p := partRef{tenant: ref.tenant, part: dialects.PartitionOf("order", ref.agg, nparts)}
		byPart[p] = append(byPart[p], ev{commit: ref.at, first: f})
	}
	for _, k := range kills {
		var worst time.Duration
		seen := false
		for _, p := range k.parts {
			for _, e := range byPart[p] {
				if !e.first.After(k.at) || e.commit.Before(k.at.Add(-stallWindow)) || e.commit.After(k.at.Add(stallWindow)) {
					continue
				}
				from := k.at
				if e.commit.After(from) {
					from = e.commit
				}
				worst, seen = max(worst, e.first.Sub(from)), true
			}
		}
		if !seen {
			continue
		}
		switch {
		case k.all:
			all = append(all, worst)
		case k.during != "":
			churn = append(churn, worst)
		default:
			one = append(one, worst)
		}
	}
	return one, all, churn
}

// distribution formats n, p50, p90 and max of ds.
func distribution(ds []time.Duration) string {
	if len(ds) == 0 {
		return "n=0"
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	r := func(d time.Duration) time.Duration { return d.Round(time.Millisecond) }
	return fmt.Sprintf("n=%d p50 %v p90 %v max %v", len(s), r(s[len(s)/2]), r(s[len(s)*9/10]), r(s[len(s)-1]))
}
