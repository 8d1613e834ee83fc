package main

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// writeConfig writes content to a -config file in a fresh directory and
// returns its path.
func writeConfig(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "relay.yaml")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

const secretDSN = "postgres://relay:s3cretPW@db:5432/app"

// TestConfigFileSources: a file with settings and three sources of three
// dialects parses into the sources, each with its DSN (inline or from a
// file relative to the -config file), its destination and its wake.
func TestConfigFileSources(t *testing.T) {
	path := writeConfig(t, `
settings:
  batch: 250
  poll: 5s
  dead-letter: dead.events
sources:
  - name: main
    dialect: postgres
    dsn_file: main-dsn
    tables: [public.outbox]
    patterns: ["tenant_*.outbox"]
    subject_prefix: tenants.main
  - name: shard-2
    dialect: mysql
    dsn: "relay:pw@tcp(db2:3306)/app"
    tables: [outbox, outbox_b]
  - name: lite
    dialect: sqlite
    dsn: file:/data/lite.db
    patterns: ["outbox_*"]
    subject_prefix: lite
`)
	if err := os.WriteFile(filepath.Join(filepath.Dir(path), "main-dsn"), []byte(secretDSN+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := parseFlags([]string{"-config", path}, envOf(nil), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !c.fleet() || len(c.sources) != 3 || c.batch != 250 || c.poll != 5*time.Second || c.deadLetter != "dead.events" {
		t.Fatalf("config: %+v", c)
	}
	main, shard, lite := c.sources[0], c.sources[1], c.sources[2]
	if main.dsn != secretDSN || shard.dsn != "relay:pw@tcp(db2:3306)/app" || lite.dsn != "file:/data/lite.db" {
		t.Errorf("DSNs: %q %q %q", main.dsn, shard.dsn, lite.dsn)
	}
	if !slices.Equal(main.Patterns, []string{"tenant_*.outbox"}) || !slices.Equal(shard.Tables, []string{"outbox", "outbox_b"}) {
		t.Errorf("tables and patterns: %+v %+v", main, shard)
	}
	// Each source takes its dialect's default wake; NATS is needed for the
	// events and the wakes of the other two.
	if main.wake != "pg" || shard.wake != "nats" || lite.wake != "nats" || !c.needsNATS() {
		t.Errorf("wakes: %s %s %s", main.wake, shard.wake, lite.wake)
	}
	if got, want := c.dests(), []string{"tenants.main", "outbox", "lite"}; !slices.Equal(got, want) {
		t.Errorf("destinations %q, want %q", got, want)
	}
	if secrets := strings.Join(c.secrets(), "\n"); !strings.Contains(secrets, "s3cretPW") || !strings.Contains(secrets, "relay:pw@") {
		t.Errorf("the sources' DSNs are not among the secrets: %q", secrets)
	}

	// -wake nats applies to every source; the environment's one-table
	// variables are ignored with sources.
	env := envOf(map[string]string{"JITOUTBOX_CONFIG": path, "JITOUTBOX_DSN": "x", "JITOUTBOX_TABLE": "bad table", "JITOUTBOX_DIALECT": "oracle"})
	if c, err = parseFlags([]string{"-wake", "nats"}, env, io.Discard); err != nil {
		t.Fatal(err)
	}
	if !c.fleet() || c.sources[0].wake != "nats" || c.dsn != "" || c.table != "" {
		t.Errorf("$JITOUTBOX_CONFIG with -wake nats: %+v", c)
	}
}

// TestConfigFilePrecedence: a flag on the command line wins over the
// file's settings, the settings over the environment; a secret given on
// the command line wins over the file's as a whole (value or file). A file
// with settings only is the one-table case.
func TestConfigFilePrecedence(t *testing.T) {
	dir := t.TempDir()
	natsFile := filepath.Join(dir, "nats")
	if err := os.WriteFile(natsFile, []byte("nats://file:4222\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	path := writeConfig(t, `
settings:
  dialect: sqlite
  dsn: file:settings.db
  batch: 500
  poll: 3s
  nats-file: `+natsFile+`
  migrate: true
`)
	env := envOf(map[string]string{"JITOUTBOX_BATCH": "7", "JITOUTBOX_POLL": "9s", "JITOUTBOX_OWNER": "env-owner",
		"JITOUTBOX_DSN": "file:env.db", envNATSURL: "nats://env:4222"})
	c, err := parseFlags([]string{"-config", path, "-batch", "9"}, env, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.fleet() || c.dialect != "sqlite" || c.dsn != "file:settings.db" || c.batch != 9 || c.poll != 3*time.Second ||
		c.owner != "env-owner" || !c.migrate || c.natsURL != "nats://file:4222" {
		t.Fatalf("command line > file > environment: %+v", c)
	}
	c, err = parseFlags([]string{"-config", path, "-nats", "nats://flag:4222", "-dsn", "file:flag.db"}, env, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.natsURL != "nats://flag:4222" || c.dsn != "file:flag.db" || c.batch != 500 {
		t.Fatalf("-nats over the file's nats-file, -dsn over its dsn: %+v", c)
	}
}

// TestConfigFileErrors: each bad file fails with a *configError (or, for a
// flag of the command line, a *flagError) that matches errUsage and names
// the source, its field and the line; no error quotes a DSN.
func TestConfigFileErrors(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty-dsn")
	if err := os.WriteFile(empty, []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	const head = "sources:\n  - name: main\n    dialect: postgres\n    dsn: " + secretDSN + "\n"
	const pg = head + "    tables: [public.outbox]\n"
	for _, tc := range []struct {
		name, file string
		args       []string
		source     int    // -1: not a source's
		field      string // of the *configError, or the flag of a *flagError
		line       int    // 0: not checked
	}{
		{"unknown key", "settings: {}\nsourcez: []\n", nil, -1, "sourcez", 2},
		{"unknown source key", pg + "    tabels: [x]\n", nil, -1, "tabels", 6},
		{"no file", "", []string{"-config", filepath.Join(dir, "missing.yaml")}, -1, "", 0},
		{"empty file", "", nil, -1, "", 0},
		{"two documents", pg + "---\nsources: []\n", nil, -1, "", 0},
		{"settings not a mapping", "settings: [batch]\n", nil, -1, "settings", 1},
		{"wrong kind", head + "    tables: s3cret\n", nil, -1, "", 5}, // yaml.v3 would quote the value
		{"unknown flag", "settings:\n  batchsize: 5\n", nil, -1, "settings.batchsize", 2},
		{"config in config", "settings:\n  config: other.yaml\n", nil, -1, "settings.config", 2},
		{"list value", "settings:\n  batch: [1, 2]\n", nil, -1, "settings.batch", 2},
		{"null value", "settings:\n  batch:\n", nil, -1, "settings.batch", 2},
		{"bad value", "settings:\n  batch: many\n", nil, -1, "settings.batch", 2},
		{"dsn in settings with sources", "settings:\n  dsn: " + secretDSN + "\n" + pg, nil, -1, "settings.dsn", 2},
		{"table in settings with sources", "settings:\n  table: x\n" + pg, nil, -1, "settings.table", 2},
		{"-dsn with sources", pg, []string{"-dsn", secretDSN}, -1, "-dsn", 0},
		{"-dsn-file with sources", pg, []string{"-dsn-file", empty}, -1, "-dsn-file", 0},
		{"-table with sources", pg, []string{"-table", "outbox"}, -1, "-table", 0},
		{"-dialect with sources", pg, []string{"-dialect", "mysql"}, -1, "-dialect", 0},
		{"no name", "sources:\n  - dialect: sqlite\n    dsn: file:x.db\n    tables: [outbox]\n", nil, 0, "name", 2},
		{"bad name", "sources:\n  - name: a b\n", nil, 0, "name", 2},
		{"duplicate names", pg + "  - name: main\n    dialect: sqlite\n    dsn: file:x.db\n    tables: [outbox]\n", nil, 1, "name", 6},
		{"no dialect", "sources:\n  - name: main\n", nil, 0, "dialect", 2},
		{"unknown dialect", "sources:\n  - name: main\n    dialect: oracle\n", nil, 0, "dialect", 3},
		{"dsn and dsn_file", head + "    dsn_file: " + empty + "\n", nil, 0, "dsn_file", 5},
		{"no dsn", "sources:\n  - name: main\n    dialect: sqlite\n    tables: [outbox]\n", nil, 0, "dsn", 2},
		{"missing dsn_file", "sources:\n  - name: main\n    dialect: sqlite\n    dsn_file: nope\n", nil, 0, "dsn_file", 4},
		{"empty dsn_file", "sources:\n  - name: main\n    dialect: sqlite\n    dsn_file: " + empty + "\n", nil, 0, "dsn_file", 4},
		{"no tables and no patterns", head, nil, 0, "tables", 2},
		{"empty tables", head + "    tables: []\n    patterns: []\n", nil, 0, "tables", 5},
		{"bad table", head + "    tables: [public.outbox, \"bad table\"]\n", nil, 0, "tables[1]", 5},
		{"empty table", head + "    tables:\n      - public.outbox\n      - ''\n", nil, 0, "tables[1]", 7},
		{"table twice", head + "    tables:\n      - public.outbox\n      - public.outbox\n", nil, 0, "tables[1]", 7},
		{"bad pattern", head + "    patterns: [\"tenant_*.out;box\"]\n", nil, 0, "patterns[0]", 5},
		{"empty pattern", head + "    patterns: [\"\"]\n", nil, 0, "patterns[0]", 5},
		{"pattern twice", head + "    patterns: [\"t_*.outbox\", \"t_*.outbox\"]\n", nil, 0, "patterns[1]", 5},
		{"topic prefix with nats", pg + "    topic_prefix: t\n", nil, 0, "topic_prefix", 6},
		{"exchange with nats", pg + "    exchange: ev\n", nil, 0, "exchange", 6},
		{"subject prefix with kafka", pg + "    subject_prefix: s\n", []string{"-broker", "kafka", "-kafka", "k:9092"}, 0, "subject_prefix", 6},
		{"bad subject prefix", pg + "    subject_prefix: a.>\n", nil, 0, "subject_prefix", 6},
		{"dead letter under the prefix", pg + "    subject_prefix: ev\n", []string{"-dead-letter", "ev.dead"}, 0, "subject_prefix", 6},
		{"bad topic prefix", pg + "    topic_prefix: bad topic\n", []string{"-broker", "kafka", "-kafka", "k:9092"}, 0, "topic_prefix", 6},
		{"no exchange", pg, []string{"-broker", "rabbitmq", "-amqp", "amqp://h/"}, 0, "exchange", 2},
		{"bad exchange", pg + "    exchange: " + strings.Repeat("x", 256) + "\n", []string{"-broker", "rabbitmq", "-amqp", "amqp://h/"}, 0, "exchange", 6},
		{"pg wake on sqlite", "sources:\n  - name: lite\n    dialect: sqlite\n    dsn: file:x.db\n    tables: [outbox]\n", []string{"-wake", "pg"}, -1, "-wake", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := tc.args
			if !slices.Contains(args, "-config") {
				args = append([]string{"-config", writeConfig(t, tc.file)}, args...)
			}
			_, err := parseFlags(args, envOf(nil), io.Discard)
			if !errors.Is(err, errUsage) {
				t.Fatalf("err = %v, want a usage error", err)
			}
			if strings.Contains(err.Error(), "s3cret") {
				t.Fatalf("the error quotes the DSN: %v", err)
			}
			if strings.HasPrefix(tc.field, "-") {
				var fe *flagError
				if !errors.As(err, &fe) || fe.Flag != tc.field {
					t.Fatalf("err = %v, want a %s *flagError", err, tc.field)
				}
				return
			}
			var ce *configError
			if !errors.As(err, &ce) {
				t.Fatalf("err = %v (%T), want a *configError", err, err)
			}
			if ce.Source != tc.source || ce.Field != tc.field || tc.line != 0 && ce.Line != tc.line {
				t.Fatalf("err = %v: source %d field %q line %d, want %d %q %d", err, ce.Source, ce.Field, ce.Line, tc.source, tc.field, tc.line)
			}
			if !strings.Contains(err.Error(), filepath.Base(args[1])) {
				t.Fatalf("err = %v does not name the file", err)
			}
		})
	}
}
