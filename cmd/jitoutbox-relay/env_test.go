package main

import (
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestEnvSetsEveryFlag: every flag has a variable, named in -h, that sets
// it; the command line wins over it.
func TestEnvSetsEveryFlag(t *testing.T) {
	var help strings.Builder
	if _, err := parseFlags([]string{"-h"}, envOf(nil), &help); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("-h: err = %v", err)
	}
	// Every flag is listed with its variable.
	n := 0
	for _, line := range strings.Split(help.String(), "\n") {
		name, ok := strings.CutPrefix(line, "  -")
		if !ok {
			continue
		}
		name, _, _ = strings.Cut(name, " ")
		n++
		if !strings.Contains(help.String(), "[$"+envName(name)+"]") {
			t.Errorf("-h does not name $%s for -%s", envName(name), name)
		}
	}
	if n < 35 {
		t.Fatalf("-h lists %d flags:\n%s", n, help.String())
	}

	env := envOf(map[string]string{
		"JITOUTBOX_DIALECT": "sqlite", "JITOUTBOX_DSN": "file:env.db", "JITOUTBOX_BATCH": "7",
		"JITOUTBOX_POLL": "3s", "JITOUTBOX_MIGRATE": "true", "JITOUTBOX_OWNER": "pod-0",
		"JITOUTBOX_WAKE": "none", "JITOUTBOX_LOG_FORMAT": "text", "JITOUTBOX_METRICS_ADDR": ":9090",
		envNATSURL: "nats://env:4222",
	})
	c, err := parseFlags(nil, env, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.dialect != "sqlite" || c.dsn != "file:env.db" || c.batch != 7 || c.poll != 3*time.Second || !c.migrate ||
		c.owner != "pod-0" || c.wake != "none" || c.logFormat != "text" || c.metricsAddr != ":9090" || c.natsURL != "nats://env:4222" {
		t.Fatalf("from the environment: %+v", c)
	}
	c, err = parseFlags([]string{"-dsn", "file:flag.db", "-batch", "9", "-nats", "nats://flag:1", "-metrics-addr", "127.0.0.1:1"}, env, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.dsn != "file:flag.db" || c.batch != 9 || c.natsURL != "nats://flag:1" || c.metricsAddr != "127.0.0.1:1" || c.poll != 3*time.Second {
		t.Fatalf("flags must win over variables: %+v", c)
	}
	// A bad value in a variable names the variable.
	_, err = parseFlags(nil, envOf(map[string]string{"JITOUTBOX_DSN": "x", "JITOUTBOX_BATCH": "many"}), io.Discard)
	var fe *flagError
	if !errors.As(err, &fe) || fe.Flag != "$JITOUTBOX_BATCH" {
		t.Fatalf("bad $JITOUTBOX_BATCH: err = %v", err)
	}
	// A variable of another broker's flag is ignored (the environment is
	// shared), a flag is not.
	if _, err := parseFlags(nil, envOf(map[string]string{"JITOUTBOX_DSN": "x", "JITOUTBOX_EXCHANGE": "ev"}), io.Discard); err != nil {
		t.Fatalf("$JITOUTBOX_EXCHANGE with -broker nats: %v", err)
	}
}

// TestSecretFiles: -dsn-file and its variable read the DSN as Kubernetes
// mounts a Secret (trailing newline trimmed); the command line wins as a
// whole; value and file at one level, a missing or empty file, are errors
// that name the flag and never the secret.
func TestSecretFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	dsnFile := write("dsn", "postgres://u:pw%zzSECRET@db/x\n")
	crlf := write("dsn-crlf", "postgres://u:crlf@db/x\r\n")
	tokenFile := write("token", "0123456789abcdef0123\n")
	natsFile := write("nats", "nats://u:natsSECRET@n:4222")
	empty := write("empty", "\n")

	c, err := parseFlags([]string{"-dsn-file", dsnFile, "-nats-file", natsFile, "-metrics-addr", ":9090", "-metrics-token-file", tokenFile}, envOf(nil), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.dsn != "postgres://u:pw%zzSECRET@db/x" || c.natsURL != "nats://u:natsSECRET@n:4222" || c.metricsToken != "0123456789abcdef0123" {
		t.Fatalf("from files: dsn %q nats %q token %q", c.dsn, c.natsURL, c.metricsToken)
	}
	if c, err = parseFlags([]string{"-dsn-file", crlf}, envOf(nil), io.Discard); err != nil || c.dsn != "postgres://u:crlf@db/x" {
		t.Fatalf("CRLF file: dsn %q, err %v", c.dsn, err)
	}
	// The variable of the file, under the command line's -dsn.
	env := envOf(map[string]string{"JITOUTBOX_DSN_FILE": dsnFile, envPostgresDSN: "postgres://legacy"})
	if c, err = parseFlags(nil, env, io.Discard); err != nil || c.dsn != "postgres://u:pw%zzSECRET@db/x" {
		t.Fatalf("$JITOUTBOX_DSN_FILE: dsn %q, err %v", c.dsn, err)
	}
	if c, err = parseFlags([]string{"-dsn", "postgres://flag"}, env, io.Discard); err != nil || c.dsn != "postgres://flag" {
		t.Fatalf("-dsn over $JITOUTBOX_DSN_FILE: dsn %q, err %v", c.dsn, err)
	}
	env = envOf(map[string]string{"JITOUTBOX_DSN": "postgres://env"})
	if c, err = parseFlags([]string{"-dsn-file", crlf}, env, io.Discard); err != nil || c.dsn != "postgres://u:crlf@db/x" {
		t.Fatalf("-dsn-file over $JITOUTBOX_DSN: dsn %q, err %v", c.dsn, err)
	}

	for _, tc := range []struct {
		args []string
		env  map[string]string
		flag string
	}{
		{[]string{"-dsn", "postgres://u:pw@h/x", "-dsn-file", dsnFile}, nil, "-dsn-file"},
		{nil, map[string]string{"JITOUTBOX_DSN": "postgres://u:pw@h/x", "JITOUTBOX_DSN_FILE": dsnFile}, "-dsn-file"},
		{[]string{"-dsn-file", filepath.Join(dir, "missing")}, nil, "-dsn-file"},
		{[]string{"-dsn-file", empty}, nil, "-dsn-file"},
		{[]string{"-dsn", "x", "-metrics-addr", ":1", "-metrics-token", "short"}, nil, "-metrics-token"},
		{[]string{"-dsn", "x", "-metrics-token-file", tokenFile}, nil, "-metrics-token"},
		{[]string{"-dsn", "x", "-metrics-addr", "9090"}, nil, "-metrics-addr"},
	} {
		_, err := parseFlags(tc.args, envOf(tc.env), io.Discard)
		var fe *flagError
		if !errors.As(err, &fe) || fe.Flag != tc.flag {
			t.Errorf("%q %v: err = %v, want a %s error", tc.args, tc.env, err, tc.flag)
			continue
		}
		if strings.Contains(err.Error(), "SECRET") || strings.Contains(err.Error(), "pw") {
			t.Errorf("%q: the error quotes the secret: %v", tc.args, err)
		}
	}
}
