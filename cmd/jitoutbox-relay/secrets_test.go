package main

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/jitoutbox/jitoutbox/internal/e2e/relayproc"
	"github.com/jitoutbox/jitoutbox/internal/redact"
)

// leakPasswords are passwords with the characters that make drivers and
// url.Parse quote a DSN back ('%' not followed by hex, '#', '@', '"'), and
// characters JSON escapes ('<', '&'). Each holds "SECRET" whole, so a test
// checks one marker in every form the password may be printed.
var leakPasswords = []string{`SECRET%zz1`, `SECRET#2x`, `x@SECRET@3`, `SECRET"4x`, `SECRET<&5`, `S%zzSECRET#@"6`}

// TestRedactHandler: a secret in a message, a string, an error, a value
// printed with %v, a group or a With attribute is replaced before the JSON
// encoder escapes it; values without one keep their kind.
func TestRedactHandler(t *testing.T) {
	for _, pw := range leakPasswords {
		dsn := "postgres://u:" + pw + "@db:5432/x"
		var buf bytes.Buffer
		log := newLogger(config{dsn: dsn, metricsToken: "tok-0123456789abcdef"}, &buf).With("dsn_again", dsn)
		log.Warn("connect "+dsn+" failed", "err", fmt.Errorf("parse %q: invalid URL escape", dsn), "n", 3,
			"list", []string{pw}, slog.Group("g", "pw", pw), "tok", "tok-0123456789abcdef")
		out := buf.String()
		if strings.Contains(out, "SECRET") || strings.Contains(out, "tok-0123") {
			t.Errorf("%q: the log holds the secret: %s", pw, out)
		}
		if !strings.Contains(out, `"n":3`) || !strings.Contains(out, redact.Mask) {
			t.Errorf("%q: the number must stay a number and the secret become %s: %s", pw, redact.Mask, out)
		}
	}
}

// TestBinaryPrintsNoSecret runs the built relay with DSNs and broker URLs
// whose passwords hold every awkward character: start-up errors (a NATS
// URL that does not parse, a MySQL DSN that does not parse) and the
// errors logged on every retry (a PostgreSQL DSN, URL or key=value, that
// lib/pq cannot parse and quotes in its error; an unreachable MariaDB) and
// start-up errors (a NATS or RabbitMQ URL, a MySQL DSN, that does not
// parse) show the password nowhere in stdout or stderr.
func TestBinaryPrintsNoSecret(t *testing.T) {
	bin := relayproc.BuildT(t)
	type tc struct {
		name string
		args []string
		// exits: a start-up error; else wait for a retried failure's line.
		exits bool
		wait  string
	}
	var cases []tc
	for i, pw := range leakPasswords {
		mysqlDSN := "root:" + pw + "@tcp(127.0.0.1:1)/test"
		_, perr := gomysql.ParseDSN(mysqlDSN)
		cases = append(cases,
			tc{fmt.Sprintf("nats-url-%d", i), []string{"-dialect", "sqlite", "-dsn", "file:" + t.TempDir() + "/x.db",
				"-nats", "nats://u:" + pw + "@127.0.0.1:42x2"}, true, ""},
			tc{fmt.Sprintf("amqp-url-%d", i), []string{"-dialect", "sqlite", "-dsn", "file:" + t.TempDir() + "/x.db",
				"-broker", "rabbitmq", "-exchange", "ev", "-amqp", "amqp://guest:" + pw + "@127.0.0.1:56x2/"}, true, ""},
			tc{fmt.Sprintf("postgres-dsn-%d", i), []string{"-dsn", "postgres://u:" + pw + "@127.0.0.1:1/db?sslmode=disable",
				"-nats", "nats://127.0.0.1:1", "-publisher", "core"}, false, "retrying"},
			tc{fmt.Sprintf("postgres-kv-%d", i), []string{"-dsn", "host=127.0.0.1 port=1 user=u password='" + pw + "' dbname=x",
				"-wake", "none", "-nats", "nats://127.0.0.1:1", "-publisher", "core"}, false, "retrying"},
			// A MySQL DSN the driver cannot parse is a start-up error.
			tc{fmt.Sprintf("mysql-dsn-%d", i), []string{"-dialect", "mysql", "-dsn", mysqlDSN,
				"-broker", "rabbitmq", "-exchange", "ev", "-amqp", "amqp://guest:guest@127.0.0.1:1/"}, perr != nil, "retrying"},
		)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := relayproc.Start(t, bin, append(c.args, "-log-level", "debug")...)
			if c.exits {
				select {
				case <-p.Done():
				case <-time.After(30 * time.Second):
					t.Fatal("the relay did not exit on a start-up error")
				}
				if p.Err() == nil {
					t.Fatalf("exit status 0; output:\n%s", p.Log.String())
				}
			} else if err := p.Log.Wait(30*time.Second, 1, c.wait); err != nil {
				t.Fatalf("%v\n%s", err, p.Log.String())
			}
			if err := p.Stop(10 * time.Second); err != nil && !errors.Is(err, relayproc.ErrTimeout) {
				t.Logf("stop: %v", err)
			}
			out := p.Log.String()
			if strings.Contains(out, "SECRET") {
				t.Fatalf("the output holds the password:\n%s", out)
			}
			if strings.TrimSpace(out) == "" {
				t.Fatal("no output at all: nothing was checked")
			}
		})
	}
}
