package e2e

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/notify"
	"github.com/jitoutbox/jitoutbox/relay"
	"github.com/jitoutbox/jitoutbox/txoutbox"
)

// The scale of TestTenantsFleet.
const (
	tenantCount      = 50 // tenants at the start; one more is created mid-run
	tenantPartitions = 8
	tenantFleets     = 3 // three relay processes' worth of fleets
	tenantBacklog    = 20000
	criticalTenants  = 5
	// criticalPeriod is each time-critical writer's pace: five writers
	// commit about 50 transactions a second in all.
	criticalPeriod = 100 * time.Millisecond
	// tenantDiscover is the fleets' DiscoverInterval.
	tenantDiscover = time.Second
	// tenantSource names the one source of each fleet of TestTenantsFleet.
	tenantSource = "tenants"
)

// TestTenantsFleet runs three fleets (three relay processes' worth, each
// with its own *sql.DB) over 50 tenants, each a schema (PostgreSQL) or a
// database (MariaDB) <prefix>_NNN with its outbox table of 8 partitions,
// found by the pattern <prefix>_*.outbox:
//
//   - every tenant's events are published, each tenant's partitions split
//     across the fleets; one tenant at an old schema version is reported
//     in Tables (dialects.ErrSchemaVersion) while the others flow, and
//     logged once by each fleet, never as served;
//   - while events flow, a tenant created and migrated starts flowing
//     within about a discovery interval, and a dropped one stops: Tables
//     shows it not served with no error, and each fleet logs "table gone"
//     for it once, with no error loop;
//   - one tenant gets a 20,000-event backlog while five others commit
//     time-critical events through txoutbox wired to a fleet's relay of
//     their table: every time-critical event arrives before the backlog is
//     drained (their commit-to-publish latencies are logged);
//   - every fleet stops with Run returning nil; no event is lost or
//     published twice, and each aggregate (whose id names its tenant) is
//     published in order.
func TestTenantsFleet(t *testing.T) {
	t.Run("postgres", func(t *testing.T) { tenantsScenario(t, postgresTenants(t)) })
	t.Run("mariadb", func(t *testing.T) { tenantsScenario(t, mariaTenants(t)) })
}

func tenantsScenario(t *testing.T, ts tenantServer) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	began := time.Now()
	names := make([]string, tenantCount)
	for i := range names {
		names[i] = ts.tenantName(i)
	}
	tenants := ts.createAll(t, ctx, names)
	t.Logf("%d tenants created and migrated in %v", len(tenants), time.Since(began).Round(time.Millisecond))
	old, gone, backlog := tenants[1], tenants[2], tenants[3]
	critical := tenants[4 : 4+criticalTenants]
	healthy := slices.Delete(slices.Clone(tenants), 1, 2)
	ageTenant(t, ctx, old)

	led, rec, wakes := newLedger(), newRecorder(), notify.NewLocal()
	pubs := &publishLog{by: map[string][]string{}}
	fleets := make([]tenantFleet, tenantFleets)
	for i := range fleets {
		db := ts.open(t)
		src := relay.Source{Name: tenantSource, DB: db, Dialect: ts.dialect,
			Patterns: []string{ts.prefix + "_*.outbox"}, Wakes: []notify.Source{wakes}}
		fleets[i] = startTenantFleet(t, fmt.Sprintf("fleet-%d", i), db, rec, pubs, src)
	}

	// Every healthy tenant flows, split across the fleets; the old one is
	// reported.
	insertRound(t, ctx, led, healthy, 3, 4)
	awaitTenants(t, 60*time.Second, rec, led, fleets)
	waitTable(t, fleets, tenantSource, old.d.Table(), 30*time.Second, "the old tenant reported", func(s relay.TableState) bool {
		return !s.Serving && errors.Is(s.Err, dialects.ErrSchemaVersion)
	})
	waitSplit(t, ctx, healthy, fleets)

	// Churn while the others flow: a new tenant, a dropped one.
	flowing := slices.DeleteFunc(slices.Clone(healthy), func(tn tenant) bool { return tn.name == gone.name })
	stopFlow := flow(ctx, t, led, flowing, 300*time.Millisecond)
	fresh := ts.create(t, ctx, ts.tenantName(tenantCount))
	ids, err := fresh.insert(ctx, led, aggIDs(fresh, "a", 3), 4)
	if err != nil {
		t.Fatal(err)
	}
	committed := time.Now()
	var first, served time.Duration
	waitFor(t, tenantDiscover+30*time.Second, "the new tenant served by every fleet, its events published", func() bool {
		took := time.Since(committed)
		n := rec.delivered(ids)
		if first == 0 && n > 0 {
			first = took
		}
		if served == 0 && allServing(fleets, fresh.d.Table()) {
			served = took
		}
		return served > 0 && n == len(ids)
	})
	t.Logf("new tenant (DiscoverInterval %v) after its events' commit: first published %v, served by every fleet %v, all %d published %v",
		tenantDiscover, first.Round(time.Millisecond), served.Round(time.Millisecond), len(ids), time.Since(committed).Round(time.Millisecond))
	ts.drop(t, ctx, gone.name)
	waitTable(t, fleets, tenantSource, gone.d.Table(), 30*time.Second, "the dropped tenant not served, with no error", func(s relay.TableState) bool {
		return !s.Serving && s.Err == nil
	})
	stopFlow()
	awaitTenants(t, 60*time.Second, rec, led, fleets)

	backlogRace(t, ctx, led, rec, pubs, backlog, critical, fleets, wakes)

	for _, fl := range fleets {
		fl.stop()
	}
	checkDups(t, rec, led, pubs, fleets, gone.name)
	for _, fl := range fleets {
		checkGoneLogs(t, fl, gone.name)
		t.Logf("%s: warnings and errors logged: %v", fl.name, fl.logs.troubles())
		if n := len(fl.logs.lines(old.name, "table not served")); n != 1 {
			t.Errorf("%s: \"table not served\" logged %d times for the old tenant, want once", fl.name, n)
		}
		if n := len(fl.logs.lines(old.name, "serving table")); n != 0 {
			t.Errorf("%s: \"serving table\" logged %d times for the old tenant, want never", fl.name, n)
		}
		for _, s := range fl.f.Tables() {
			switch s.Table {
			case old.d.Table(), gone.d.Table():
			default:
				if !s.Serving || s.Err != nil {
					t.Errorf("%s: table %s: serving %v, err %v", fl.name, s.Table, s.Serving, s.Err)
				}
			}
		}
	}
	t.Logf("%d events of %d tenants in %v", len(led.ids()), len(tenants)+1, time.Since(began).Round(time.Millisecond))
}

// The phases of backlogRace in which a time-critical event commits.
var critPhases = []string{"idle", "while the backlog is written", "while it drains"}

// backlogRace runs a time-critical writer in each of critical, through
// txoutbox wired to a fleet's relay of its table and to wakes (as a
// cross-process wake would be), for a while, then commits a backlog of
// tenantBacklog events into backlog, and stops the writers once half the
// backlog is published. Every time-critical event must arrive before the
// backlog's last one: measured here, the slowest arrived seconds before
// it on a machine loaded by other tests. The commit-to-publish latencies
// are logged by phase and by the lane that published the event: the
// hand-over lane (rows the wired relay was handed in memory, or that a
// relay of another fleet found by its critical read when the wake reached
// it) or the read lane.
func backlogRace(t *testing.T, ctx context.Context, led *ledger, rec *recorder, pubs *publishLog, backlog tenant, critical []tenant,
	fleets []tenantFleet, wakes notify.Notifier) {
	t.Helper()
	wctx, stopWriters := context.WithCancel(ctx)
	var (
		wg    sync.WaitGroup
		phase atomic.Int32
		mu    sync.Mutex
		crit  = map[string]int32{} // event id -> phase of its commit
	)
	for i, tn := range critical {
		fl := fleets[i%len(fleets)]
		r, err := fl.f.Relay(tenantSource, tn.d.Table())
		if err != nil {
			t.Fatal(err)
		}
		ob, err := txoutbox.New(fl.db, r.Dialect(), txoutbox.WithRelay(r), txoutbox.WithNotifier(wakes))
		if err != nil {
			t.Fatal(err)
		}
		aggs := aggIDs(tn, "c", 4)
		wg.Go(func() {
			tick := time.NewTicker(criticalPeriod)
			defer tick.Stop()
			for n := 0; ; n++ {
				select {
				case <-wctx.Done():
					return
				case <-tick.C:
				}
				p := phase.Load()
				ids, err := led.commit(wctx, ob, aggs[n%len(aggs)], 1, true)
				if err != nil {
					if wctx.Err() == nil {
						t.Errorf("time-critical commit in %s: %v", tn.name, err)
					}
					return
				}
				mu.Lock()
				for _, id := range ids {
					crit[id] = p
				}
				mu.Unlock()
			}
		})
	}
	// The idle phase: meanwhile, time the statement a cross-process wake
	// costs each fleet (Activity over every table of the database) on
	// the test's pool.
	var tables []string
	for _, st := range fleets[0].f.Tables() {
		if st.Serving {
			tables = append(tables, st.Table)
		}
	}
	var act []time.Duration
	for idle := time.Now(); time.Since(idle) < 2*time.Second; time.Sleep(100 * time.Millisecond) {
		start := time.Now()
		if _, err := backlog.d.Activity(ctx, backlog.db, tables); err != nil {
			t.Fatal(err)
		}
		act = append(act, time.Since(start))
	}
	slices.Sort(act)
	t.Logf("idle: Activity over %d tables p50 %v, max %v", len(tables), quantile(act, 0.5), quantile(act, 1))
	began := time.Now()
	phase.Store(1)
	bulk, err := backlog.insert(ctx, led, aggIDs(backlog, "b", 100), tenantBacklog/100)
	if err != nil {
		t.Fatal(err)
	}
	phase.Store(2)
	t.Logf("backlog of %d events committed in %v", len(bulk), time.Since(began).Round(time.Millisecond))
	waitFor(t, 120*time.Second, "half the backlog published", func() bool {
		return rec.delivered(bulk) >= len(bulk)/2
	})
	stopWriters()
	wg.Wait()
	rec.await(t, 120*time.Second, bulk)
	rec.await(t, 30*time.Second, slices.Collect(maps.Keys(crit)))
	end := began
	for _, id := range bulk {
		if at := rec.firstAt(id); at.After(end) {
			end = at
		}
	}
	// By phase, then by the lane that published first.
	lat := make([]map[string][]time.Duration, len(critPhases))
	for i := range lat {
		lat[i] = map[string][]time.Duration{}
	}
	late, lastCrit := 0, began
	for id, p := range crit {
		at := rec.firstAt(id)
		if at.After(end) {
			late++
		}
		if at.After(lastCrit) {
			lastCrit = at
		}
		led.mu.Lock()
		d := at.Sub(led.at[id])
		led.mu.Unlock()
		pubs.mu.Lock()
		lane := "?"
		if by := pubs.by[id]; len(by) > 0 {
			_, lane, _ = strings.Cut(by[0], "/")
		}
		pubs.mu.Unlock()
		lat[p]["all"] = append(lat[p]["all"], d)
		lat[p][lane] = append(lat[p][lane], d)
	}
	t.Logf("backlog drained %v after its commit began, %v after the last time-critical event arrived", end.Sub(began).Round(time.Millisecond), end.Sub(lastCrit).Round(time.Millisecond))
	for p, name := range critPhases {
		var sum []string
		for _, lane := range slices.Sorted(maps.Keys(lat[p])) {
			ds := lat[p][lane]
			slices.Sort(ds)
			sum = append(sum, fmt.Sprintf("%s %d: p50 %v, p99 %v, max %v", lane, len(ds), quantile(ds, 0.50), quantile(ds, 0.99), quantile(ds, 1)))
		}
		t.Logf("time-critical events of %d tenants %s, commit to publish: %s", len(critical), name, strings.Join(sum, "; "))
	}
	if len(lat[2]["all"]) == 0 {
		t.Error("no time-critical event was committed while the backlog drained")
	}
	if late > 0 {
		t.Errorf("%d of %d time-critical events arrived after the backlog was drained", late, len(crit))
	}
}

// quantile returns the q quantile of sorted ds (0 for none).
func quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	return ds[min(len(ds)-1, int(q*float64(len(ds))))].Round(10 * time.Microsecond)
}

// delivered counts the events among ids delivered at least once.
func (r *recorder) delivered(ids []string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, id := range ids {
		if r.count[id] > 0 {
			n++
		}
	}
	return n
}

// Publish records every message of batch as delivered: the recorder as
// the fleets' broker.
func (r *recorder) Publish(_ context.Context, batch []relay.Message, _ []error) {
	now := time.Now()
	for _, m := range batch {
		r.note(m.ID, m.Payload, now)
	}
}

// insertRound commits, into each of tns, perAgg events of each of aggs
// aggregates.
func insertRound(t *testing.T, ctx context.Context, led *ledger, tns []tenant, aggs, perAgg int) {
	t.Helper()
	for _, tn := range tns {
		if _, err := tn.insert(ctx, led, aggIDs(tn, "a", aggs), perAgg); err != nil {
			t.Fatalf("tenant %s: %v", tn.name, err)
		}
	}
}

// flow commits a round of events (two aggregates, two events each) into
// every tenant of tns every period until the returned stop is called,
// which returns once it has stopped.
func flow(ctx context.Context, t *testing.T, led *ledger, tns []tenant, period time.Duration) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(period)
		defer tick.Stop()
		for {
			for _, tn := range tns {
				if _, err := tn.insert(ctx, led, aggIDs(tn, "a", 2), 2); err != nil {
					if ctx.Err() == nil {
						t.Errorf("tenant %s: %v", tn.name, err)
					}
					return
				}
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return func() {
		cancel()
		<-done
	}
}

// waitSplit waits until every partition of every tenant of tns is owned
// by a live session and each fleet owns some of each table.
func waitSplit(t *testing.T, ctx context.Context, tns []tenant, fleets []tenantFleet) {
	t.Helper()
	var last string
	waitFor(t, 60*time.Second, "every tenant's partitions split across the fleets", func() bool {
		for _, tn := range tns {
			o, err := tn.d.Ownership(ctx, tn.db, time.Now())
			if err != nil {
				t.Fatalf("ownership of %s: %v", tn.name, err)
			}
			names := map[string]string{}
			for _, r := range o.Relays {
				names[r.Token] = r.Name
			}
			owned := map[string]int{}
			for _, p := range o.Partitions {
				if p.Live {
					owned[names[p.Owner]]++
				}
			}
			sum := 0
			for _, fl := range fleets {
				sum += owned[fl.name]
				if owned[fl.name] == 0 {
					last = fmt.Sprintf("%s: %v", tn.name, owned)
					return false
				}
			}
			if sum != len(o.Partitions) {
				last = fmt.Sprintf("%s: %v of %d", tn.name, owned, len(o.Partitions))
				return false
			}
		}
		return true
	}, func() string { return last })
}

// waitTable waits until the state of table of source in every fleet
// satisfies ok.
func waitTable(t *testing.T, fleets []tenantFleet, source, table string, limit time.Duration, what string, ok func(relay.TableState) bool) {
	t.Helper()
	var last string
	waitFor(t, limit, what, func() bool {
		for _, fl := range fleets {
			s, found := stateOf(fl.f, source, table)
			if !found || !ok(s) {
				last = fmt.Sprintf("%s: %+v (found %v)", fl.name, s, found)
				return false
			}
		}
		return true
	}, func() string { return last })
}

// awaitTenants waits until every event of led is delivered; after limit
// it fails the test with the tenants that miss events, their tables'
// states in every fleet, and the fleets' warnings and errors.
func awaitTenants(t *testing.T, limit time.Duration, rec *recorder, led *ledger, fleets []tenantFleet) {
	t.Helper()
	ids := led.ids()
	for deadline := time.Now().Add(limit); rec.delivered(ids) < len(ids); time.Sleep(20 * time.Millisecond) {
		if time.Now().Before(deadline) {
			continue
		}
		missing := map[string]int{} // tenant -> events
		rec.mu.Lock()
		led.mu.Lock()
		for _, id := range ids {
			if rec.count[id] == 0 {
				agg := led.events[id].Agg
				missing[agg[:strings.LastIndexByte(agg, '-')]]++
			}
		}
		led.mu.Unlock()
		rec.mu.Unlock()
		var b strings.Builder
		for _, tn := range slices.Sorted(maps.Keys(missing)) {
			fmt.Fprintf(&b, "\n%s: %d events missing", tn, missing[tn])
			for _, fl := range fleets {
				s, _ := stateOf(fl.f, tenantSource, tn+".outbox")
				fmt.Fprintf(&b, "\n  %s: serving %v, err %v, since %v", fl.name, s.Serving, s.Err, s.Since.Format(time.StampMilli))
			}
		}
		for _, fl := range fleets {
			lines := append(fl.logs.lines("level=WARN"), fl.logs.lines("level=ERROR")...)
			fmt.Fprintf(&b, "\n%s: %d warnings and errors:\n  %s", fl.name, len(lines), strings.Join(lines[:min(20, len(lines))], "\n  "))
		}
		t.Fatalf("%d of %d events not delivered within %v:%s", len(ids)-rec.delivered(ids), len(ids), limit, b.String())
	}
}

// allServing reports whether every fleet serves table of tenantSource
// with no error.
func allServing(fleets []tenantFleet, table string) bool {
	for _, fl := range fleets {
		if s, ok := stateOf(fl.f, tenantSource, table); !ok || !s.Serving || s.Err != nil {
			return false
		}
	}
	return true
}

func stateOf(f *relay.Fleet, source, table string) (relay.TableState, bool) {
	for _, s := range f.Tables() {
		if s.Source == source && s.Table == table {
			return s, true
		}
	}
	return relay.TableState{}, false
}

// waitFor polls cond until it holds, failing after limit with what and
// the last state said by each of detail.
func waitFor(t *testing.T, limit time.Duration, what string, cond func() bool, detail ...func() string) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			var last []string
			for _, d := range detail {
				last = append(last, d())
			}
			t.Fatalf("%s: not reached within %v %s", what, limit, strings.Join(last, "; "))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// checkDups checks rec against led and fails the test on events
// published more than once, unless a fleet logged trouble that explains
// them (a lost session or mark, a database error: at-least-once on a
// loaded machine). Lines that hold ignore (about a dropped table) are no
// such trouble.
func checkDups(t *testing.T, rec *recorder, led *ledger, pubs *publishLog, fleets []tenantFleet, ignore string) {
	t.Helper()
	dups := rec.check(t, led)
	if dups == 0 {
		return
	}
	var trouble []string
	for _, fl := range fleets {
		for _, m := range []string{"ownership lost", "partitions lost before marking", "database error", "broker outage"} {
			for _, l := range fl.logs.lines(m) {
				if !strings.Contains(l, ignore) {
					trouble = append(trouble, l)
				}
			}
		}
	}
	if len(trouble) == 0 {
		t.Errorf("%d events published more than once although no fleet met trouble:%s", dups, pubs.duplicates(rec))
		return
	}
	t.Logf("%d events published more than once after trouble (at-least-once):%s\n%s", dups, pubs.duplicates(rec), strings.Join(trouble, "\n"))
}

// checkGoneLogs checks fl's log about the dropped tenant name: "table
// gone" once, a few warnings at most before it (reads that failed while
// the drop was not yet discovered), nothing after it.
func checkGoneLogs(t *testing.T, fl tenantFleet, name string) {
	t.Helper()
	lines := fl.logs.lines(name)
	at := -1
	for i, l := range lines {
		if strings.Contains(l, "table gone") {
			if at >= 0 {
				t.Errorf("%s: \"table gone\" logged twice for %s:\n%s\n%s", fl.name, name, lines[at], l)
			}
			at = i
		}
	}
	if at < 0 {
		t.Errorf("%s: no \"table gone\" line for %s; its lines:\n%s", fl.name, name, strings.Join(lines, "\n"))
		return
	}
	if after := lines[at+1:]; len(after) > 0 {
		t.Errorf("%s: %d lines about %s after \"table gone\", e.g.\n%s", fl.name, len(after), name, after[0])
	}
	before := 0
	for _, l := range lines[:at] {
		if strings.Contains(l, "level=WARN") || strings.Contains(l, "level=ERROR") {
			before++
		}
	}
	t.Logf("%s: %d warnings and errors about %s before \"table gone\"", fl.name, before, name)
	if before > 5 {
		t.Errorf("%s: %d warnings and errors about the dropped %s (an error loop?):\n%s", fl.name, before, name, strings.Join(lines[:at], "\n"))
	}
}
