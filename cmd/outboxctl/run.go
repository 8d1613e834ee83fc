package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	_ "github.com/go-sql-driver/mysql" // "mysql" driver
	_ "github.com/lib/pq"              // "postgres" driver
	_ "modernc.org/sqlite"             // "sqlite" driver

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/dialects/mysql"
	"github.com/jitoutbox/jitoutbox/dialects/postgres"
	"github.com/jitoutbox/jitoutbox/dialects/sqlite"
)

const usage = `usage: outboxctl [global flags] <command> [flags]

Global flags (also accepted after the command; each also from its variable):
  -dialect postgres|mysql|sqlite   $JITOUTBOX_DIALECT; inferred from the DSN when omitted
  -dsn DSN                         $JITOUTBOX_DSN; without one, the DSN of -dialect's
                                   (or the only one set) of JITOUTBOX_{POSTGRES,MYSQL,SQLITE}_DSN
  -dsn-file FILE                   $JITOUTBOX_DSN_FILE; read -dsn from FILE, its trailing
                                   newline trimmed (a mounted Secret); not with -dsn
  -table NAME                      $JITOUTBOX_TABLE; outbox table (default "outbox")
  -json                            $JITOUTBOX_JSON; one JSON document per command
  -all-tables                      $JITOUTBOX_ALL_TABLES; every outbox table -tables-pattern
                                   finds (a schema or database per tenant): status and serve only
  -tables-pattern P                $JITOUTBOX_TABLES_PATTERN; with -all-tables, the tables to read:
                                   "schema.table" on PostgreSQL, "database.table" on MySQL,
                                   "table" on SQLite, '*' any run of characters in one part
                                   (tenant_*.outbox); default every outbox table: "*.*" ("*" on SQLite)

Commands:
  migrate [-plan [-v]]             apply the numbered migrations the table lacks (idempotent);
                                   -plan lists them without running them, -v with their SQL
  status [-blockers N]             backlog, oldest pending age, scheduled events and the next
                                   due time, dead and published counts,
                                   rows with a partition outside the table's, blocked
                                   aggregates and why, partitions: live relays, owners, free
  list -state pending|published|dead [-aggregate-type T -aggregate-id ID] [-limit N] [-after SEQ]
  dead [-aggregate-type T -aggregate-id ID] [-limit N] [-after SEQ]
                                   the dead events (list -state dead)
  blocked [-limit N]               the aggregates held back behind a dead or backing-off event
  show <event-id>                  every field of one event; a row with a column that cannot
                                   be decoded shows the column, its text (escaped) and why
  requeue -id ID [-id ID...] | -aggregate-type T -aggregate-id ID | -all
                                   move dead events back to pending: each is published first,
                                   then its aggregate's later events, in order
  skip -id ID [-id ID...] | -aggregate-type T -aggregate-id ID | -all
                                   leave dead events dead and unblock their aggregates:
                                   the later events flow without them
  cancel <event-id>...             cancel scheduled events not yet due: nothing of them is
                                   published; an aggregate's events that waited for them flow
                                   once no other of its scheduled events is still to be due
  purge -older-than 168h [-batch N]  delete published rows older than the age
  serve [-addr 127.0.0.1:8080] [-token-file F] [-read-only] [-refresh 5s] [-limit 50]
        [-cookie-secure] [-retention D]
                                   the web console; a token (-token-file or JITOUTBOX_CONSOLE_TOKEN)
                                   is needed beyond loopback and behind a reverse proxy;
                                   each flag also from $JITOUTBOX_CONSOLE_<FLAG> (outboxctl serve -h):
                                   JITOUTBOX_CONSOLE_ADDR, JITOUTBOX_CONSOLE_TOKEN,
                                   JITOUTBOX_CONSOLE_TOKEN_FILE, JITOUTBOX_CONSOLE_READ_ONLY,
                                   JITOUTBOX_CONSOLE_REFRESH, JITOUTBOX_CONSOLE_LIMIT,
                                   JITOUTBOX_CONSOLE_COOKIE_SECURE, JITOUTBOX_CONSOLE_RETENTION
  help                             this text (also -h)

A flag on the command line wins over its variable. No DSN, token or password
is ever printed.
`

// globals are the flags every command accepts.
type globals struct {
	dialect, dsn, dsnFile, table string
	json                         bool
	// allTables and pattern select every outbox table the pattern finds
	// (tables.go).
	allTables bool
	pattern   string
}

func (g *globals) register(fs *flag.FlagSet) {
	fs.StringVar(&g.dialect, "dialect", g.dialect, "postgres, mysql or sqlite (inferred from the DSN)")
	fs.StringVar(&g.dsn, "dsn", g.dsn, "database DSN (or JITOUTBOX_{POSTGRES,MYSQL,SQLITE}_DSN)")
	fs.StringVar(&g.dsnFile, "dsn-file", g.dsnFile, "read -dsn from this file, its trailing newline trimmed (a mounted Kubernetes Secret); not with -dsn")
	fs.StringVar(&g.table, "table", g.table, "outbox table name")
	fs.BoolVar(&g.json, "json", g.json, "print JSON")
	fs.BoolVar(&g.allTables, "all-tables", g.allTables, "every outbox table -tables-pattern finds (status and serve)")
	fs.StringVar(&g.pattern, "tables-pattern", g.pattern, `with -all-tables: the tables to read, e.g. tenant_*.outbox (default every outbox table: "*.*", SQLite "*")`)
}

// env is one command's context.
type env struct {
	g      *globals
	stdout io.Writer
	stderr io.Writer // logs (serve)
	// cmdline holds the flags given on the command line, not by a
	// variable.
	cmdline map[string]bool
	// redact hides the DSN and its password in an error's text.
	redact func(error) error
	db     *sql.DB
	d      dialects.Dialect
}

// logger returns the logger of long-running commands: text to stderr.
func (e *env) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(e.stderr, nil))
}

// run is main without the process: it parses args, runs one command and
// writes to stdout (results) and stderr (usage).
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return runEnv(ctx, args, stdout, stderr, os.Getenv)
}

func runEnv(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	g := &globals{table: dialects.DefaultTable}
	top := flag.NewFlagSet("outboxctl", flag.ContinueOnError)
	top.SetOutput(stderr)
	top.Usage = func() { fmt.Fprint(stderr, usage) }
	g.register(top)
	if err := top.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	if top.NArg() == 0 {
		fmt.Fprint(stderr, usage)
		return fmt.Errorf("%w: no command", errUsage)
	}
	name, rest := top.Arg(0), top.Args()[1:]
	cmd, ok := lookup(name)
	if !ok {
		if name == "help" {
			fmt.Fprint(stdout, usage)
			return nil
		}
		fmt.Fprint(stderr, usage)
		return fmt.Errorf("%w: unknown command %q", errUsage, name)
	}
	fs := flag.NewFlagSet("outboxctl "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	g.register(fs)
	opts := cmd.flags(fs)
	annotateEnv(fs, name)
	pos, err := parseInterleaved(fs, rest)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	set := map[string]bool{}
	top.Visit(func(f *flag.Flag) { set[f.Name] = true })
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if err := applyEnv(fs, name, set, getenv); err != nil {
		return err
	}
	if err := g.readDSNFile(); err != nil {
		return err
	}
	if err := g.checkAllTables(name, set, getenv); err != nil {
		return err
	}

	dialect, dsn, err := resolveDSN(g.dialect, g.dsn, getenv)
	if err != nil {
		return err
	}
	if g.allTables && g.pattern == "" {
		g.pattern = defaultPattern(dialect)
	}
	e := &env{g: g, stdout: stdout, stderr: stderr, cmdline: set,
		redact: func(err error) error { return redact(err, dsn) }}
	if e.d, err = newDialect(dialect, g.table); err != nil {
		return err
	}
	driver, open, err := driverDSN(dialect, dsn)
	if err != nil {
		return redact(err, dsn)
	}
	if e.db, err = sql.Open(driver, open); err != nil {
		return redact(fmt.Errorf("open %s database: %w", dialect, err), dsn)
	}
	defer e.db.Close()
	if err := e.db.PingContext(ctx); err != nil {
		return redact(fmt.Errorf("connect to %s database: %w", dialect, err), dsn)
	}
	return redact(opts.run(ctx, e, pos), dsn)
}

// parseInterleaved parses flags that may follow positional arguments
// ("show ID -json") and returns the positional arguments.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

func newDialect(name, table string) (dialects.Dialect, error) {
	switch name {
	case "postgres":
		return postgres.New(postgres.WithTable(table))
	case "mysql":
		return mysql.New(mysql.WithTable(table))
	case "sqlite":
		return sqlite.New(sqlite.WithTable(table))
	}
	return nil, fmt.Errorf("%w: unknown dialect %q", errUsage, name)
}

// command is one subcommand: flags registers its flags and returns what runs
// it once they are parsed.
type command struct {
	flags func(fs *flag.FlagSet) runner
}

type runner interface {
	run(ctx context.Context, e *env, args []string) error
}

type runFunc func(ctx context.Context, e *env, args []string) error

func (f runFunc) run(ctx context.Context, e *env, args []string) error { return f(ctx, e, args) }

// lookup returns the named subcommand.
func lookup(name string) (command, bool) {
	switch name {
	case "migrate":
		return command{flags: migrateFlags}, true
	case "status":
		return command{flags: statusFlags}, true
	case "list":
		return command{flags: listFlags}, true
	case "show":
		return command{flags: showFlags}, true
	case "requeue":
		return command{flags: requeueFlags}, true
	case "skip":
		return command{flags: skipFlags}, true
	case "cancel":
		return command{flags: cancelFlags}, true
	case "purge":
		return command{flags: purgeFlags}, true
	case "dead":
		return command{flags: deadFlags}, true
	case "blocked":
		return command{flags: blockedFlags}, true
	case "serve":
		return command{flags: serveFlags}, true
	}
	return command{}, false
}

// noArgs rejects positional arguments.
func noArgs(args []string) error {
	if len(args) > 0 {
		return fmt.Errorf("%w: unexpected arguments %q", errUsage, strings.Join(args, " "))
	}
	return nil
}
