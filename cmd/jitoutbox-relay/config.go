package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/jitoutbox/jitoutbox/notify/natsnotify"
	"github.com/jitoutbox/jitoutbox/notify/pgnotify"
	"github.com/jitoutbox/jitoutbox/relay"
	"github.com/jitoutbox/jitoutbox/relay/natspub"
)

// Environment variables read for defaults.
const (
	envPostgresDSN = "JITOUTBOX_POSTGRES_DSN"
	envMySQLDSN    = "JITOUTBOX_MYSQL_DSN"
	envSQLiteDSN   = "JITOUTBOX_SQLITE_DSN"
	envNATSURL     = "JITOUTBOX_NATS_URL"
	defaultNATSURL = "nats://127.0.0.1:4222"
)

// errUsage marks a bad command line (exit status 2).
var errUsage = errors.New("usage")

// config is the parsed command line.
type config struct {
	dialect         string
	dsn             string
	natsURL         string
	publisher       string
	subjectPrefix   string
	stream          string
	wake            string
	wakeChannel     string
	wakeSubject     string
	batch           int
	poll            time.Duration
	lease           time.Duration
	publishTimeout  time.Duration
	table           string
	migrate         bool
	deleteOnPublish bool
	owner           string
	logLevel        slog.Level
	logFormat       string
	natsName        string
}

// parseFlags parses args; env supplies the DSN and NATS URL defaults.
// Messages (usage, errors) go to stderr.
func parseFlags(args []string, env func(string) string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("jitoutbox-relay", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.dialect, "dialect", "postgres", "database: postgres, mysql or sqlite")
	fs.StringVar(&c.dsn, "dsn", "", "database DSN (default $"+envPostgresDSN+", $"+envMySQLDSN+" or $"+envSQLiteDSN+" by -dialect); never logged")
	fs.StringVar(&c.natsURL, "nats", "", "NATS server URL(s), comma-separated (default $"+envNATSURL+" or "+defaultNATSURL+")")
	fs.StringVar(&c.publisher, "publisher", "jetstream", "jetstream (at least once) or core (at most once)")
	fs.StringVar(&c.subjectPrefix, "subject-prefix", natspub.DefaultSubjectPrefix, "events are published to <prefix>.<aggregate_type>.<event_type>")
	fs.StringVar(&c.stream, "stream", "", "create or update this JetStream stream for <prefix>.> at start (default: expect it to exist)")
	fs.StringVar(&c.wake, "wake", "", "cross-process wake: pg (LISTEN/NOTIFY), nats (core subject) or none (default pg for postgres, nats otherwise)")
	fs.StringVar(&c.wakeChannel, "wake-channel", pgnotify.DefaultChannel, "PostgreSQL LISTEN channel for -wake pg")
	fs.StringVar(&c.wakeSubject, "wake-subject", natsnotify.DefaultSubject, "NATS subject for -wake nats")
	fs.IntVar(&c.batch, "batch", relay.DefaultBatchSize, "most rows claimed at once")
	fs.DurationVar(&c.poll, "poll", relay.DefaultPollInterval, "safety-net poll interval")
	fs.DurationVar(&c.lease, "lease", relay.DefaultLeaseDuration, "how long claimed rows stay leased; a killed relay's rows wait at most this long (must exceed -publish-timeout)")
	fs.DurationVar(&c.publishTimeout, "publish-timeout", relay.DefaultPublishTimeout, "bound on one publish call")
	fs.StringVar(&c.table, "table", "", "outbox table (default outbox)")
	fs.BoolVar(&c.migrate, "migrate", false, "create the outbox schema if missing before relaying")
	fs.BoolVar(&c.deleteOnPublish, "delete-on-publish", false, "delete rows once published instead of marking them")
	fs.StringVar(&c.owner, "owner", "", "relay owner id in leases, unique per relay (default <host>-<pid>-<random>)")
	fs.StringVar(&c.natsName, "nats-name", "jitoutbox-relay", "NATS connection name (shown by the server's connz)")
	level := fs.String("log-level", "info", "debug, info, warn or error")
	fs.StringVar(&c.logFormat, "log-format", "json", "json or text")
	if err := fs.Parse(args); err != nil {
		return c, errUsage // flag has printed the error and the usage
	}
	if fs.NArg() > 0 {
		return c, usagef("unexpected arguments %q", fs.Args())
	}
	if err := c.logLevel.UnmarshalText([]byte(*level)); err != nil {
		return c, usagef("-log-level %q: use debug, info, warn or error", *level)
	}
	switch c.logFormat {
	case "json", "text":
	default:
		return c, usagef("-log-format %q: use json or text", c.logFormat)
	}
	switch c.dialect {
	case "postgres":
		c.dsn = orDefault(c.dsn, env(envPostgresDSN))
	case "mysql":
		c.dsn = orDefault(c.dsn, env(envMySQLDSN))
	case "sqlite":
		c.dsn = orDefault(c.dsn, env(envSQLiteDSN))
	default:
		return c, usagef("-dialect %q: use postgres, mysql or sqlite", c.dialect)
	}
	if c.dsn == "" {
		return c, usagef("no DSN: pass -dsn or set the environment variable for -dialect %s", c.dialect)
	}
	c.natsURL = orDefault(c.natsURL, orDefault(env(envNATSURL), defaultNATSURL))
	switch c.publisher {
	case "jetstream":
	case "core":
		if c.stream != "" {
			return c, usagef("-stream needs -publisher jetstream")
		}
	default:
		return c, usagef("-publisher %q: use jetstream or core", c.publisher)
	}
	if err := natspub.ValidateSubject(c.subjectPrefix); err != nil {
		return c, usagef("-subject-prefix: %v", err)
	}
	if c.stream != "" && strings.ContainsAny(c.stream, ".*> \t\r\n") {
		return c, usagef("-stream %q: a stream name has no '.', '*', '>' or whitespace", c.stream)
	}
	if c.wake == "" {
		c.wake = "nats"
		if c.dialect == "postgres" {
			c.wake = "pg"
		}
	}
	switch c.wake {
	case "pg":
		if c.dialect != "postgres" {
			return c, usagef("-wake pg needs -dialect postgres; use -wake nats")
		}
		if _, err := pgnotify.NewTxNotifier(pgnotify.WithChannel(c.wakeChannel)); err != nil {
			return c, usagef("-wake-channel: %v", err)
		}
	case "nats":
		if err := natsnotify.ValidateSubject(c.wakeSubject); err != nil {
			return c, usagef("-wake-subject: %v", err)
		}
	case "none":
	default:
		return c, usagef("-wake %q: use pg, nats or none", c.wake)
	}
	if c.batch <= 0 {
		return c, usagef("-batch %d: must be positive", c.batch)
	}
	if c.poll <= 0 {
		return c, usagef("-poll %v: must be positive", c.poll)
	}
	if c.publishTimeout <= 0 {
		return c, usagef("-publish-timeout %v: must be positive", c.publishTimeout)
	}
	if c.lease <= c.publishTimeout {
		return c, usagef("-lease %v must exceed -publish-timeout %v", c.lease, c.publishTimeout)
	}
	return c, nil
}

func usagef(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errUsage, fmt.Sprintf(format, args...))
}

func orDefault(v, def string) string {
	if v != "" {
		return v
	}
	return def
}
