package main

import (
	"errors"
	"io"
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
	if c.dialect != "postgres" || c.dsn != "postgres://pg" || c.natsURL != "nats://n:1" || c.wake != "pg" ||
		c.publisher != "jetstream" || c.poll != 30*time.Second || c.batch != 500 ||
		c.lease != 30*time.Second || c.publishTimeout != 10*time.Second {
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

func TestParseFlagsErrors(t *testing.T) {
	env := envOf(map[string]string{envPostgresDSN: "postgres://pg", envMySQLDSN: "m"})
	for _, args := range [][]string{
		{"-dialect", "oracle"},
		{"-dialect", "sqlite"}, // no DSN
		{"-publisher", "kafka"},
		{"-publisher", "core", "-stream", "S"},
		{"-stream", "a.b"},
		{"-subject-prefix", "a.>"},
		{"-wake", "carrier-pigeon"},
		{"-dialect", "mysql", "-wake", "pg"},
		{"-wake-channel", "bad-name"},
		{"-dialect", "mysql", "-wake-subject", "a.*"},
		{"-batch", "0"},
		{"-poll", "0s"},
		{"-publish-timeout", "0s"},
		{"-lease", "2s", "-publish-timeout", "2s"},
		{"-lease", "1s"}, // below the default publish timeout
		{"-log-level", "loud"},
		{"-log-format", "xml"},
		{"-no-such-flag"},
		{"extra"},
	} {
		if _, err := parseFlags(args, env, io.Discard); !errors.Is(err, errUsage) {
			t.Errorf("%q: err = %v, want errUsage", args, err)
		}
	}
}

func TestParseFlagsLease(t *testing.T) {
	env := envOf(map[string]string{envPostgresDSN: "postgres://pg"})
	c, err := parseFlags([]string{"-lease", "3s", "-publish-timeout", "2s"}, env, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.lease != 3*time.Second || c.publishTimeout != 2*time.Second {
		t.Fatalf("lease %v, publish timeout %v; want 3s, 2s", c.lease, c.publishTimeout)
	}
}
