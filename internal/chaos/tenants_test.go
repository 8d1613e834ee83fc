package chaos

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/dialects/mysql"
	"github.com/jitoutbox/jitoutbox/dialects/postgres"
	"github.com/jitoutbox/jitoutbox/internal/testnats"
	"github.com/jitoutbox/jitoutbox/notify"
	"github.com/jitoutbox/jitoutbox/txoutbox"
)

// tenantPartitions is the partition count of every tenant's table: few,
// as a service with many tenants would choose. PostgreSQL holds an
// advisory lock per owned partition in its shared lock table (6,400 slots
// by default): 53 tenants of 8 partitions take 424.
const tenantPartitions = 8

// tenantsBounded is TestChaosTenants's bounded size: 20 tenants and one
// created mid-run, 6,000 events over 30 s on 40 aggregates of each tenant,
// four relay kills, one clean leave, three connection cuts and one broker
// restart; the relays look for new tenants every 2.5 s (-rebalance 3s).
func tenantsBounded() size {
	s := brokerBounded()
	s.events, s.duration = 6000, 30*time.Second
	s.kills, s.churns, s.cuts, s.restarts = 4, 1, 3, 1
	s.tenants, s.newTenants, s.aggregates = 20, 1, 40
	s.rebalance = 3 * time.Second
	return s
}

// tenantsLong is its -chaos.long size: 50 tenants and three created
// mid-run, 100,000 events over 4 minutes.
func tenantsLong() size {
	s := brokerLong()
	s.kills, s.churns, s.cuts, s.restarts = 16, 4, 8, 3
	s.tenants, s.newTenants, s.aggregates = 50, 3, 40
	s.rebalance = 3 * time.Second
	return s
}

// TestChaosTenants is the harness with tenants: every relay serves many
// outbox tables as one fleet (jitoutbox-relay -config, one source whose
// pattern <prefix>_*.outbox finds the tables): on PostgreSQL a schema per
// tenant, on MariaDB a database per tenant, each with a table outbox of
// tenantPartitions partitions. Producers commit to every tenant (the same
// aggregate ids in each, some transactions time-critical) while relays are
// SIGKILLed and restarted, leave cleanly, lose their database connections
// and the broker restarts, and a tenant is created mid-run. Same
// assertions as TestChaos, order kept per aggregate of each tenant; the
// summary reports every tenant's figures, and a tenant created mid-run
// must have its events committed and delivered too.
func TestChaosTenants(t *testing.T) {
	s := scenarioSize(t, tenantsBounded(), tenantsLong())
	t.Run("postgres", func(t *testing.T) { runChaos(t, s, newJetStream, postgresTarget) })
	t.Run("mariadb", func(t *testing.T) { runChaos(t, s, newJetStream, mysqlTarget) })
}

// tenant is one outbox table of a run and the producers' outbox for it:
// with tenants, the table outbox of the schema (PostgreSQL) or database
// (MariaDB) named after the tenant; without, the run's one table, of
// tenant "".
type tenant struct {
	name string
	d    dialects.Dialect
	ob   *txoutbox.Outbox
	// created: when a tenant created mid-run was ready (its table
	// migrated); zero for the tenants there at the start.
	created time.Time
}

// tenantSet is the run's tenants. A tenant created mid-run is drawn by the
// producers' next transactions. It is safe for concurrent use.
type tenantSet struct {
	// prefix names the tenants <prefix>_NNN; "" for the run of one table.
	prefix string
	opts   []txoutbox.Option // of every tenant's outbox

	mu   sync.Mutex
	list []*tenant
	// tried: tenants 0 to tried-1 were created, or tried to be.
	tried int
}

// openTenants makes the run's outbox tables: the target's one table, or
// s.tenants tenants created four at a time. The tenants' schemas or
// databases are dropped when the test ends, after the relays stopped.
func openTenants(ctx context.Context, t *testing.T, tg target, s size, n notify.Notifier) *tenantSet {
	t.Helper()
	ts := &tenantSet{opts: []txoutbox.Option{txoutbox.WithNotifier(n)}}
	if s.tenants == 0 {
		if err := tg.dialect.Migrate(ctx, tg.db); err != nil {
			t.Fatal(err)
		}
		if err := ts.add(tg.db, &tenant{d: tg.dialect}); err != nil {
			t.Fatal(err)
		}
		return ts
	}
	ts.prefix = testnats.RandomName("jitten_")
	t.Cleanup(func() { ts.drop(t, tg) })
	if tg.relayUser != "" {
		// MariaDB: the relays' user may use every tenant's database, those
		// created later included ('_' escaped: it is a wildcard).
		q := "GRANT ALL PRIVILEGES ON `" + strings.ReplaceAll(ts.prefix, "_", `\_`) + `\_%` + "`.* TO '" + tg.relayUser + "'@'%'"
		if _, err := tg.db.ExecContext(ctx, q); err != nil {
			t.Fatalf("chaos: grant the tenants' databases: %v", err)
		}
	}
	errs := make(chan error, s.tenants)
	sem := make(chan struct{}, 4)
	var wg sync.WaitGroup
	for i := range s.tenants {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			errs <- ts.create(ctx, tg, i, false)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	return ts
}

// name returns the name of tenant i.
func (ts *tenantSet) name(i int) string { return fmt.Sprintf("%s_%03d", ts.prefix, i) }

// create creates tenant i: its schema or database, and its outbox table
// of tenantPartitions partitions. midRun marks a tenant created while the
// producers run.
func (ts *tenantSet) create(ctx context.Context, tg target, i int, midRun bool) error {
	name := ts.name(i)
	ts.mu.Lock()
	ts.tried = max(ts.tried, i+1)
	ts.mu.Unlock()
	var (
		d    dialects.Dialect
		err  error
		stmt string
	)
	switch tg.dialect.Name() {
	case "postgres":
		stmt = "CREATE SCHEMA " + name
		d, err = postgres.New(postgres.WithTable(name+".outbox"), postgres.WithPartitions(tenantPartitions))
	case "mysql":
		stmt = "CREATE DATABASE " + name
		d, err = mysql.New(mysql.WithTable(name+".outbox"), mysql.WithPartitions(tenantPartitions))
	default:
		return fmt.Errorf("chaos: no tenants on %s", tg.dialect.Name())
	}
	if err != nil {
		return fmt.Errorf("chaos: tenant %s: %w", name, err)
	}
	if _, err := tg.db.ExecContext(ctx, stmt); err != nil {
		return fmt.Errorf("chaos: %s: %w", stmt, err)
	}
	if err := d.Migrate(ctx, tg.db); err != nil {
		return fmt.Errorf("chaos: migrate %s: %w", d.Table(), err)
	}
	tn := &tenant{name: name, d: d}
	if midRun {
		tn.created = time.Now()
	}
	return ts.add(tg.db, tn)
}

// add makes tn's outbox and adds it.
func (ts *tenantSet) add(db *sql.DB, tn *tenant) error {
	ob, err := txoutbox.New(db, tn.d, ts.opts...)
	if err != nil {
		return fmt.Errorf("chaos: outbox of %s: %w", tn.d.Table(), err)
	}
	tn.ob = ob
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.list = append(ts.list, tn)
	return nil
}

// createMidRun creates the next tenant while the producers run.
func (ts *tenantSet) createMidRun(ctx context.Context, t *testing.T, tg target) {
	t.Helper()
	ts.mu.Lock()
	next := ts.tried
	ts.mu.Unlock()
	if err := ts.create(ctx, tg, next, true); err != nil {
		t.Fatal(err)
	}
}

// drop drops every tenant's schema or database, by number: one whose
// creation failed half-way too.
func (ts *tenantSet) drop(t *testing.T, tg target) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	stmt := "DROP SCHEMA IF EXISTS %s CASCADE"
	if tg.dialect.Name() == "mysql" {
		stmt = "DROP DATABASE IF EXISTS %s"
	}
	ts.mu.Lock()
	n := ts.tried
	ts.mu.Unlock()
	for i := range n {
		if _, err := tg.db.ExecContext(ctx, fmt.Sprintf(stmt, ts.name(i))); err != nil {
			t.Logf("chaos: drop tenant %s: %v", ts.name(i), err)
		}
	}
}

// all returns the tenants, by name.
func (ts *tenantSet) all() []*tenant {
	ts.mu.Lock()
	out := slices.Clone(ts.list)
	ts.mu.Unlock()
	slices.SortFunc(out, func(a, b *tenant) int { return cmp.Compare(a.name, b.name) })
	return out
}

// pick draws the tenant of one transaction (without a draw when there is
// one).
func (ts *tenantSet) pick(rng *rand.Rand) *tenant {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if len(ts.list) == 1 {
		return ts.list[0]
	}
	return ts.list[rng.IntN(len(ts.list))]
}

// stats sums the pending and dead rows of every tenant's table.
func (ts *tenantSet) stats(ctx context.Context, db *sql.DB) (pending, dead int64, err error) {
	for _, tn := range ts.all() {
		st, err := tn.d.Stats(ctx, db)
		if err != nil {
			return 0, 0, fmt.Errorf("stats of %s: %w", tn.d.Table(), err)
		}
		pending, dead = pending+st.Pending, dead+st.Dead
	}
	return pending, dead, nil
}

// relayArgs are the relays' database and wake flags: -dialect and -dsn for
// the run of one table; with tenants, -config naming a file whose one
// source finds every tenant's table by the pattern <prefix>_*.outbox (a
// tenant created mid-run included).
func (ts *tenantSet) relayArgs(t *testing.T, tg target) []string {
	t.Helper()
	if ts.prefix == "" {
		return append([]string{"-dialect", tg.dialect.Name(), "-dsn", tg.relayDSN}, tg.wakeArgs...)
	}
	conf := fmt.Sprintf("sources:\n  - name: tenants\n    dialect: %s\n    dsn: %q\n    patterns: [\"%s_*.outbox\"]\n",
		tg.dialect.Name(), tg.relayDSN, ts.prefix)
	path := filepath.Join(t.TempDir(), "relay.yaml")
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	return append([]string{"-config", path}, tg.wakeArgs...)
}

// tenantFigures is what the consumer saw of one tenant's events.
type tenantFigures struct {
	name                                             string
	midRun                                           bool
	committed, delivered, missing, order, duplicates int
	// A tenant created mid-run: its first delivery after its creation
	// and after its first commit (-1: none).
	afterCreate, afterCommit time.Duration
}

// perTenant computes each tenant's figures.
func perTenant(tenants []*tenant, l *ledger, r *recorder) []tenantFigures {
	l.mu.Lock()
	defer l.mu.Unlock()
	r.mu.Lock()
	defer r.mu.Unlock()
	type acc struct {
		tenantFigures
		firstCommit, firstDelivery time.Time
	}
	by := map[string]*acc{}
	for _, tn := range tenants {
		by[tn.name] = &acc{tenantFigures: tenantFigures{name: tn.name, midRun: !tn.created.IsZero(), order: r.violBy[tn.name]}}
	}
	for id, ref := range l.committed {
		a := by[ref.tenant]
		if a == nil {
			continue
		}
		a.committed++
		if !ref.at.IsZero() && (a.firstCommit.IsZero() || ref.at.Before(a.firstCommit)) {
			a.firstCommit = ref.at
		}
		n := r.count[id]
		if n == 0 {
			a.missing++
			continue
		}
		a.delivered++
		a.duplicates += n - 1
		if f := r.first[id]; a.firstDelivery.IsZero() || f.Before(a.firstDelivery) {
			a.firstDelivery = f
		}
	}
	out := make([]tenantFigures, 0, len(tenants))
	for _, tn := range tenants {
		a := by[tn.name]
		a.afterCreate, a.afterCommit = -1, -1
		if a.midRun && !a.firstDelivery.IsZero() {
			a.afterCreate = a.firstDelivery.Sub(tn.created)
			if !a.firstCommit.IsZero() {
				a.afterCommit = a.firstDelivery.Sub(a.firstCommit)
			}
		}
		out = append(out, a.tenantFigures)
	}
	return out
}

// String is the tenant's line in the summary.
func (f tenantFigures) String() string {
	s := fmt.Sprintf("%-24s committed %6d delivered %6d missing %d order %d duplicates %d",
		f.name, f.committed, f.delivered, f.missing, f.order, f.duplicates)
	if f.midRun {
		s += fmt.Sprintf(" (created mid-run: first delivery %s after its creation, %s after its first commit)", orDash(f.afterCreate), orDash(f.afterCommit))
	}
	return s
}
