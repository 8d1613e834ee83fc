package main

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/jitoutbox/jitoutbox/codec"
	"github.com/jitoutbox/jitoutbox/notify/natsnotify"
	"github.com/jitoutbox/jitoutbox/notify/pgnotify"
	"github.com/jitoutbox/jitoutbox/relay"
	"github.com/jitoutbox/jitoutbox/relay/cloudevents"
	"github.com/jitoutbox/jitoutbox/relay/kafkapub"
	"github.com/jitoutbox/jitoutbox/relay/natspub"
	"github.com/jitoutbox/jitoutbox/relay/rabbitpub"
)

// Environment variables read for defaults.
const (
	envPostgresDSN  = "JITOUTBOX_POSTGRES_DSN"
	envMySQLDSN     = "JITOUTBOX_MYSQL_DSN"
	envSQLiteDSN    = "JITOUTBOX_SQLITE_DSN"
	envNATSURL      = "JITOUTBOX_NATS_URL"
	envAMQPURL      = "JITOUTBOX_AMQP_URL"
	envKafkaBrokers = "JITOUTBOX_KAFKA_BROKERS"
	defaultNATSURL  = "nats://127.0.0.1:4222"
)

// Brokers of -broker.
const (
	brokerNATS     = "nats"
	brokerRabbitMQ = "rabbitmq"
	brokerKafka    = "kafka"
)

// errUsage marks a bad command line (exit status 2). Every flagError
// matches it.
var errUsage = errors.New("usage")

// flagError reports a bad flag value or a bad combination of flags: Flag
// names the flag to change, Reason says what is wrong and how to fix it.
// Err, when set, is the cause (Reason is then its text unless given). It
// matches errUsage. Its text never holds a URL or DSN.
type flagError struct {
	Flag   string
	Reason string
	Err    error
}

func (e *flagError) Error() string {
	if e.Reason == "" && e.Err != nil {
		return e.Flag + ": " + e.Err.Error()
	}
	return e.Flag + ": " + e.Reason
}

// Unwrap returns the cause, if any.
func (e *flagError) Unwrap() error { return e.Err }

// Is reports errUsage.
func (e *flagError) Is(target error) bool { return target == errUsage }

func flagErrorf(flag, format string, args ...any) error {
	return &flagError{Flag: flag, Reason: fmt.Sprintf(format, args...)}
}

// config is the parsed command line.
type config struct {
	dialect string
	dsn     string

	// configPath is the -config file, file its content; sources its
	// sources (none: the one-table case of -dsn and -table).
	configPath string
	file       *configFile
	sources    []sourceSpec

	broker     string
	natsURL    string
	amqpURL    string
	kafka      []string
	deadLetter string
	debezium   bool
	// ceSource, when set, publishes events as CloudEvents with this source
	// in ceMode (-cloudevents-mode).
	ceSource string
	ceMode   cloudevents.Mode
	// NATS
	publisher     string
	subjectPrefix string
	stream        string
	natsName      string
	// RabbitMQ
	exchange string
	// Kafka
	topicPrefix     string
	kafkaAutoCreate bool

	wake        string
	wakeChannel string
	wakeSubject string

	batch           int
	poll            time.Duration
	lease           time.Duration
	rebalance       time.Duration
	publishTimeout  time.Duration
	releaseOnDead   bool
	table           string
	migrate         bool
	deleteOnPublish bool
	owner           string
	logLevel        slog.Level
	logFormat       string

	metricsAddr  string
	metricsToken string

	// decoder, set by -decode-keys-file, decodes payloads before they are
	// published (relay/decodepub).
	decoder *codec.Codec
}

// needsNATS reports whether the relay connects to NATS: to publish there or
// to receive its wakes.
func (c config) needsNATS() bool { return c.broker == brokerNATS || c.wakes()["nats"] }

// parseFlags parses args; env supplies the DSN and broker address defaults.
// Messages (usage, errors) go to stderr. A bad value or combination is a
// *flagError.
func parseFlags(args []string, env func(string) string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("jitoutbox-relay", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.dialect, "dialect", "postgres", "database: postgres, mysql or sqlite")
	fs.StringVar(&c.configPath, "config", "", "YAML file of settings (flags by name; the command line wins over them, they win over the environment) and sources: many databases and outbox tables served by one relay (docs/relay.md, \"Many tenants\")")
	fs.StringVar(&c.dsn, "dsn", "", "database DSN (default $"+envPostgresDSN+", $"+envMySQLDSN+" or $"+envSQLiteDSN+" by -dialect, when $JITOUTBOX_DSN and the -dsn-file are not set either); never logged")

	fs.StringVar(&c.broker, "broker", brokerNATS, "where events go: nats, rabbitmq or kafka")
	fs.StringVar(&c.natsURL, "nats", "", "NATS server URL(s), comma-separated (default "+defaultNATSURL+"); never logged")
	fs.StringVar(&c.amqpURL, "amqp", "", "RabbitMQ URL for -broker rabbitmq; never logged")
	kafka := fs.String("kafka", "", "Kafka seed brokers host:port, comma-separated, for -broker kafka")
	fs.StringVar(&c.deadLetter, "dead-letter", "", "also publish dead-lettered events, with their Jitoutbox-Dead-* headers, to this NATS subject, RabbitMQ exchange or Kafka topic (default: none)")
	fs.StringVar(&c.ceSource, "cloudevents-source", "", "publish every event as a CloudEvents 1.0 event with this source (a URI-reference, e.g. https://orders.example.com); any broker")
	ceMode := fs.String("cloudevents-mode", "binary", "with -cloudevents-source: binary (attributes in headers) or structured (the JSON envelope)")
	fs.BoolVar(&c.debezium, "debezium", false, "Debezium outbox event router shape (nats, kafka): outbox.event.<aggregate_type>, headers id and eventType")

	fs.StringVar(&c.publisher, "publisher", "jetstream", "NATS: jetstream (at least once) or core (at most once)")
	fs.StringVar(&c.subjectPrefix, "subject-prefix", "", "NATS: events go to <prefix>.<aggregate_type>.<event_type> (default "+natspub.DefaultSubjectPrefix+"; with -debezium <prefix>.<aggregate_type>, default "+natspub.DebeziumSubjectPrefix+")")
	fs.StringVar(&c.stream, "stream", "", "NATS: create this JetStream stream for <prefix>.> (and -dead-letter) if it is missing; an existing stream is never changed")
	fs.StringVar(&c.natsName, "nats-name", "jitoutbox-relay", "NATS connection name (shown by the server's connz)")
	fs.StringVar(&c.exchange, "exchange", "", "RabbitMQ: exchange events are published on with routing key <aggregate_type>.<event_type> (required; the relay does not declare it)")
	fs.StringVar(&c.topicPrefix, "topic-prefix", "", "Kafka: events go to <prefix>.<aggregate_type> (default "+kafkapub.DefaultTopicPrefix+"; with -debezium "+kafkapub.DebeziumTopicPrefix+")")
	fs.BoolVar(&c.kafkaAutoCreate, "kafka-auto-create", false, "Kafka: let the brokers create missing topics (auto.create.topics.enable); by default a missing topic dead-letters its events")

	fs.StringVar(&c.wake, "wake", "", "cross-process wake: pg (LISTEN/NOTIFY), nats (core subject) or none (default pg for postgres, else nats with -broker nats, else none)")
	fs.StringVar(&c.wakeChannel, "wake-channel", pgnotify.DefaultChannel, "PostgreSQL LISTEN channel for -wake pg")
	fs.StringVar(&c.wakeSubject, "wake-subject", natsnotify.DefaultSubject, "NATS subject for -wake nats")

	fs.IntVar(&c.batch, "batch", relay.DefaultBatchSize, "most rows read and published at once")
	fs.DurationVar(&c.poll, "poll", relay.DefaultPollInterval, "safety-net poll interval")
	fs.DurationVar(&c.lease, "lease", relay.DefaultLeaseDuration, "SQLite: how long the relay owns its partitions without renewing; a killed relay's events wait at most this long (must exceed -publish-timeout; PostgreSQL and MySQL use session locks)")
	fs.DurationVar(&c.rebalance, "rebalance", relay.DefaultRebalance, "how often the relay rebalances partitions with the other relays")
	fs.DurationVar(&c.publishTimeout, "publish-timeout", relay.DefaultPublishTimeout, "bound on one publish call")
	fs.BoolVar(&c.releaseOnDead, "release-on-dead", false, "let later events of an aggregate flow past a dead-lettered one (a requeued event then arrives out of order); by default the aggregate waits for outboxctl requeue or skip")
	fs.StringVar(&c.table, "table", "", "outbox table (default outbox)")
	fs.BoolVar(&c.migrate, "migrate", false, "create or upgrade the outbox schema before relaying")
	fs.BoolVar(&c.deleteOnPublish, "delete-on-publish", false, "delete rows once published instead of marking them")
	fs.StringVar(&c.owner, "owner", "", "relay name in the relays table and logs, unique per relay (default <host>-<pid>-<random>)")
	level := fs.String("log-level", "info", "debug, info, warn or error")
	fs.StringVar(&c.logFormat, "log-format", "json", "json or text")
	fs.StringVar(&c.metricsAddr, "metrics-addr", "", "serve /metrics (Prometheus), /healthz and /readyz on this address, e.g. :9090 (default: not served)")
	fs.StringVar(&c.metricsToken, "metrics-token", "", fmt.Sprintf("bearer token /metrics requires, at least %d characters (default: none; /healthz and /readyz never need one); never logged", minTokenLen))
	decodeKeys := fs.String("decode-keys-file", "", "decode payloads that writers encrypted or compressed (package codec) before publishing, with the keys in this file (<id>:<base64>, newest first), for consumers that cannot hold keys; an event whose key is not in the file is dead-lettered, never published in clear (default: payloads are published as stored, consumers decode)")
	files := secretFileFlags(fs)
	fs.VisitAll(func(f *flag.Flag) { f.Usage += " [$" + envName(f.Name) + "]" })
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage of jitoutbox-relay:\n"+
			"Each flag may be set by the environment variable shown with it; the command line wins.\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return c, flag.ErrHelp // -h: the usage is printed, exit 0
		}
		return c, errUsage // flag has printed the error and the usage
	}
	set := make(map[string]bool)
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if fs.NArg() > 0 {
		return c, &flagError{Flag: "arguments", Reason: fmt.Sprintf("unexpected %q: the command takes flags only", fs.Args())}
	}
	if err := c.loadConfig(fs, set, env); err != nil {
		return c, err
	}
	if err := applyEnv(fs, c.envSkips(set), env); err != nil {
		return c, err
	}
	if err := files.read(fs); err != nil {
		return c, err
	}
	if err := c.parseMetrics(); err != nil {
		return c, err
	}
	if err := c.logLevel.UnmarshalText([]byte(*level)); err != nil {
		return c, flagErrorf("-log-level", "%q: use debug, info, warn or error", *level)
	}
	if err := c.parseCloudEvents(set, *ceMode); err != nil {
		return c, err
	}
	if *decodeKeys != "" {
		// Read at start-up: a missing or malformed file is a usage error
		// now, not a dead letter per event later.
		keys, err := codec.KeysFromFile(*decodeKeys)
		if err != nil {
			return c, flagErrorf("-decode-keys-file", "%v", err)
		}
		if c.decoder, err = codec.New(codec.Config{Keys: keys}); err != nil {
			return c, flagErrorf("-decode-keys-file", "%v", err)
		}
	}
	switch c.logFormat {
	case "json", "text":
	default:
		return c, flagErrorf("-log-format", "%q: use json or text", c.logFormat)
	}
	if c.fleet() {
		if err := c.parseSources(); err != nil {
			return c, err
		}
	} else if err := c.parseDatabase(env); err != nil {
		return c, err
	}
	if err := c.parseBroker(set, env, *kafka); err != nil {
		return c, err
	}
	if c.fleet() {
		if err := c.parseSourceDests(); err != nil {
			return c, err
		}
	}
	if err := c.parseWake(); err != nil {
		return c, err
	}
	if err := c.parseTuning(); err != nil {
		return c, err
	}
	return c, nil
}

// parseDatabase checks -dialect and -dsn (with its default from the
// environment) of the one-table case.
func (c *config) parseDatabase(env func(string) string) error {
	switch c.dialect {
	case "postgres":
		c.dsn = cmp.Or(c.dsn, env(envPostgresDSN))
	case "mysql":
		c.dsn = cmp.Or(c.dsn, env(envMySQLDSN))
	case "sqlite":
		c.dsn = cmp.Or(c.dsn, env(envSQLiteDSN))
	default:
		return flagErrorf("-dialect", "%q: use postgres, mysql or sqlite", c.dialect)
	}
	if c.dsn == "" {
		return flagErrorf("-dsn", "no DSN: pass -dsn or set the environment variable for -dialect %s", c.dialect)
	}
	return nil
}

// parseBroker checks -broker and the flags that belong to it.
func (c *config) parseBroker(set map[string]bool, env func(string) string, kafka string) error {
	only := map[string]string{
		"publisher": brokerNATS, "subject-prefix": brokerNATS, "stream": brokerNATS,
		"exchange": brokerRabbitMQ, "amqp": brokerRabbitMQ,
		"topic-prefix": brokerKafka, "kafka-auto-create": brokerKafka, "kafka": brokerKafka,
	}
	switch c.broker {
	case brokerNATS, brokerRabbitMQ, brokerKafka:
	default:
		return flagErrorf("-broker", "%q: use nats, rabbitmq or kafka", c.broker)
	}
	for name, b := range only {
		if set[name] && b != c.broker {
			return flagErrorf("-"+name, "applies to -broker %s only, not -broker %s; remove it", b, c.broker)
		}
	}
	if c.debezium && c.broker == brokerRabbitMQ {
		return flagErrorf("-debezium", "the Debezium shape exists for -broker nats and kafka only; remove -debezium or choose another broker")
	}
	c.natsURL = cmp.Or(c.natsURL, env(envNATSURL), defaultNATSURL)
	switch c.broker {
	case brokerNATS:
		return c.parseNATS()
	case brokerRabbitMQ:
		c.amqpURL = cmp.Or(c.amqpURL, env(envAMQPURL))
		if c.amqpURL == "" {
			return flagErrorf("-amqp", "no RabbitMQ URL: pass -amqp amqp://user:password@host:5672/vhost or set $%s", envAMQPURL)
		}
		if c.exchange == "" && !c.fleet() {
			return flagErrorf("-exchange", "-broker rabbitmq needs the exchange to publish on (declare it, a topic exchange suits, and bind your queues)")
		}
		if err := rabbitpub.ValidateName(c.exchange); c.exchange != "" && err != nil {
			return flagErrorf("-exchange", "%v", err)
		}
		if c.deadLetter != "" {
			if err := rabbitpub.ValidateName(c.deadLetter); err != nil {
				return flagErrorf("-dead-letter", "not an exchange name: %v", err)
			}
		}
	case brokerKafka:
		for _, s := range strings.Split(cmp.Or(kafka, env(envKafkaBrokers)), ",") {
			if s = strings.TrimSpace(s); s != "" {
				c.kafka = append(c.kafka, s)
			}
		}
		if len(c.kafka) == 0 {
			return flagErrorf("-kafka", "no Kafka brokers: pass -kafka host:9092[,host2:9092] or set $%s", envKafkaBrokers)
		}
		if c.topicPrefix == "" {
			c.topicPrefix = kafkapub.DefaultTopicPrefix
			if c.debezium {
				c.topicPrefix = kafkapub.DebeziumTopicPrefix
			}
		}
		if _, err := kafkapub.DefaultRouter(c.topicPrefix); err != nil {
			return flagErrorf("-topic-prefix", "%v", err)
		}
		if c.deadLetter != "" {
			if err := kafkapub.ValidateTopic(c.deadLetter); err != nil {
				return flagErrorf("-dead-letter", "not a topic name: %v", err)
			}
		}
	}
	return nil
}

// parseNATS checks the NATS flags of -broker nats.
func (c *config) parseNATS() error {
	switch c.publisher {
	case "jetstream":
	case "core":
		if c.stream != "" {
			return flagErrorf("-stream", "needs -publisher jetstream")
		}
	default:
		return flagErrorf("-publisher", "%q: use jetstream or core", c.publisher)
	}
	if c.subjectPrefix == "" {
		c.subjectPrefix = natspub.DefaultSubjectPrefix
		if c.debezium {
			c.subjectPrefix = natspub.DebeziumSubjectPrefix
		}
	}
	if err := natspub.ValidateSubject(c.subjectPrefix); err != nil {
		return flagErrorf("-subject-prefix", "%v", err)
	}
	if c.stream != "" && strings.ContainsAny(c.stream, ".*> \t\r\n") {
		return flagErrorf("-stream", "%q: a stream name has no '.', '*', '>' or whitespace", c.stream)
	}
	if c.deadLetter != "" {
		if err := natspub.ValidateSubject(c.deadLetter); err != nil {
			return flagErrorf("-dead-letter", "not a subject to publish on: %v", err)
		}
		if !c.fleet() && subjectCovers(c.subjectPrefix+".>", c.deadLetter) { // the sources' prefixes: parseSourceDests
			return flagErrorf("-dead-letter", "subject %q is under -subject-prefix %q, so consumers of events would receive dead letters as events; choose a subject outside it", c.deadLetter, c.subjectPrefix)
		}
	}
	return nil
}

// parseWake checks -wake and its subject or channel; without it, each
// database takes its dialect's default (defaultWake).
func (c *config) parseWake() error {
	switch c.wake {
	case "", "pg", "nats", "none":
	default:
		return flagErrorf("-wake", "%q: use pg, nats or none", c.wake)
	}
	if c.fleet() {
		if err := c.parseSourceWakes(); err != nil {
			return err
		}
	} else {
		c.wake = cmp.Or(c.wake, defaultWake(c.dialect, c.broker))
		if c.wake == "pg" && c.dialect != "postgres" {
			return flagErrorf("-wake", "pg needs -dialect postgres; use -wake nats")
		}
	}
	wakes := c.wakes()
	if wakes["pg"] {
		if _, err := pgnotify.NewTxNotifier(pgnotify.WithChannel(c.wakeChannel)); err != nil {
			return flagErrorf("-wake-channel", "%v", err)
		}
	}
	if wakes["nats"] {
		if err := natsnotify.ValidateSubject(c.wakeSubject); err != nil {
			return flagErrorf("-wake-subject", "%v", err)
		}
	}
	return nil
}

// parseTuning checks the relay's numbers.
func (c *config) parseTuning() error {
	switch {
	case c.batch <= 0:
		return flagErrorf("-batch", "%d: must be positive", c.batch)
	case c.poll <= 0:
		return flagErrorf("-poll", "%v: must be positive", c.poll)
	case c.publishTimeout <= 0:
		return flagErrorf("-publish-timeout", "%v: must be positive", c.publishTimeout)
	case c.rebalance <= 0:
		return flagErrorf("-rebalance", "%v: must be positive", c.rebalance)
	case c.lease <= c.publishTimeout:
		return flagErrorf("-lease", "%v must exceed -publish-timeout %v, or ownership could expire while a batch is published", c.lease, c.publishTimeout)
	}
	return nil
}

// subjectCovers reports whether every subject that pattern (which may end
// in '>' or hold '*') matches is matched by filter.
func subjectCovers(filter, pattern string) bool {
	f, p := strings.Split(filter, "."), strings.Split(pattern, ".")
	for i, ft := range f {
		if ft == ">" {
			return i < len(p)
		}
		if i >= len(p) {
			return false
		}
		switch {
		case ft == "*" && p[i] != ">":
		case ft == p[i] && ft != ">":
		default:
			return false
		}
	}
	return len(f) == len(p)
}

// destination describes dest (see config.dest), for the start-up log.
func (c config) destination(dest string) string {
	switch c.broker {
	case brokerRabbitMQ:
		return "exchange " + dest
	case brokerKafka:
		return "topics " + dest + ".<aggregate_type>"
	}
	d := c.publisher + " " + dest + ".>"
	if c.stream != "" {
		d += " in stream " + c.stream
	}
	return d
}

// parseCloudEvents checks -cloudevents-source (a URI-reference, refused at
// start-up otherwise) and -cloudevents-mode, which needs it.
func (c *config) parseCloudEvents(set map[string]bool, mode string) error {
	switch mode {
	case "binary":
		c.ceMode = cloudevents.Binary
	case "structured":
		c.ceMode = cloudevents.Structured
	default:
		return flagErrorf("-cloudevents-mode", "%q: use binary or structured", mode)
	}
	if c.ceSource == "" {
		if set["cloudevents-mode"] {
			return flagErrorf("-cloudevents-mode", "needs -cloudevents-source")
		}
		return nil
	}
	if err := cloudevents.ValidateSource(c.ceSource); err != nil {
		return flagErrorf("-cloudevents-source", "%v", err)
	}
	if c.debezium {
		return flagErrorf("-cloudevents-source", "CloudEvents and the Debezium shape exclude each other; remove -debezium or -cloudevents-source")
	}
	return nil
}
