package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	gomysql "github.com/go-sql-driver/mysql"
	_ "github.com/lib/pq"  // "postgres" driver
	_ "modernc.org/sqlite" // "sqlite" driver

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/dialects/mysql"
	"github.com/jitoutbox/jitoutbox/dialects/postgres"
	"github.com/jitoutbox/jitoutbox/dialects/sqlite"
	"github.com/jitoutbox/jitoutbox/internal/redact"
	"github.com/jitoutbox/jitoutbox/notify"
	"github.com/jitoutbox/jitoutbox/notify/natsnotify"
	"github.com/jitoutbox/jitoutbox/notify/pgnotify"
	"github.com/jitoutbox/jitoutbox/relay"
)

// run is the whole command: it parses args (with env for the defaults),
// relays until ctx ends and returns nil after a clean stop. Logs go to
// stderr; stdout is kept for output a future subcommand may print. No
// secret of the configuration (DSN, broker URLs, token) is in its logs or
// in the error it returns, whatever the drivers put in theirs.
func run(ctx context.Context, args []string, env func(string) string, stdout, stderr io.Writer) error {
	_ = stdout
	cfg, err := parseFlags(args, env, stderr)
	if err == nil {
		err = relayUntilDone(ctx, cfg, stderr)
	}
	if err == nil || err == errUsage || err == flag.ErrHelp { // flag has printed the error or the usage
		return err
	}
	return redact.Error(err, cfg.secrets()...)
}

// relayUntilDone runs the relay configured by cfg until ctx ends.
func relayUntilDone(ctx context.Context, cfg config, stderr io.Writer) error {
	log := newLogger(cfg, stderr)

	var obs *observer
	if cfg.metricsAddr != "" {
		// Served from the start: /healthz answers while the relay waits
		// for its database, /readyz says why it is not ready.
		var err error
		if obs, err = newObserver(ctx, cfg, log); err != nil {
			return err
		}
		sctx, stopServing := context.WithCancel(ctx)
		served := make(chan struct{})
		go func() { defer close(served); obs.serve(sctx) }()
		defer func() { stopServing(); <-served }()
	}
	if cfg.fleet() {
		return relayFleet(ctx, cfg, log, obs)
	}
	var hooks relay.Hooks = batchLogger{log: log}
	if obs != nil {
		hooks = metricHooks{batchLogger: batchLogger{log: log}, m: obs.metrics}
	}

	db, d, err := openDB(cfg, log)
	if err != nil {
		return err
	}
	defer db.Close()
	if cfg.migrate {
		if err := retry(ctx, log, "migrate", func(ctx context.Context) error { return d.Migrate(ctx, db) }); err != nil {
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
	sources, err := wakeSources(cfg.wake, cfg.dsn, cfg, nc, log, &wg)
	if err != nil {
		return err
	}
	rcfg := cfg.relayConfig(b, log)
	rcfg.Sources, rcfg.Hooks = sources, hooks
	r, err := relay.New(db, d, b.pubs[cfg.dest(nil)], rcfg)
	if err != nil {
		return err
	}
	if obs != nil {
		reg, err := obs.metrics.ObserveStats(r.Stats)
		if err != nil {
			return err
		}
		defer func() { _ = reg.Unregister() }()
		obs.ready.setChecks(readyChecks(db, d, r, b.ready), cfg.secrets())
	}
	// Addresses are not logged: URLs carry passwords.
	log.Info("jitoutbox-relay starting", append([]any{"owner", r.Owner(), "dialect", cfg.dialect, "table", d.Table(),
		"destination", cfg.destination(cfg.dest(nil)), "wake", cfg.wake}, cfg.startAttrs()...)...)
	if err := r.Run(ctx); err != nil {
		return fmt.Errorf("relay: %w", err)
	}
	log.Info("jitoutbox-relay stopped", "owner", r.Owner())
	return nil
}

// relayConfig returns the configuration of the relay, or of every table's
// relay of a fleet, but its wake sources and hooks.
func (c config) relayConfig(b *brokerConn, log *slog.Logger) relay.Config {
	return relay.Config{
		Owner:             c.owner,
		BatchSize:         c.batch,
		PollInterval:      c.poll,
		LeaseDuration:     c.lease,
		RebalanceInterval: c.rebalance,
		PublishTimeout:    c.publishTimeout,
		ReleaseOnDead:     c.releaseOnDead,
		DeleteOnPublish:   c.deleteOnPublish,
		DeadLetter:        b.dead,
		Logger:            log,
	}
}

// startAttrs are the attributes of the start-up log line that hold for
// every table. Addresses are not logged: URLs carry passwords.
func (c config) startAttrs() []any {
	return []any{"broker", c.broker, "dead_letter", c.deadLetter, "debezium", c.debezium,
		"poll", c.poll.String(), "batch", c.batch, "lease", c.lease.String(),
		"rebalance", c.rebalance.String(), "release_on_dead", c.releaseOnDead,
		"publish_timeout", c.publishTimeout.String()}
}

// newLogger returns the relay's logger on w, in cfg's format and level,
// with cfg's secrets replaced in every line.
func newLogger(cfg config, w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: cfg.logLevel}
	var h slog.Handler = slog.NewJSONHandler(w, opts)
	if cfg.logFormat == "text" {
		h = slog.NewTextHandler(w, opts)
	}
	return slog.New(redactHandler{h: h, secrets: cfg.secrets()})
}

// openDB opens the database and its dialect. It does not connect: the relay
// backs off on database errors, so a database that is still starting is not
// fatal.
func openDB(cfg config, log *slog.Logger) (*sql.DB, dialects.Dialect, error) {
	d, err := newDialect(cfg.dialect, cfg.table)
	if err != nil {
		return nil, nil, &flagError{Flag: "-table", Err: err}
	}
	db, err := openDatabase(cfg.dialect, cfg.dsn, log)
	if err != nil {
		return nil, nil, &flagError{Flag: "-dsn", Err: err}
	}
	return db, d, nil
}

// newDialect returns the dialect of an outbox table ("": the dialect's
// default).
func newDialect(dialect, table string) (dialects.Dialect, error) {
	switch dialect {
	case "postgres":
		var opts []postgres.Option
		if table != "" {
			opts = append(opts, postgres.WithTable(table))
		}
		return postgres.New(opts...)
	case "mysql":
		var opts []mysql.Option
		if table != "" {
			opts = append(opts, mysql.WithTable(table))
		}
		return mysql.New(opts...)
	case "sqlite":
		var opts []sqlite.Option
		if table != "" {
			opts = append(opts, sqlite.WithTable(table))
		}
		return sqlite.New(opts...)
	}
	return nil, fmt.Errorf("unknown dialect %q", dialect)
}

// openDatabase opens the database of dialect at dsn, without connecting.
// Its errors never quote the DSN.
func openDatabase(dialect, dsn string, log *slog.Logger) (*sql.DB, error) {
	if dialect == "mysql" {
		// The dialect needs parseTime=true and loc=UTC; set them whatever
		// the DSN says.
		mc, err := gomysql.ParseDSN(dsn)
		if err != nil {
			// The parse error may quote the DSN; do not pass it on.
			return nil, errors.New("the MySQL DSN cannot be parsed")
		}
		mc.ParseTime, mc.Loc = true, time.UTC
		// The driver prints its own complaints (such as "closing bad idle
		// connection" after the server killed a connection) with the
		// standard log package unless given a logger; route them through
		// the relay's, so every stderr line keeps -log-format.
		mc.Logger = driverLogger{log: log, driver: "mysql"}
		conn, err := gomysql.NewConnector(mc)
		if err != nil {
			return nil, errors.New("the MySQL DSN is not usable")
		}
		db := sql.OpenDB(conn)
		db.SetMaxIdleConns(relayIdleConns)
		return db, nil
	}
	db, err := sql.Open(dialect, dsn)
	if err != nil {
		return nil, fmt.Errorf("open %s database: %w", dialect, err)
	}
	if dialect == "sqlite" {
		db.SetMaxOpenConns(sqlite.MaxOpenConns)
	} else {
		db.SetMaxIdleConns(relayIdleConns)
	}
	return db, nil
}

// relayIdleConns is how many idle connections the pool keeps. A relay uses
// several at once (its read lane, its marks, its critical reads, its
// session and watch, cleanup); with database/sql's default of 2 idle the
// pool closes the others between statements and opens them again, each a
// new server backend that prepares the relay's statements anew: on a
// PostgreSQL busy with a drain, a critical read then waited tens of
// milliseconds for its connection.
const relayIdleConns = 8

// wakeSources returns the wake sources of wake (pg, nats or none) for the
// database at dsn, each wrapped so that wakes are logged at debug level
// ("wake received").
func wakeSources(wake, dsn string, cfg config, nc natsConn, log *slog.Logger, wg *sync.WaitGroup) ([]notify.Source, error) {
	var src notify.Source
	switch wake {
	case "none":
		return nil, nil
	case "pg":
		l, err := pgnotify.NewListener(dsn, pgnotify.WithChannel(cfg.wakeChannel), pgnotify.WithLogger(log))
		if err != nil {
			return nil, fmt.Errorf("wake: %w", err)
		}
		src = l
	case "nats":
		l, err := natsnotify.NewListener(nc, natsnotify.WithSubject(cfg.wakeSubject), natsnotify.WithLogger(log))
		if err != nil {
			return nil, fmt.Errorf("wake: %w", err)
		}
		src = l
	}
	return []notify.Source{&loggedSource{name: wake, src: src, log: log, wg: wg}}, nil
}

// retry calls fn until it succeeds or ctx ends, backing off from 100 ms to
// 10 s and logging the first failure and every tenth after it.
func retry(ctx context.Context, log *slog.Logger, what string, fn func(context.Context) error) error {
	backoff := 100 * time.Millisecond
	for n := 0; ; n++ {
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		err := fn(cctx)
		cancel()
		if err == nil {
			if n > 0 {
				log.Info("jitoutbox-relay: "+what+" succeeded", "attempts", n+1)
			}
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%s: %w", what, context.Cause(ctx))
		}
		if n%10 == 0 {
			log.Warn("jitoutbox-relay: "+what+" failed; retrying", "err", err, "attempt", n+1, "backoff", backoff.String())
		}
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%s: %w (last error: %w)", what, context.Cause(ctx), err)
		case <-t.C:
		}
		backoff = min(2*backoff, 10*time.Second)
	}
}
