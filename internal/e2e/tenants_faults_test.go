package e2e

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/internal/testdb"
	"github.com/jitoutbox/jitoutbox/notify"
	"github.com/jitoutbox/jitoutbox/relay"
	"github.com/jitoutbox/jitoutbox/txoutbox"
)

// sqliteTenant migrates the outbox table of a new SQLite file.
func sqliteTenant(t *testing.T, name string) tenant {
	t.Helper()
	ctx := context.Background()
	db, _ := testdb.SQLite(t)
	d, err := testdb.TableDialect("sqlite")("outbox")
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Migrate(ctx, db); err != nil {
		t.Fatal(err)
	}
	parts, err := d.Partitions(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	return tenant{name: name, db: db, d: d, parts: parts}
}

// TestFleetOldTableLoggedOnce checks that a table whose schema is at an
// older version, tried again at every discovery, is logged once and never
// shown served: it used to be shown served for a moment and logged twice
// per DiscoverInterval (TestTenantsFleet counted ~45 lines a minute per
// fleet with a 1 s interval).
func TestFleetOldTableLoggedOnce(t *testing.T) {
	old := sqliteTenant(t, "old")
	ageTenant(t, context.Background(), old)
	pubs := &publishLog{by: map[string][]string{}}
	fl := startTenantFleet(t, "fleet", nil, newRecorder(), pubs,
		relay.Source{Name: old.name, DB: old.db, Dialect: testdb.TableDialect("sqlite"), Patterns: []string{"outbox"}})
	served := 0
	for end := time.Now().Add(3*tenantDiscover + tenantDiscover/2); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		if s, ok := stateOf(fl.f, old.name, "outbox"); ok && s.Serving {
			served++
		}
	}
	fl.stop()
	s, _ := stateOf(fl.f, old.name, "outbox")
	if !errors.Is(s.Err, dialects.ErrSchemaVersion) {
		t.Errorf("the old table's state: %+v, want an error wrapping ErrSchemaVersion", s)
	}
	if n := len(fl.logs.lines("table not served")); n != 1 {
		t.Errorf("\"table not served\" logged %d times in %v, want once:\n%v", n, 3*tenantDiscover+tenantDiscover/2, fl.logs.lines("table"))
	}
	if served > 0 {
		t.Errorf("Tables showed the old table served in %d of its samples", served)
	}
}

// TestFleetCriticalAheadOfBacklog checks that a time-critical event
// committed by another process into a table with a backlog is published
// before the backlog by a Fleet, as by a lone Relay: the fleet's wake goes
// to the table's critical read (Dialect.ReadCritical). It used to go to
// the read lane, which reads in seq order (SQLite, 5,000 events of
// backlog, five time-critical events after it: the lone relay published
// them before any backlog event, the fleet after every one).
func TestFleetCriticalAheadOfBacklog(t *testing.T) {
	for _, served := range []string{"relay", "fleet"} {
		t.Run(served, func(t *testing.T) {
			ctx := context.Background()
			tn := sqliteTenant(t, "tenant")
			led, rec, pubs, wakes := newLedger(), newRecorder(), &publishLog{by: map[string][]string{}}, notify.NewLocal()
			if served == "fleet" {
				startTenantFleet(t, "fleet", nil, rec, pubs, relay.Source{Name: tn.name, DB: tn.db,
					Dialect: testdb.TableDialect("sqlite"), Patterns: []string{"outbox"}, Wakes: []notify.Source{wakes}})
			} else {
				cfg := tenantRelayConfig("relay", &logBook{}, pubs)
				cfg.Sources = []notify.Source{wakes}
				r, err := relay.New(tn.db, tn.d, rec, cfg)
				if err != nil {
					t.Fatal(err)
				}
				runRelay(t, r)
			}
			ids, err := tn.insert(ctx, led, aggIDs(tn, "a", 1), 1)
			if err != nil {
				t.Fatal(err)
			}
			rec.await(t, 30*time.Second, ids) // served
			bulk, err := tn.insert(ctx, led, aggIDs(tn, "b", 100), 50)
			if err != nil {
				t.Fatal(err)
			}
			// Another process: no relay of its own, a wake for those of
			// the table.
			ob, err := txoutbox.New(tn.db, tn.d, txoutbox.WithNotifier(wakes))
			if err != nil {
				t.Fatal(err)
			}
			var crit []string
			for _, agg := range aggIDs(tn, "c", 5) {
				id, err := led.commit(ctx, ob, agg, 1, true)
				if err != nil {
					t.Fatal(err)
				}
				crit = append(crit, id...)
			}
			rec.await(t, 120*time.Second, append(crit, bulk...))
			var ahead int
			for _, id := range bulk {
				if rec.firstAt(id).Before(rec.firstAt(crit[len(crit)-1])) {
					ahead++
				}
			}
			t.Logf("%s: %d of the %d backlog events were published before the last time-critical event", served, ahead, len(bulk))
			if ahead > len(bulk)/2 {
				t.Errorf("%s: the time-critical events waited behind %d of the %d backlog events", served, ahead, len(bulk))
			}
		})
	}
}

// runRelay runs r until the test ends and checks that Run returned nil.
func runRelay(t *testing.T, r *relay.Relay) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Relay.Run: %v", err)
		}
	})
}
