package chaos

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"
)

// dbReady bounds a database server's start after a restart.
const dbReady = 2 * time.Minute

// restartRec is one database restart fired by the harness.
type restartRec struct {
	kill     bool      // SIGKILL; else a fast shutdown
	downAt   time.Time // the stop or kill began
	upAt     time.Time // the server accepts connections again
	stopTook time.Duration
}

// restartDB stops the run's database server (a fast shutdown, or a SIGKILL
// with kill), keeps it down for down and starts it again on the same port
// and data. Open transactions fail: the producers retry theirs and resolve
// an uncertain Commit at the end, the relays reconnect by themselves.
//
// It first waits until every relay of f has opened its ownership session:
// the scenario is about running relays. (A relay whose start-up check of
// the table meets a database that is down exits at once, and with a wrong
// reason: dialects' Partitions reports any error as ErrSchemaVersion and
// relay.Run returns it. That is a defect of its own, reported, not what
// this scenario measures.)
func restartDB(ctx context.Context, t *testing.T, tg target, f *fleet, kill bool, down time.Duration) restartRec {
	t.Helper()
	waitSessions(ctx, t, tg, f)
	r := restartRec{kill: kill, downAt: time.Now()}
	if kill {
		tg.server.Kill()
	} else {
		sctx, cancel := context.WithTimeout(ctx, dbReady)
		err := tg.server.Stop(sctx)
		cancel()
		if err != nil {
			t.Fatalf("chaos: stop the database: %v", err)
		}
	}
	r.stopTook = time.Since(r.downAt)
	pause(ctx, down)
	sctx, cancel := context.WithTimeout(ctx, dbReady)
	defer cancel()
	if err := tg.server.Start(sctx); err != nil {
		t.Fatalf("chaos: start the database again: %v", err)
	}
	r.upAt = time.Now()
	// The harness's own pool: drop the idle connections to the old server,
	// so that its next reads (partition owners, stats) do not meet them.
	tg.db.SetMaxIdleConns(0)
	tg.db.SetMaxIdleConns(2)
	return r
}

// waitSessions waits (up to 30 s) until every live relay of f has
// registered an ownership session in the <table>_relays table (its name is
// the relay's -owner, unique per generation).
func waitSessions(ctx context.Context, t *testing.T, tg target, f *fleet) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	// With tenants, the first tenant's table: the relays serve them all.
	q := "SELECT count(*) FROM " + tg.tenants.all()[0].d.Table() + "_relays WHERE name = " + tg.bind(1)
	for _, slot := range f.live() {
		for {
			var n int
			err := tg.db.QueryRowContext(ctx, q, owner(slot, f.gen[slot])).Scan(&n)
			if err == nil && n > 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("chaos: relay %s opened no ownership session in 30 s (last error: %v)", owner(slot, f.gen[slot]), err)
			}
			pause(ctx, 50*time.Millisecond)
		}
	}
}

// restartStall is what the consumer saw after one restart.
type restartStall struct {
	restartRec
	// resume: from upAt to the first delivery after it.
	resume time.Duration
	// stall: the longest wait, from its commit to its first delivery, of
	// an event committed within stallWindow after upAt (-1: no such
	// event).
	stall time.Duration
	// backlog: the longest wait, counted from upAt, of an event committed
	// before the outage and first delivered after upAt (-1: none).
	backlog time.Duration
}

// stalls measures the delivery stall after each restart.
func stalls(rs []restartRec, l *ledger, r *recorder) []restartStall {
	l.mu.Lock()
	defer l.mu.Unlock()
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []restartStall
	for _, rr := range rs {
		st := restartStall{restartRec: rr, resume: -1, stall: -1, backlog: -1}
		for _, f := range r.first {
			if f.After(rr.upAt) && (st.resume < 0 || f.Sub(rr.upAt) < st.resume) {
				st.resume = f.Sub(rr.upAt)
			}
		}
		for id, ref := range l.committed {
			f, ok := r.first[id]
			if ref.at.IsZero() || !ok || !f.After(rr.upAt) {
				continue
			}
			switch {
			case !ref.at.Before(rr.upAt) && ref.at.Before(rr.upAt.Add(stallWindow)):
				st.stall = max(st.stall, f.Sub(ref.at))
			case ref.at.Before(rr.downAt):
				st.backlog = max(st.backlog, f.Sub(rr.upAt))
			}
		}
		out = append(out, st)
	}
	return out
}

// String describes one restart and its stall.
func (s restartStall) String() string {
	kind := "fast shutdown"
	if s.kill {
		kind = "SIGKILL"
	}
	return fmt.Sprintf("%-13s down %v: first delivery %s after the restart, new events waited up to %s, older ones %s after it",
		kind, s.upAt.Sub(s.downAt).Round(time.Millisecond), orDash(s.resume), orDash(s.stall), orDash(s.backlog))
}

// orDash formats a measured duration in milliseconds, or "-" for none (a
// negative one).
func orDash(d time.Duration) string {
	if d < 0 {
		return "-"
	}
	return d.Round(time.Millisecond).String()
}

// stallDistribution is the distribution of the stalls after restarts.
func stallDistribution(ss []restartStall) string {
	var ds []time.Duration
	for _, s := range ss {
		if s.stall >= 0 {
			ds = append(ds, s.stall)
		}
	}
	slices.Sort(ds)
	return distribution(ds)
}
