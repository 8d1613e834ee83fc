package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/relay"
)

// relayFleet serves the sources of -config as one relay.Fleet until ctx
// ends: each source has its own *sql.DB and wakes, and the publisher of
// its destination; every publisher shares the process's broker connection
// (RabbitMQ: one per exchange).
// fleetMaxConns bounds the connections a fleet opens to one source's
// database.
const fleetMaxConns = 16

func relayFleet(ctx context.Context, cfg config, log *slog.Logger, obs *observer) error {
	dbs := make([]*sql.DB, len(cfg.sources))
	defer func() {
		for _, db := range dbs {
			if db != nil {
				_ = db.Close()
			}
		}
	}()
	for i := range cfg.sources {
		s := &cfg.sources[i]
		db, err := openDatabase(s.Dialect, s.dsn, log)
		if err != nil {
			field := "dsn"
			if s.DSNFile != "" {
				field = "dsn_file"
			}
			e := cfg.file.sourceError(i, field, "")
			e.Err = err // never the DSN
			return e
		}
		if s.Dialect != "sqlite" {
			// Every table's relay borrows from this pool: bound it, so that
			// tenants draining at once queue for connections instead of
			// running the server out of them (the lock and watch
			// connections are two of these). Keep as many idle: with
			// database/sql's default of 2, the pool closes the others
			// between statements and each new connection prepares every
			// table's statements again.
			db.SetMaxOpenConns(fleetMaxConns)
			db.SetMaxIdleConns(fleetMaxConns)
		}
		dbs[i] = db
	}
	if cfg.migrate {
		if err := migrateSources(ctx, cfg, dbs, log); err != nil {
			return err
		}
	}
	b, nc, err := connect(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer b.close()

	var wg sync.WaitGroup
	defer wg.Wait() // the wake loggers end with Run's context
	sources := make([]relay.Source, len(cfg.sources))
	for i := range cfg.sources {
		s := &cfg.sources[i]
		wakes, err := wakeSources(s.wake, s.dsn, cfg, nc, log.With("db", s.Name), &wg)
		if err != nil {
			return err
		}
		dialect := s.Dialect
		sources[i] = relay.Source{Name: s.Name, DB: dbs[i], Tables: s.Tables, Patterns: s.Patterns,
			Dialect:   func(table string) (dialects.Dialect, error) { return newDialect(dialect, table) },
			Publisher: b.pubs[cfg.dest(s)], Wakes: wakes}
	}
	f, err := relay.NewFleet(relay.FleetConfig{Sources: sources, Relay: cfg.relayConfig(b, log), Hooks: fleetHooks(log, obs)})
	if err != nil {
		return err
	}
	if obs != nil {
		obs.ready.setChecks(fleetReadyChecks(cfg, dbs, f.Tables, b.ready), cfg.secrets())
	}
	names := make([]string, len(cfg.sources))
	for i := range cfg.sources {
		s := &cfg.sources[i]
		names[i] = s.Name
		log.Info("jitoutbox-relay source", "source", s.Name, "dialect", s.Dialect, "tables", s.Tables,
			"patterns", s.Patterns, "destination", cfg.destination(cfg.dest(s)), "wake", s.wake)
	}
	attrs := []any{"config", cfg.configPath, "sources", names}
	if cfg.owner != "" { // else the fleet makes one
		attrs = append(attrs, "owner", cfg.owner)
	}
	log.Info("jitoutbox-relay starting", append(attrs, cfg.startAttrs()...)...)
	if err := f.Run(ctx); err != nil {
		return fmt.Errorf("relay: %w", err)
	}
	log.Info("jitoutbox-relay stopped")
	return nil
}

// migrateSources creates or upgrades the schema of every table the
// sources name (not those their patterns find: a pattern's tables belong
// to whoever creates the tenants).
func migrateSources(ctx context.Context, cfg config, dbs []*sql.DB, log *slog.Logger) error {
	for i, s := range cfg.sources {
		for _, t := range s.Tables {
			d, err := newDialect(s.Dialect, t) // checked by parseSources
			if err != nil {
				return err
			}
			err = retry(ctx, log, "migrate "+s.Name+" "+t, func(ctx context.Context) error { return d.Migrate(ctx, dbs[i]) })
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// fleetHooks returns the hooks of each table's relay: a batch logger with
// the source and table, and with -metrics-addr jitotel's FleetMetrics.
func fleetHooks(log *slog.Logger, obs *observer) func(source, table string) relay.Hooks {
	return func(source, table string) relay.Hooks {
		bl := batchLogger{log: log.With("source", source, "table", table)}
		if obs == nil {
			return bl
		}
		return metricHooks{batchLogger: bl, m: obs.fleet.Table(source, table)}
	}
}

// fleetReadyChecks returns what /readyz requires of a fleet:
//
//   - database <source>: each source's database answers;
//   - broker: as for one table (readyChecks);
//   - tables: at least one table is served.
//
// A table that cannot be served (its schema at another version, its name
// refused, its relay failing) is reported in the body, one "table:" line
// each, but does not make the relay unready while another table is
// served: the fleet keeps serving the others, and restarting the process
// would not mend it.
func fleetReadyChecks(cfg config, dbs []*sql.DB, tables func() []relay.TableState, broker check) []check {
	var checks []check
	for i := range cfg.sources {
		db := dbs[i]
		checks = append(checks, check{name: "database " + cfg.sources[i].Name, fn: db.PingContext})
	}
	checks = append(checks, broker, check{name: "tables", fn: func(context.Context) error {
		states := tables()
		failing := 0
		for _, st := range states {
			if st.Serving {
				return nil
			}
			if st.Err != nil {
				failing++
			}
		}
		return fmt.Errorf("no table is served yet (%d known, %d failing)", len(states), failing)
	}}, check{name: "table", soft: true, fn: func(context.Context) error {
		var lines []string
		for _, st := range tables() {
			if st.Err != nil {
				// One line each: the error's own lines joined.
				lines = append(lines, st.Source+"/"+st.Table+": "+strings.ReplaceAll(st.Err.Error(), "\n", "; "))
			}
		}
		if len(lines) == 0 {
			return nil
		}
		return errors.New(strings.Join(lines, "\n"))
	}})
	return checks
}
