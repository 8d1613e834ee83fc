package relay

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/notify"
	"github.com/jitoutbox/jitoutbox/relay/internal/priority"
)

// Source is one database a Fleet serves and the outbox tables in it: a
// tenant's database, a shard, or one database holding a schema per tenant.
type Source struct {
	// Name labels the source in logs, metrics and Tables; unique in the
	// fleet. Required.
	Name string
	// DB is the database. Required.
	DB *sql.DB
	// Dialect returns the dialect of one outbox table of DB, for example
	// func(t string) (dialects.Dialect, error) { return postgres.New(postgres.WithTable(t)) }.
	// Required.
	Dialect func(table string) (dialects.Dialect, error)
	// Tables are outbox tables served by name.
	Tables []string
	// Patterns find more outbox tables (Dialect.FindTables: "tenant_*.outbox"
	// on PostgreSQL and MySQL), looked up again every
	// FleetConfig.DiscoverInterval: a table that appears starts flowing, a
	// table that disappears stops with a log line. Tables or Patterns
	// must name at least one table.
	Patterns []string
	// Publisher publishes the source's events. Default FleetConfig.Publisher.
	Publisher Publisher
	// Wakes deliver wakes from other processes for this database
	// (notify/pgnotify, notify/natsnotify): each wake makes the fleet ask
	// at once which tables have due rows (one statement) and read those.
	// Commits in this process reach the fleet without them: give
	// Fleet.Relay to txoutbox.WithRelay. Default: none.
	Wakes []notify.Source
}

// FleetConfig configures a Fleet.
type FleetConfig struct {
	// Sources are the databases served. At least one.
	Sources []Source
	// Publisher publishes the events of sources that have none of their own.
	Publisher Publisher
	// Relay is the configuration of each table's relay (Owner, BatchSize,
	// PollInterval, ...). Its PollInterval is the fleet's poll of each
	// database: one statement that finds the tables with due rows
	// (Dialect.Activity), not one read per table. Its Sources must be
	// empty: wakes are per database (Source.Wakes).
	Relay Config
	// Hooks returns the hooks of one table's relay, for metrics labelled by
	// source and table (otel: jitotel.FleetMetrics). Default: Relay.Hooks
	// for every table.
	Hooks func(source, table string) Hooks
	// DiscoverInterval is how often Source.Patterns are looked up again
	// (±20% jitter). Default 5/6 of Relay.RebalanceInterval (25 s), so that
	// a new table flows within one rebalance interval.
	DiscoverInterval time.Duration
}

// TableState is one table of a Fleet as its last run left it.
type TableState struct {
	// Source and Table name the table.
	Source, Table string
	// Serving reports that the table's relay is running.
	Serving bool
	// Err is why the table is not served (schema at another version, a
	// dialect refusing its name, its relay stopping with an error), or the
	// last error the fleet's look at the table met; nil when healthy.
	Err error
	// Since is when Serving or Err last changed.
	Since time.Time
}

// fleetRebalanceEvery is how often a fleet table's owner on a lock dialect
// reads ownership when nothing told it to: the anchor table's watch tells
// every table of a database when a relay joins or leaves, so this only
// bounds how long a lost signal could leave partitions unowned. With 200
// tables and three relays, every 2 h is 0.08 statements/s in all.
const fleetRebalanceEvery = 2 * time.Hour

// fleetNudgeGap is the least time between two nudges the fleet sends for
// its tables: a start opening hundreds of sessions sends a few, not one per
// table.
const fleetNudgeGap = 25 * time.Millisecond

// Fleet serves many outbox tables, of one or more databases, from one
// process: one relay per table, with the cost of a database paid once.
// Each database has one connection holding the ownership locks of all its
// tables (dialects.Locker) and one waiting for relays to join or leave;
// the safety-net poll is one statement per database that names the tables
// with due rows (Dialect.Activity); the database clock is measured once.
// Partitions of every table are split across the fleet's processes as a
// lone table's are across relays. A table whose schema is at another
// version, whose rows are bad or whose database is down affects only
// itself; Tables says which and why. Relays of one fleet should serve the
// same sources: a relay's departure is seen at once through the tables
// they share.
type Fleet struct {
	cfg     FleetConfig
	running atomic.Bool

	// mu guards the registry: relays outlive runs (txoutbox holds them
	// for the hand-over), states are read by Tables.
	mu     sync.Mutex
	relays map[tableKey]*Relay
	states map[tableKey]TableState
	// gates: one priority gate per distinct publisher, shared by the
	// broker stages of every table publishing through it
	// (relay/internal/broker), so that one tenant's drain does not delay
	// another tenant's time-critical events on the broker they share.
	gates map[pubKey]*priority.Gate
}

type tableKey struct{ source, table string }

// pubKey tells publishers apart: a publisher of a comparable type is
// itself; one of an uncomparable type (a PublisherFunc, say) cannot be
// told from another and counts as its source's own.
type pubKey struct {
	pub    Publisher
	source string
}

// publisherOf returns a source's publisher and its key.
func (f *Fleet) publisherOf(s *Source) (Publisher, pubKey) {
	p := cmp.Or(s.Publisher, f.cfg.Publisher)
	if reflect.TypeOf(p).Comparable() {
		return p, pubKey{pub: p}
	}
	return p, pubKey{source: s.Name}
}

// NewFleet checks cfg and returns a fleet. Errors match ErrInvalidConfig.
func NewFleet(cfg FleetConfig) (*Fleet, error) {
	if len(cfg.Sources) == 0 {
		return nil, fmt.Errorf("%w: FleetConfig.Sources is empty; name at least one database", ErrInvalidConfig)
	}
	if len(cfg.Relay.Sources) > 0 {
		return nil, fmt.Errorf("%w: FleetConfig.Relay.Sources is set; give each database its wakes in Source.Wakes", ErrInvalidConfig)
	}
	names := map[string]bool{}
	for i, s := range cfg.Sources {
		switch {
		case s.Name == "":
			return nil, fmt.Errorf("%w: Sources[%d].Name is empty", ErrInvalidConfig, i)
		case names[s.Name]:
			return nil, fmt.Errorf("%w: Sources[%d].Name %q is used twice", ErrInvalidConfig, i, s.Name)
		case s.DB == nil:
			return nil, fmt.Errorf("%w: Sources[%d] (%s): nil DB", ErrInvalidConfig, i, s.Name)
		case s.Dialect == nil:
			return nil, fmt.Errorf("%w: Sources[%d] (%s): nil Dialect", ErrInvalidConfig, i, s.Name)
		case len(s.Tables) == 0 && len(s.Patterns) == 0:
			return nil, fmt.Errorf("%w: Sources[%d] (%s) names no Tables and no Patterns", ErrInvalidConfig, i, s.Name)
		case s.Publisher == nil && cfg.Publisher == nil:
			return nil, fmt.Errorf("%w: Sources[%d] (%s) has no Publisher and FleetConfig.Publisher is nil", ErrInvalidConfig, i, s.Name)
		}
		for j, w := range s.Wakes {
			if w == nil {
				return nil, fmt.Errorf("%w: Sources[%d].Wakes[%d] is nil", ErrInvalidConfig, i, j)
			}
		}
		names[s.Name] = true
	}
	if cfg.DiscoverInterval < 0 {
		return nil, fmt.Errorf("%w: DiscoverInterval is negative; use 0 for the default", ErrInvalidConfig)
	}
	cfg.Relay = cfg.Relay.withDefaults()
	if err := cfg.Relay.validate(); err != nil {
		return nil, err
	}
	if cfg.DiscoverInterval == 0 {
		// With its ±20 % jitter, a new table is found within one
		// rebalance interval.
		cfg.DiscoverInterval = cfg.Relay.RebalanceInterval * 5 / 6
	}
	f := &Fleet{cfg: cfg, relays: map[tableKey]*Relay{}, states: map[tableKey]TableState{}, gates: map[pubKey]*priority.Gate{}}
	for _, s := range cfg.Sources {
		for _, t := range s.Tables {
			if _, err := f.Relay(s.Name, t); err != nil {
				return nil, err
			}
		}
	}
	return f, nil
}

// Relay returns the relay of one table of a source, made on first use: give
// it to txoutbox.WithRelay so that commits of that table in this process
// are handed over. The fleet runs it while the table is served (named in
// Source.Tables, or found by a pattern). Errors match ErrInvalidConfig (an
// unknown source, a table name the source's dialect refuses).
func (f *Fleet) Relay(source, table string) (*Relay, error) {
	i := slices.IndexFunc(f.cfg.Sources, func(s Source) bool { return s.Name == source })
	if i < 0 {
		return nil, fmt.Errorf("%w: no source named %q", ErrInvalidConfig, source)
	}
	src := &f.cfg.Sources[i]
	k := tableKey{source, table}
	f.mu.Lock()
	defer f.mu.Unlock()
	if r := f.relays[k]; r != nil {
		return r, nil
	}
	d, err := src.Dialect(table)
	if err != nil {
		return nil, fmt.Errorf("%w: Sources[%d] (%s): table %q: %w", ErrInvalidConfig, i, source, table, err)
	}
	cfg := f.cfg.Relay
	// The table's relay logs which table it is about.
	cfg.Logger = cfg.Logger.With("source", source, "table", table)
	if f.cfg.Hooks != nil {
		cfg.Hooks = f.cfg.Hooks(source, table)
	}
	pub, pk := f.publisherOf(src)
	g := f.gates[pk]
	if g == nil {
		g = &priority.Gate{}
		f.gates[pk] = g
	}
	r := &Relay{db: src.DB, d: d, pub: pub, cfg: cfg, fleet: newTableLink(source, table), gate: g}
	f.relays[k] = r
	return r, nil
}

// Tables returns the state of every table the fleet has served or tried
// to, by source then table.
func (f *Fleet) Tables() []TableState {
	f.mu.Lock()
	out := make([]TableState, 0, len(f.states))
	for _, s := range f.states {
		out = append(out, s)
	}
	f.mu.Unlock()
	slices.SortFunc(out, func(a, b TableState) int {
		return cmp.Or(cmp.Compare(a.Source, b.Source), cmp.Compare(a.Table, b.Table))
	})
	return out
}

// state returns a table's recorded state.
func (f *Fleet) state(k tableKey) (TableState, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, ok := f.states[k]
	return s, ok
}

// setState records a table's state, logging when it changes.
func (f *Fleet) setState(ctx context.Context, k tableKey, serving bool, err error) {
	f.mu.Lock()
	old, seen := f.states[k]
	changed := !seen || old.Serving != serving || errText(old.Err) != errText(err)
	if changed {
		f.states[k] = TableState{Source: k.source, Table: k.table, Serving: serving, Err: err, Since: time.Now()}
	}
	f.mu.Unlock()
	if !changed || ctx.Err() != nil {
		return
	}
	log := f.cfg.Relay.Logger
	switch {
	case err != nil:
		log.WarnContext(ctx, "jitoutbox fleet: table not served", "source", k.source, "table", k.table, "err", err)
	case serving:
		log.InfoContext(ctx, "jitoutbox fleet: serving table", "source", k.source, "table", k.table)
	default:
		log.InfoContext(ctx, "jitoutbox fleet: table gone; stopped serving it", "source", k.source, "table", k.table)
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// Run serves every source until ctx ends, then returns nil once every
// table's relay has stopped (each finishes its batch in flight and
// releases its partitions). It returns ErrRunning if the fleet is already
// running. A source whose database is down, or a table that cannot be
// served, is logged and retried; it never stops the others.
func (f *Fleet) Run(ctx context.Context) error {
	if !f.running.CompareAndSwap(false, true) {
		return ErrRunning
	}
	defer f.running.Store(false)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	defer wg.Wait()
	f.preflight(ctx, &wg)
	for i := range f.cfg.Sources {
		src := &f.cfg.Sources[i]
		// The partitions a wake names are a table's: the fleet does not
		// know which table's, so any wake makes it look for due rows in
		// every table (one Activity statement).
		wakes := notify.NewWakes()
		for j, w := range src.Wakes {
			if err := w.Listen(ctx, wakes); err != nil {
				return fmt.Errorf("relay: listen on Sources[%d].Wakes[%d]: %w", i, j, err)
			}
		}
		fd := newFleetDB(f, src)
		wg.Add(1)
		go func() {
			defer wg.Done()
			fd.run(ctx, wakes)
		}()
	}
	<-ctx.Done()
	return nil
}

// preflight runs each distinct publisher's Preflight once (the tables'
// relays skip theirs; see pubKey for what is distinct).
func (f *Fleet) preflight(ctx context.Context, wg *sync.WaitGroup) {
	seen := map[pubKey]bool{}
	for i := range f.cfg.Sources {
		p, k := f.publisherOf(&f.cfg.Sources[i])
		if _, ok := p.(Preflighter); !ok || seen[k] {
			continue
		}
		seen[k] = true
		r := &Relay{pub: p, cfg: f.cfg.Relay}
		r.startPreflight(ctx, wg)
	}
}

// tableLink is what a fleet table's relay shares with its fleet. The
// channels outlive runs; db is set by the fleet before each Run of the
// relay.
type tableLink struct {
	source, table string
	// wake: the fleet found due rows in the table: read now.
	wake chan struct{}
	// left and joined: the anchor table's watch saw a relay leave (take
	// free partitions now) or join (rebalance now); joined also tells a
	// table that it became the anchor.
	left, joined chan struct{}
	// nudge (the anchor only): a table of this relay released partitions
	// another relay is short of; nudge the other relays' watches.
	nudge  chan struct{}
	anchor atomic.Bool
	db     *fleetDB
}

func newTableLink(source, table string) *tableLink {
	return &tableLink{source: source, table: table, wake: make(chan struct{}, 1), left: make(chan struct{}, 1),
		joined: make(chan struct{}, 1), nudge: make(chan struct{}, 1)}
}

// fleetDB is one source of one fleet Run: it owns the source's tables'
// runs, its lock connection and the database clock, and runs the
// discovery and the poll. Its fields other than the locker and the event
// channels are touched only by its run goroutine.
type fleetDB struct {
	f   *Fleet
	src *Source

	lockMu sync.Mutex
	locker *dialects.Locker

	clock dbClock // the database's clock; tables' runs copy its offset

	// Events from the tables' owners: the anchor's watch saw a relay
	// leave or join; a table asks for a nudge of the other relays.
	left, joined, nudge chan struct{}

	tables map[string]*fleetTable
	anchor string
	due    time.Time // the earliest future due time Activity reported
}

// fleetTable is one served table's relay run.
type fleetTable struct {
	r      *Relay
	cancel context.CancelFunc
	done   chan error
}

func newFleetDB(f *Fleet, src *Source) *fleetDB {
	fd := &fleetDB{f: f, src: src, left: make(chan struct{}, 1), joined: make(chan struct{}, 1),
		nudge: make(chan struct{}, 1), tables: map[string]*fleetTable{}}
	fd.clock.clock = f.cfg.Relay.Clock
	return fd
}

// openSession opens d's session on the source's lock connection, opening
// (or reopening, once lost) that connection first.
func (fd *fleetDB) openSession(ctx context.Context, d dialects.Dialect, owner string, lease time.Duration) (dialects.Session, error) {
	fd.lockMu.Lock()
	if fd.locker == nil || fd.locker.Lost() {
		if fd.locker != nil {
			_ = fd.locker.Close()
			fd.locker = nil
		}
		l, err := dialects.OpenLocker(ctx, fd.src.DB)
		if err != nil {
			fd.lockMu.Unlock()
			return nil, err
		}
		fd.locker = l
	}
	l := fd.locker
	fd.lockMu.Unlock()
	return d.OpenSessionOn(ctx, l, owner, lease)
}

func (fd *fleetDB) closeLocker() {
	fd.lockMu.Lock()
	defer fd.lockMu.Unlock()
	if fd.locker != nil {
		_ = fd.locker.Close()
		fd.locker = nil
	}
}

// probe returns a dialect of the source for statements about the whole
// database (FindTables, Activity, Now).
func (fd *fleetDB) probe() (dialects.Dialect, error) {
	name := "outbox"
	if len(fd.src.Tables) > 0 {
		name = fd.src.Tables[0]
	}
	return fd.src.Dialect(name)
}

// run serves the source until ctx ends.
func (fd *fleetDB) run(ctx context.Context, wakes *notify.Wakes) {
	cfg := &fd.f.cfg
	log := cfg.Relay.Logger
	defer fd.closeLocker()
	defer fd.stopAll()
	ended := make(chan string, 1)
	probe, err := fd.probe()
	if err != nil {
		log.ErrorContext(ctx, "jitoutbox fleet: the source's dialect refuses its first table; source not served", "source", fd.src.Name, "err", err)
		<-ctx.Done()
		return
	}
	discover := time.NewTimer(0)
	defer discover.Stop()
	poll := time.NewTimer(jitter(cfg.Relay.PollInterval))
	defer poll.Stop()
	dueT := time.NewTimer(time.Hour)
	dueT.Stop()
	defer dueT.Stop()
	nudgeT := time.NewTimer(time.Hour)
	nudgeT.Stop()
	defer nudgeT.Stop()
	var lastSync, lastNudge time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-discover.C:
			if time.Since(lastSync) >= clockSyncEvery {
				if err := fd.clock.sync(ctx, probe, fd.src.DB); err == nil {
					lastSync = time.Now()
				}
			}
			fd.discover(ctx, probe, ended)
			discover.Reset(jitter(cfg.DiscoverInterval))
			continue
		case <-poll.C:
		case <-dueT.C:
		case <-wakes.C():
			wakes.Take()
		case t := <-ended:
			fd.ended(ctx, t)
			continue
		case <-fd.left:
			fd.broadcast(func(l *tableLink) chan struct{} { return l.left })
			continue
		case <-fd.joined:
			fd.broadcast(func(l *tableLink) chan struct{} { return l.joined })
			continue
		case <-fd.nudge:
			if wait := fleetNudgeGap - time.Since(lastNudge); wait > 0 {
				// Coalesce: one nudge after the gap carries every request.
				nudgeT.Reset(wait)
				continue
			}
			lastNudge = fd.nudgeOthers()
			continue
		case <-nudgeT.C:
			lastNudge = fd.nudgeOthers()
			continue
		}
		fd.poll(ctx, probe)
		poll.Reset(jitter(cfg.Relay.PollInterval))
		if !fd.due.IsZero() {
			dueT.Reset(max(fd.due.Sub(fd.clock.now())+dueMargin, 0))
		}
	}
}

// discover finds the source's tables and starts or stops their runs.
func (fd *fleetDB) discover(ctx context.Context, probe dialects.Dialect, ended chan<- string) {
	want := map[string]bool{}
	for _, t := range fd.src.Tables {
		want[t] = true
	}
	failed := false
	for _, p := range fd.src.Patterns {
		found, err := probe.FindTables(ctx, fd.src.DB, p)
		if err != nil {
			if ctx.Err() == nil {
				fd.f.cfg.Relay.Logger.WarnContext(ctx, "jitoutbox fleet: cannot look up tables; keeping the ones served",
					"source", fd.src.Name, "pattern", p, "err", err)
			}
			failed = true
			continue
		}
		for _, t := range found {
			want[t] = true
		}
	}
	for t := range want {
		if fd.tables[t] == nil {
			fd.start(ctx, t, ended)
		}
	}
	if !failed {
		for t, ft := range fd.tables {
			if !want[t] {
				ft.cancel()
				<-ft.done
				delete(fd.tables, t)
				fd.f.setState(ctx, tableKey{fd.src.Name, t}, false, nil)
				// Relays still serving it watch the anchor only: nudge
				// them so that they take its partitions.
				signal(fd.nudge)
			}
		}
	}
	fd.chooseAnchor()
}

// start runs table t's relay.
func (fd *fleetDB) start(ctx context.Context, t string, ended chan<- string) {
	k := tableKey{fd.src.Name, t}
	r, err := fd.f.Relay(fd.src.Name, t)
	if err != nil {
		fd.f.setState(ctx, k, false, err)
		return
	}
	// A table at another schema version is not started (Run would end at
	// once): it is looked at again at the next discovery.
	if _, err := r.d.Partitions(ctx, fd.src.DB); errors.Is(err, dialects.ErrSchemaVersion) || errors.Is(err, dialects.ErrPartitionMismatch) {
		fd.f.setState(ctx, k, false, fmt.Errorf("relay: %w", err))
		return
	}
	r.fleet.db = fd
	r.fleet.anchor.Store(false)
	// Only fd stops the run (its cancel): the end of ctx would stop every
	// table at once, the anchor with the others, and stopAll must stop the
	// anchor last.
	tctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	ft := &fleetTable{r: r, cancel: cancel, done: make(chan error, 1)}
	fd.tables[t] = ft
	// A table that failed before (an old schema, say) is tried again at
	// each discovery: it stays reported as failing until a poll finds it
	// healthy, without a log line per try.
	if old, seen := fd.f.state(k); !seen || old.Err == nil {
		fd.f.setState(ctx, k, true, nil)
	}
	go func() {
		err := r.Run(tctx)
		ft.done <- err
		if err != nil {
			select {
			case ended <- t:
			case <-ctx.Done():
			}
		}
	}()
}

// ended handles a table run that stopped with an error (its schema is at
// another version, say): it is tried again at the next discovery.
func (fd *fleetDB) ended(ctx context.Context, t string) {
	ft := fd.tables[t]
	if ft == nil {
		return
	}
	err := <-ft.done
	ft.cancel()
	delete(fd.tables, t)
	fd.f.setState(ctx, tableKey{fd.src.Name, t}, false, err)
	signal(fd.nudge)
	fd.chooseAnchor()
}

// stopAll stops every table's run and waits for them, the anchor's last:
// the other relays see this one leave when its anchor session closes, and
// take the partitions of every table then, which are all free by then.
func (fd *fleetDB) stopAll() {
	for t, ft := range fd.tables {
		if t != fd.anchor {
			ft.cancel()
		}
	}
	for t, ft := range fd.tables {
		if t != fd.anchor {
			<-ft.done
			delete(fd.tables, t)
		}
	}
	if ft := fd.tables[fd.anchor]; ft != nil {
		ft.cancel()
		<-ft.done
		delete(fd.tables, fd.anchor)
	}
}

// chooseAnchor picks the anchor table: its owner watches the relays and
// the fleet tells the other tables. The anchor stays while it is served
// (a table found later never takes over: the other relays may not serve
// it yet, and a watch of it would miss their leaving); a new one is the
// first served table named in Source.Tables, else the first found, and
// is told at once so that it starts watching.
func (fd *fleetDB) chooseAnchor() {
	if fd.tables[fd.anchor] != nil {
		return
	}
	next := ""
	for _, t := range fd.src.Tables {
		if fd.tables[t] != nil {
			next = t
			break
		}
	}
	if next == "" {
		for t := range fd.tables {
			if next == "" || t < next {
				next = t
			}
		}
	}
	fd.anchor = next
	if t := fd.tables[next]; t != nil {
		t.r.fleet.anchor.Store(true)
		signal(t.r.fleet.joined)
	}
}

// nudgeOthers asks the anchor table's owner to nudge the other relays
// (their watches are on the anchor table) and returns when it asked.
func (fd *fleetDB) nudgeOthers() time.Time {
	if t := fd.tables[fd.anchor]; t != nil {
		signal(t.r.fleet.nudge)
	}
	return time.Now()
}

// broadcast signals one channel of every table's link but the anchor's.
func (fd *fleetDB) broadcast(ch func(*tableLink) chan struct{}) {
	for t, ft := range fd.tables {
		if t != fd.anchor {
			signal(ch(ft.r.fleet))
		}
	}
}

// poll asks which tables have due rows (one statement) and wakes them; it
// remembers the earliest due time still ahead.
func (fd *fleetDB) poll(ctx context.Context, probe dialects.Dialect) {
	if len(fd.tables) == 0 {
		return
	}
	names := make([]string, 0, len(fd.tables))
	for t := range fd.tables {
		names = append(names, t)
	}
	slices.Sort(names)
	acts, err := probe.Activity(ctx, fd.src.DB, names)
	if err != nil {
		if ctx.Err() == nil {
			// The database is down or refusing: each table says so, and
			// each is woken (its reads back off on their own).
			err = fmt.Errorf("relay: source %s: which tables have due rows: %w", fd.src.Name, err)
			for t, ft := range fd.tables {
				fd.f.setState(ctx, tableKey{fd.src.Name, t}, true, err)
				signal(ft.r.fleet.wake)
			}
		}
		return
	}
	now := fd.clock.now()
	fd.due = time.Time{}
	for _, a := range acts {
		ft := fd.tables[a.Table]
		if ft == nil {
			continue
		}
		k := tableKey{fd.src.Name, a.Table}
		if a.Err != nil {
			// Reported once: a table already failing keeps its first
			// error (its relay's, say) rather than alternating.
			if old, seen := fd.f.state(k); !seen || old.Err == nil {
				fd.f.setState(ctx, k, true, a.Err)
			}
			continue
		}
		fd.f.setState(ctx, k, true, nil)
		switch {
		case a.NextDue.IsZero():
		case !a.NextDue.After(now):
			signal(ft.r.fleet.wake)
		case fd.due.IsZero() || a.NextDue.Before(fd.due):
			fd.due = a.NextDue
		}
	}
}
