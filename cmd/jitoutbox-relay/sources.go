package main

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/jitoutbox/jitoutbox/relay/kafkapub"
	"github.com/jitoutbox/jitoutbox/relay/natspub"
	"github.com/jitoutbox/jitoutbox/relay/rabbitpub"
)

// sourceName is what a source's name may hold: it labels logs, metrics and
// /readyz lines.
var sourceName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$`)

// fleet reports whether the relay serves the sources of -config.
func (c config) fleet() bool { return len(c.sources) > 0 }

// parseSources checks each source of -config but where its events go
// (parseSourceDests, once the broker is known), and reads its dsn_file.
func (c *config) parseSources() error {
	cf := c.file
	first := map[string]int{}
	for i := range c.sources {
		s := &c.sources[i]
		switch j, dup := first[s.Name]; {
		case s.Name == "":
			return cf.sourceError(i, "name", "missing: every source needs a name (it labels logs, metrics and /readyz)")
		case !sourceName.MatchString(s.Name):
			return cf.sourceError(i, "name", "%q: use up to 63 letters, digits, '_', '-' and '.', starting with a letter or digit", s.Name)
		case dup:
			return cf.sourceError(i, "name", "%q is also the name of sources[%d]; names must be unique", s.Name, j)
		}
		first[s.Name] = i
		switch s.Dialect {
		case "postgres", "mysql", "sqlite":
		case "":
			return cf.sourceError(i, "dialect", "missing: use postgres, mysql or sqlite")
		default:
			return cf.sourceError(i, "dialect", "%q: use postgres, mysql or sqlite", s.Dialect)
		}
		if err := c.sourceDSN(i); err != nil {
			return err
		}
		if err := c.sourceTables(i); err != nil {
			return err
		}
	}
	return nil
}

// sourceDSN sets the DSN of source i from dsn or dsn_file (a path relative
// to the -config file's directory unless absolute).
func (c *config) sourceDSN(i int) error {
	cf, s := c.file, &c.sources[i]
	switch {
	case s.DSN != "" && s.DSNFile != "":
		return cf.sourceError(i, "dsn_file", "give dsn or dsn_file, not both")
	case s.DSN != "":
		s.dsn = s.DSN
	case s.DSNFile != "":
		v, err := readSecretFile(cf.resolvePath(s.DSNFile))
		if err != nil {
			e := cf.sourceError(i, "dsn_file", "")
			e.Err = err // names the path, never the content
			return e
		}
		s.dsn = v
	default:
		return cf.sourceError(i, "dsn", "missing: give dsn or dsn_file (a file holding the DSN, as a mounted Secret)")
	}
	return nil
}

// sourceTables checks the tables and patterns of source i: each table a
// name its dialect accepts, each pattern one once its '*' are letters (the
// dialect checks the wildcards when the fleet starts), none twice.
func (c *config) sourceTables(i int) error {
	cf, s := c.file, &c.sources[i]
	if len(s.Tables) == 0 && len(s.Patterns) == 0 {
		return cf.sourceError(i, "tables", "no tables and no patterns: name at least one table, or a pattern such as \"tenant_*.outbox\"")
	}
	for _, list := range []struct {
		field, what string
		names       []string
		check       func(string) string
	}{
		{"tables", "", s.Tables, func(t string) string { return t }},
		{"patterns", " (its '*' taken as letters)", s.Patterns, func(p string) string { return strings.ReplaceAll(p, "*", "x") }},
	} {
		for j, n := range list.names {
			field := fmt.Sprintf("%s[%d]", list.field, j)
			if n == "" {
				return cf.sourceError(i, field, "empty")
			}
			if k := slices.Index(list.names, n); k < j {
				return cf.sourceError(i, field, "%q is also %s[%d]", n, list.field, k)
			}
			if _, err := newDialect(s.Dialect, list.check(n)); err != nil {
				e := cf.sourceError(i, field, "%q%s: ", n, list.what)
				e.Reason += err.Error()
				return e
			}
		}
	}
	return nil
}

// destFields are the keys of a source that choose where its events go, by
// the broker they belong to.
var destFields = []struct{ field, broker string }{
	{"subject_prefix", brokerNATS}, {"topic_prefix", brokerKafka}, {"exchange", brokerRabbitMQ},
}

// parseSourceDests checks where each source's events go: its
// subject_prefix, topic_prefix or exchange, which must be -broker's, or the
// flag's.
func (c *config) parseSourceDests() error {
	cf := c.file
	for i := range c.sources {
		s := &c.sources[i]
		vals := map[string]string{"subject_prefix": s.SubjectPrefix, "topic_prefix": s.TopicPrefix, "exchange": s.Exchange}
		for _, f := range destFields {
			if vals[f.field] != "" && f.broker != c.broker {
				return cf.sourceError(i, f.field, "applies to -broker %s only, not -broker %s; remove it", f.broker, c.broker)
			}
		}
		switch c.broker {
		case brokerNATS:
			if err := natspub.ValidateSubject(c.dest(s)); err != nil {
				return cf.sourceError(i, "subject_prefix", "%v", err)
			}
			if c.deadLetter != "" && subjectCovers(c.dest(s)+".>", c.deadLetter) {
				return cf.sourceError(i, "subject_prefix", "%q holds the -dead-letter subject %q, so consumers of events would receive dead letters as events; choose a prefix outside it", c.dest(s), c.deadLetter)
			}
		case brokerKafka:
			if _, err := kafkapub.DefaultRouter(c.dest(s)); err != nil {
				return cf.sourceError(i, "topic_prefix", "%v", err)
			}
		case brokerRabbitMQ:
			if c.dest(s) == "" {
				return cf.sourceError(i, "exchange", "missing: set the source's exchange, or -exchange for every source")
			}
			if err := rabbitpub.ValidateName(c.dest(s)); err != nil {
				return cf.sourceError(i, "exchange", "%v", err)
			}
		}
	}
	return nil
}

// dest returns where the events of source s (nil: of the one-table case)
// go: a NATS subject prefix, a Kafka topic prefix or a RabbitMQ exchange,
// the source's own or the flag's.
func (c config) dest(s *sourceSpec) string {
	var own string
	if s != nil {
		own = map[string]string{brokerNATS: s.SubjectPrefix, brokerKafka: s.TopicPrefix, brokerRabbitMQ: s.Exchange}[c.broker]
	}
	switch c.broker {
	case brokerRabbitMQ:
		return cmp.Or(own, c.exchange)
	case brokerKafka:
		return cmp.Or(own, c.topicPrefix)
	}
	return cmp.Or(own, c.subjectPrefix)
}

// dests returns every destination events go to, each once: the sources'
// or, without sources, the flag's.
func (c config) dests() []string {
	if !c.fleet() {
		return []string{c.dest(nil)}
	}
	var out []string
	for i := range c.sources {
		if d := c.dest(&c.sources[i]); !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out
}

// defaultWake is the wake of a database of dialect when -wake is not
// given: pg for PostgreSQL, else nats with -broker nats, else none.
func defaultWake(dialect, broker string) string {
	switch {
	case dialect == "postgres":
		return "pg"
	case broker == brokerNATS:
		return "nats"
	}
	return "none"
}

// parseSourceWakes sets each source's wake: -wake, or its dialect's
// default.
func (c *config) parseSourceWakes() error {
	for i := range c.sources {
		s := &c.sources[i]
		s.wake = cmp.Or(c.wake, defaultWake(s.Dialect, c.broker))
		if s.wake == "pg" && s.Dialect != "postgres" {
			return flagErrorf("-wake", "pg applies to PostgreSQL only, and sources[%d] (%s) is %s: leave -wake unset (each source then takes its dialect's default) or use -wake nats", i, s.Name, s.Dialect)
		}
	}
	return nil
}

// wakes reports the wakes in use.
func (c config) wakes() map[string]bool {
	out := map[string]bool{c.wake: true}
	for _, s := range c.sources {
		out[s.wake] = true
	}
	return out
}
