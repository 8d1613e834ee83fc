package main

import (
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"time"
)

func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestParseFlagsDefaults(t *testing.T) {
	env := envOf(map[string]string{envPostgresDSN: "postgres://pg", envMySQLDSN: "mysql-dsn", envNATSURL: "nats://n:1"})
	c, err := parseFlags(nil, env, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.dialect != "postgres" || c.dsn != "postgres://pg" || c.broker != brokerNATS || c.natsURL != "nats://n:1" ||
		c.wake != "pg" || c.publisher != "jetstream" || c.subjectPrefix != "outbox" || c.poll != 30*time.Second ||
		c.batch != 500 || c.lease != 60*time.Second || c.rebalance != 30*time.Second ||
		c.publishTimeout != 10*time.Second || c.releaseOnDead || c.debezium || c.deadLetter != "" {
		t.Fatalf("defaults: %+v", c)
	}
	c, err = parseFlags([]string{"-dialect", "mysql"}, env, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.dsn != "mysql-dsn" || c.wake != "nats" {
		t.Fatalf("mysql defaults: dsn from env and NATS wake expected, got %+v", c)
	}
	c, err = parseFlags([]string{"-dialect", "sqlite", "-dsn", "file:x.db"}, envOf(nil), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.natsURL != defaultNATSURL || c.wake != "nats" {
		t.Fatalf("sqlite defaults: %+v", c)
	}
}

func TestParseFlagsBrokers(t *testing.T) {
	env := envOf(map[string]string{envSQLiteDSN: "file:x.db", envAMQPURL: "amqp://u:p@h/", envKafkaBrokers: "k1:9092, k2:9092"})
	c, err := parseFlags([]string{"-dialect", "sqlite", "-broker", "rabbitmq", "-exchange", "ev", "-dead-letter", "dlx"}, env, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.amqpURL != "amqp://u:p@h/" || c.exchange != "ev" || c.deadLetter != "dlx" || c.wake != "none" || c.needsNATS() {
		t.Fatalf("rabbitmq: %+v", c)
	}
	c, err = parseFlags([]string{"-dialect", "sqlite", "-broker", "rabbitmq", "-amqp", "amqp://x/", "-exchange", "ev", "-wake", "nats"}, env, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.amqpURL != "amqp://x/" || !c.needsNATS() {
		t.Fatalf("rabbitmq with -amqp and a NATS wake: %+v", c)
	}
	c, err = parseFlags([]string{"-dialect", "sqlite", "-broker", "kafka", "-debezium", "-dead-letter", "dead"}, env, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.kafka, []string{"k1:9092", "k2:9092"}) || c.topicPrefix != "outbox.event" || !c.debezium || c.needsNATS() {
		t.Fatalf("kafka: %+v", c)
	}
	c, err = parseFlags([]string{"-dialect", "sqlite", "-broker", "kafka", "-kafka", "k3:1", "-topic-prefix", "svc"}, env, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.kafka, []string{"k3:1"}) || c.topicPrefix != "svc" {
		t.Fatalf("kafka with -kafka and -topic-prefix: %+v", c)
	}
	c, err = parseFlags([]string{"-dialect", "sqlite", "-debezium", "-dead-letter", "dead.events"}, env, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.subjectPrefix != "outbox.event" || c.deadLetter != "dead.events" {
		t.Fatalf("nats debezium: %+v", c)
	}
	c, err = parseFlags([]string{"-dialect", "sqlite", "-lease", "20s", "-rebalance", "5s", "-release-on-dead"}, env, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.lease != 20*time.Second || c.rebalance != 5*time.Second || !c.releaseOnDead {
		t.Fatalf("lease, rebalance, release-on-dead: %+v", c)
	}
}

// TestParseFlagsErrors checks that each bad command line fails with a
// *flagError naming the flag to fix, and that no error quotes a URL.
func TestParseFlagsErrors(t *testing.T) {
	env := envOf(map[string]string{envPostgresDSN: "postgres://pg", envMySQLDSN: "m", envAMQPURL: "amqp://guest:secret@h/"})
	for _, tc := range []struct {
		args []string
		flag string
	}{
		{[]string{"-dialect", "oracle"}, "-dialect"},
		{[]string{"-dialect", "sqlite"}, "-dsn"},
		{[]string{"-broker", "kinesis"}, "-broker"},
		{[]string{"-publisher", "kafka"}, "-publisher"},
		{[]string{"-publisher", "core", "-stream", "S"}, "-stream"},
		{[]string{"-stream", "a.b"}, "-stream"},
		{[]string{"-subject-prefix", "a.>"}, "-subject-prefix"},
		{[]string{"-dead-letter", "a.*"}, "-dead-letter"},
		{[]string{"-dead-letter", "outbox.dead"}, "-dead-letter"}, // under the events' prefix
		{[]string{"-broker", "rabbitmq", "-exchange", "ev", "-debezium"}, "-debezium"},
		{[]string{"-cloudevents-source", "not a uri"}, "-cloudevents-source"},
		{[]string{"-cloudevents-source", "/orders", "-cloudevents-mode", "json"}, "-cloudevents-mode"},
		{[]string{"-cloudevents-mode", "structured"}, "-cloudevents-mode"},
		{[]string{"-cloudevents-source", "/orders", "-debezium"}, "-cloudevents-source"},
		{[]string{"-broker", "rabbitmq", "-exchange", "ev", "-stream", "S"}, "-stream"},
		{[]string{"-broker", "rabbitmq", "-exchange", "ev", "-subject-prefix", "x"}, "-subject-prefix"},
		{[]string{"-broker", "rabbitmq"}, "-exchange"},
		{[]string{"-broker", "rabbitmq", "-exchange", "ev", "-topic-prefix", "t"}, "-topic-prefix"},
		{[]string{"-broker", "rabbitmq", "-exchange", strings.Repeat("x", 256)}, "-exchange"},
		{[]string{"-broker", "rabbitmq", "-exchange", "ev", "-dead-letter", strings.Repeat("x", 256)}, "-dead-letter"},
		{[]string{"-broker", "kafka"}, "-kafka"},
		{[]string{"-broker", "kafka", "-kafka", " , "}, "-kafka"},
		{[]string{"-broker", "kafka", "-kafka", "k:1", "-exchange", "e"}, "-exchange"},
		{[]string{"-broker", "kafka", "-kafka", "k:1", "-amqp", "amqp://guest:secret@h/"}, "-amqp"},
		{[]string{"-broker", "kafka", "-kafka", "k:1", "-topic-prefix", "bad topic"}, "-topic-prefix"},
		{[]string{"-broker", "kafka", "-kafka", "k:1", "-dead-letter", "bad/topic"}, "-dead-letter"},
		{[]string{"-kafka-auto-create"}, "-kafka-auto-create"},
		{[]string{"-wake", "carrier-pigeon"}, "-wake"},
		{[]string{"-dialect", "mysql", "-wake", "pg"}, "-wake"},
		{[]string{"-wake-channel", "bad-name"}, "-wake-channel"},
		{[]string{"-dialect", "mysql", "-wake-subject", "a.*"}, "-wake-subject"},
		{[]string{"-batch", "0"}, "-batch"},
		{[]string{"-poll", "0s"}, "-poll"},
		{[]string{"-publish-timeout", "0s"}, "-publish-timeout"},
		{[]string{"-rebalance", "0s"}, "-rebalance"},
		{[]string{"-lease", "2s", "-publish-timeout", "2s"}, "-lease"},
		{[]string{"-lease", "1s"}, "-lease"}, // below the default publish timeout
		{[]string{"-log-level", "loud"}, "-log-level"},
		{[]string{"-log-format", "xml"}, "-log-format"},
		{[]string{"extra"}, "arguments"},
	} {
		_, err := parseFlags(tc.args, env, io.Discard)
		var fe *flagError
		if !errors.As(err, &fe) || !errors.Is(err, errUsage) {
			t.Errorf("%q: err = %v, want a *flagError matching errUsage", tc.args, err)
			continue
		}
		if fe.Flag != tc.flag {
			t.Errorf("%q: error names %s (%v), want %s", tc.args, fe.Flag, err, tc.flag)
		}
		if strings.Contains(err.Error(), "secret") {
			t.Errorf("%q: the error quotes a URL: %v", tc.args, err)
		}
	}
	// An unknown flag is reported by the flag package itself.
	if _, err := parseFlags([]string{"-no-such-flag"}, env, io.Discard); err != errUsage {
		t.Errorf("-no-such-flag: err = %v, want errUsage", err)
	}
}

func TestParseFlagsMissingAMQP(t *testing.T) {
	_, err := parseFlags([]string{"-dialect", "sqlite", "-dsn", "x", "-broker", "rabbitmq", "-exchange", "e"}, envOf(nil), io.Discard)
	var fe *flagError
	if !errors.As(err, &fe) || fe.Flag != "-amqp" || !strings.Contains(fe.Reason, envAMQPURL) {
		t.Fatalf("err = %v, want a -amqp error naming %s", err, envAMQPURL)
	}
}

func TestSubjectCovers(t *testing.T) {
	for _, tc := range []struct {
		filter, pattern string
		want            bool
	}{
		{"outbox.>", "outbox.>", true},
		{"outbox.>", "outbox.dead", true},
		{"outbox.>", "outbox", false},
		{">", "a.b.>", true},
		{"a.*", "a.b", true},
		{"a.*", "a.>", false},
		{"a.*", "a.b.c", false},
		{"a.b", "a.b", true},
		{"a.b", "a.c", false},
		{"a.b.>", "a.>", false},
		{"dead", "dead", true},
	} {
		if got := subjectCovers(tc.filter, tc.pattern); got != tc.want {
			t.Errorf("subjectCovers(%q, %q) = %v, want %v", tc.filter, tc.pattern, got, tc.want)
		}
	}
}
