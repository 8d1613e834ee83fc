package chaos

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/jitoutbox/jitoutbox/txoutbox"
)

// backlogAgg is the hot aggregate of TestChaosBacklog's backlog.
const backlogAgg = "hot0000"

// backlogTx is how many backlog events one transaction registers.
const backlogTx = 500

// backlogBounded is TestChaosBacklog's bounded size: a 5,000-event backlog
// of one aggregate committed before the relays start, then the usual
// producers (20% of their transactions time-critical) with two broker
// outages, one relay kill and one connection cut.
func backlogBounded() size {
	s := brokerBounded()
	s.kills, s.churns, s.cuts, s.restarts = 1, 0, 1, 2
	s.backlog = 5000
	return s
}

// backlogLong is its -chaos.long size: a 20,000-event backlog, 100,000
// events over 4 minutes, eight broker outages.
func backlogLong() size {
	s := brokerLong()
	s.kills, s.churns, s.cuts, s.restarts = 4, 0, 4, 8
	s.backlog = 20_000
	return s
}

// TestChaosBacklog is the harness with a backlog: one aggregate's events
// wait in the outbox when the relays start, time-critical commits of other
// aggregates arrive while it drains, and the broker goes away mid-run
// (an embedded JetStream server stopped and started). Beside every
// assertion of the other scenarios, a broker outage must spend no publish
// attempt: no row ends with attempts > 0. The summary reports the
// time-critical commit-to-delivery latency behind the backlog and after
// it.
func TestChaosBacklog(t *testing.T) {
	s := scenarioSize(t, backlogBounded(), backlogLong())
	t.Run("postgres", func(t *testing.T) { runChaos(t, s, newJetStream, postgresTarget) })
	t.Run("mariadb", func(t *testing.T) { runChaos(t, s, newJetStream, mysqlTarget) })
}

// commitBacklog commits n events of backlogAgg, backlogTx per transaction,
// and records them in the ledger. The database is up: any error fails the
// run.
func commitBacklog(ctx context.Context, t *testing.T, ob *txoutbox.Outbox, bind func(int) string, led *ledger, n int) {
	t.Helper()
	q := fmt.Sprintf("INSERT INTO chaos_orders (tx_id, agg, events) VALUES (%s, %s, %s)", bind(1), bind(2), bind(3))
	for first := 1; first <= n; first += backlogTx {
		last := min(first+backlogTx-1, n)
		txID := fmt.Sprintf("backlog-%d", first)
		tx, err := ob.Begin(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.ExecContext(ctx, q, txID, backlogAgg, last-first+1); err != nil {
			t.Fatal(err)
		}
		ids := make(map[string]evRef, last-first+1)
		for seq := first; seq <= last; seq++ {
			body, _ := json.Marshal(payload{Agg: backlogAgg, Seq: int64(seq), Tx: txID})
			id, err := tx.Add(txoutbox.Event{AggregateType: "order", AggregateID: backlogAgg, EventType: "order.changed", Payload: body})
			if err != nil {
				t.Fatal(err)
			}
			ids[id] = evRef{agg: backlogAgg, seq: int64(seq), tx: txID}
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		now := time.Now()
		led.mu.Lock()
		for id, ref := range ids {
			ref.at = now
			led.committed[id] = ref
		}
		led.txCommit++
		led.mu.Unlock()
	}
}

// attemptRows counts the outbox rows whose publish attempts were counted
// (attempts > 0), in any state, and returns the last errors of a few.
func attemptRows(ctx context.Context, db *sql.DB, table string) (int64, []string, error) {
	var n int64
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM "+table+" WHERE attempts > 0").Scan(&n); err != nil || n == 0 {
		return n, nil, err
	}
	rows, err := db.QueryContext(ctx, "SELECT attempts, last_error FROM "+table+" WHERE attempts > 0 ORDER BY seq LIMIT 5")
	if err != nil {
		return n, nil, err
	}
	defer rows.Close()
	var errs []string
	for rows.Next() {
		var attempts int
		var last sql.NullString
		if err := rows.Scan(&attempts, &last); err != nil {
			return n, nil, err
		}
		errs = append(errs, fmt.Sprintf("attempts %d, last error %q", attempts, last.String))
	}
	return n, errs, rows.Err()
}

// criticalLatency splits the commit-to-first-delivery latency of
// time-critical events into those committed while the backlog was still
// draining (before the backlog's last event was first delivered) and
// those committed after (called with both locks held).
func criticalLatency(l *ledger, r *recorder) (behind, after []time.Duration) {
	var drained time.Time
	for id, ref := range l.committed {
		if ref.agg == backlogAgg {
			if at, ok := r.first[id]; ok && at.After(drained) {
				drained = at
			}
		}
	}
	for id, ref := range l.committed {
		at, ok := r.first[id]
		if !ref.critical || ref.at.IsZero() || !ok {
			continue
		}
		if ref.at.Before(drained) {
			behind = append(behind, at.Sub(ref.at))
		} else {
			after = append(after, at.Sub(ref.at))
		}
	}
	return behind, after
}
