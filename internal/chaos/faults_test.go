package chaos

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jitoutbox/jitoutbox/internal/e2e/relayproc"
	"github.com/jitoutbox/jitoutbox/internal/testnats"
)

// fleet is the relay processes, each slot restarted after a kill. Slots
// are added by joins and emptied (nil) by leaves without replacement.
type fleet struct {
	t     *testing.T
	args  func(slot, generation int) []string
	procs []*relayproc.Process // nil: the slot's relay left for good
	gen   []int
	all   []*relayproc.Process // every process ever started, for the logs

	kills      int // processes killed with SIGKILL
	leaves     int // processes stopped with SIGTERM and replaced (churn)
	joins      int // relays added to the fleet
	departures int // relays stopped with SIGTERM and not replaced
	leaveErrs  []string
	unexpected int // processes that exited without being killed
	exits      []string
}

func newFleet(t *testing.T, n int, args func(slot, generation int) []string) *fleet {
	f := &fleet{t: t, args: args, procs: make([]*relayproc.Process, n), gen: make([]int, n)}
	for i := range n {
		f.start(i)
	}
	return f
}

func (f *fleet) start(i int) {
	f.gen[i]++
	p := relayproc.Start(f.t, relayBin, f.args(i, f.gen[i])...)
	f.procs[i] = p
	f.all = append(f.all, p)
}

// live returns the slots that have a relay (running, or killed and about
// to be restarted).
func (f *fleet) live() []int {
	var out []int
	for i, p := range f.procs {
		if p != nil {
			out = append(out, i)
		}
	}
	return out
}

// add starts a relay in a new slot and returns the slot.
func (f *fleet) add() int {
	f.procs = append(f.procs, nil)
	f.gen = append(f.gen, 0)
	i := len(f.procs) - 1
	f.start(i)
	f.joins++
	return i
}

// kill SIGKILLs the relays in slots.
func (f *fleet) kill(slots ...int) {
	for _, i := range slots {
		f.procs[i].Kill()
		f.kills++
	}
}

// check restarts every relay that exited on its own, counting it: a relay
// must survive database and broker outages.
func (f *fleet) check() {
	for i, p := range f.procs {
		if p == nil {
			continue
		}
		select {
		case <-p.Done():
			f.unexpected++
			log := p.Log.String()
			if len(log) > 2000 {
				log = log[len(log)-2000:]
			}
			f.exits = append(f.exits, fmt.Sprintf("slot %d generation %d: %v; log tail:\n%s", i, f.gen[i], p.Err(), log))
			f.start(i)
		default:
		}
	}
}

// started waits (up to 15 s) until the relay in slot has logged its start,
// which it does after installing its SIGTERM handler: a SIGTERM sent before
// that would end the process with the default action, not stop it cleanly.
func (f *fleet) started(slot int) {
	_ = f.procs[slot].Log.Wait(15*time.Second, 1, "jitoutbox-relay starting")
}

// leave stops the relay in slot with SIGTERM: it must exit cleanly,
// releasing its partitions. Start the slot again with restartKilled.
func (f *fleet) leave(slot int) {
	f.started(slot)
	if err := f.procs[slot].Stop(15 * time.Second); err != nil {
		f.leaveErrs = append(f.leaveErrs, fmt.Sprintf("relay slot %d generation %d leaving: %v", slot, f.gen[slot], err))
	}
	f.leaves++
}

// restartKilled starts relays in the given (killed) slots again.
func (f *fleet) restartKilled(slots ...int) {
	for _, i := range slots {
		f.start(i)
	}
}

// stop stops every relay with SIGTERM; each must exit cleanly.
func (f *fleet) stop() []error {
	var errs []error
	for i, p := range f.procs {
		if p == nil {
			continue
		}
		f.started(i)
		if err := p.Stop(15 * time.Second); err != nil {
			errs = append(errs, fmt.Errorf("relay slot %d: %w", i, err))
		}
	}
	return errs
}

// logCount counts lines containing every sub over all processes.
func (f *fleet) logCount(subs ...string) int {
	n := 0
	for _, p := range f.all {
		n += p.Log.Count(subs...)
	}
	return n
}

// cutter cuts the relays' database connections.
type cutter interface {
	// cut kills every database connection the relays hold and returns how
	// many it killed.
	cut(ctx context.Context) (int, error)
}

// pgCutter terminates the backends whose application_name is the relays'.
type pgCutter struct {
	db  *sql.DB
	app string
}

func (c pgCutter) cut(ctx context.Context) (int, error) {
	var n int
	err := c.db.QueryRowContext(ctx, `SELECT count(*) FROM (
		SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE application_name = $1 AND pid <> pg_backend_pid()) k`, c.app).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("pg_terminate_backend: %w", err)
	}
	return n, nil
}

// mysqlCutter KILLs the connections of the relays' own database user.
type mysqlCutter struct {
	db   *sql.DB
	user string
}

func (c mysqlCutter) cut(ctx context.Context) (int, error) {
	rows, err := c.db.QueryContext(ctx, "SELECT id FROM information_schema.processlist WHERE user = ? AND id <> CONNECTION_ID()", c.user)
	if err != nil {
		return 0, fmt.Errorf("processlist: %w", err)
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return 0, fmt.Errorf("processlist: %w", err)
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("processlist: %w", err)
	}
	n := 0
	for _, id := range ids {
		// id is an integer read from the server, not a user value; KILL
		// takes no placeholder.
		if _, err := c.db.ExecContext(ctx, fmt.Sprintf("KILL CONNECTION %d", id)); err == nil {
			n++
		} // else: the connection had gone already ("Unknown thread id")
	}
	return n, nil
}

// action is one fault, fired when the producers have handed out at events.
type action struct {
	kind string // "kill", "churn", "cut", "broker", "db", "join", "leave", "tenant"
	at   int64
}

// schedule spreads the faults over the run in random order, each at an even
// fraction of the events; tenants are created in the run's first half.
func schedule(s size, rng *rand.Rand) []action {
	var acts []action
	for range s.kills {
		acts = append(acts, action{kind: "kill"})
	}
	for range s.churns {
		acts = append(acts, action{kind: "churn"})
	}
	for range s.cuts {
		acts = append(acts, action{kind: "cut"})
	}
	for range s.restarts {
		acts = append(acts, action{kind: "broker"})
	}
	for range s.dbRestarts {
		acts = append(acts, action{kind: "db"})
	}
	for i := range s.members {
		acts = append(acts, action{kind: []string{"join", "leave"}[i%2]})
	}
	rng.Shuffle(len(acts), func(i, j int) { acts[i], acts[j] = acts[j], acts[i] })
	for i := range acts {
		acts[i].at = int64(s.events) * int64(i+1) / int64(len(acts)+1)
	}
	// New tenants come in the first half of the run, so that the
	// producers write to them for a good while.
	for i := range s.newTenants {
		acts = append(acts, action{kind: "tenant", at: int64(s.events) * int64(i+1) / int64(2*(s.newTenants+1))})
	}
	slices.SortStableFunc(acts, func(a, b action) int { return cmp.Compare(a.at, b.at) })
	return acts
}

// pause waits d or until ctx ends (chaos timing, not correctness).
func pause(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// brokerOutage stops the embedded NATS server, keeps it down for down and
// starts it again (same port, same store).
func brokerOutage(ctx context.Context, t *testing.T, srv *testnats.Embedded, down time.Duration) {
	srv.Shutdown()
	pause(ctx, down)
	srv.Restart(t)
}

// warnKinds counts the relays' WARN and ERROR log lines by level and message.
func (f *fleet) warnKinds() map[string]int {
	kinds := map[string]int{}
	for _, p := range f.all {
		for _, line := range strings.Split(p.Log.String(), "\n") {
			var rec struct {
				Level string `json:"level"`
				Msg   string `json:"msg"`
			}
			if json.Unmarshal([]byte(line), &rec) != nil {
				if strings.TrimSpace(line) != "" && !strings.HasPrefix(line, "{") {
					kinds["(not JSON) "+truncate(line, 50)]++
				}
				continue
			}
			if rec.Level == "WARN" || rec.Level == "ERROR" {
				kinds[rec.Level+" "+truncate(rec.Msg, 54)]++
			}
		}
	}
	return kinds
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
