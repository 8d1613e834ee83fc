package redact

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestSecretsHidesPasswordsOfMalformedDSNs(t *testing.T) {
	const pw = `p%zz"S#E@C/R?ET`
	cases := []string{
		"postgres://u:" + pw + "@host:5432/db?sslmode=disable",
		"nats://u:" + pw + "@host:42x2",
		"amqp://guest:" + pw + "@127.0.0.1:5672/",
		"root:" + pw + "@tcp(127.0.0.1:3306)/test",
		"host=h user=u password=" + pw + " dbname=d",
		"host=h user=u password='" + pw + "' dbname=d",
	}
	for _, dsn := range cases {
		t.Run(dsn, func(t *testing.T) {
			// What drivers and url.Parse print around a DSN: quoted,
			// escaped, or cut at the password.
			texts := []string{
				dsn,
				fmt.Sprintf("parse %q: invalid URL escape", dsn),
				"connect: " + dsn + ": refused",
				fmt.Sprintf("password %q rejected", pw),
			}
			sec := Secrets(dsn)
			for _, text := range texts {
				got := String(text, sec...)
				if strings.Contains(got, "S#E@C") || strings.Contains(got, "zz") {
					t.Errorf("secret left in %q", got)
				}
			}
		})
	}
}

func TestSecretsWithoutPassword(t *testing.T) {
	// Without a password only the DSN itself (in its escaped forms) is
	// secret: nothing shorter, which would blank unrelated text.
	got := Secrets("postgres://u@host/db")
	if len(got) == 0 || got[len(got)-1] != "postgres://u@host/db" {
		t.Fatalf("Secrets = %q, want the DSN last", got)
	}
	for _, s := range got {
		if !strings.Contains(s, "host") {
			t.Errorf("Secrets holds %q, not a form of the DSN", s)
		}
	}
	if Secrets("") != nil {
		t.Fatal("Secrets of an empty string must be empty")
	}
}

func TestErrorKeepsChain(t *testing.T) {
	base := errors.New("boom")
	err := Error(fmt.Errorf("open postgres://u:hunter2@h/db: %w", base), Secrets("postgres://u:hunter2@h/db")...)
	if !errors.Is(err, base) {
		t.Fatal("the chain is lost")
	}
	if strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("secret in %q", err)
	}
	if !Is(err) {
		t.Fatal("Is reports false for a redacted error")
	}
	if Error(nil, "x") != nil {
		t.Fatal("Error(nil) must be nil")
	}
}

// TestSecretsHidesPasswordCutByURLParse: url.Parse reads a URL only up to
// '#' and its authority only up to '/' or '?': the error then quotes the
// password's start alone, which is hidden too.
func TestSecretsHidesPasswordCutByURLParse(t *testing.T) {
	for _, c := range []struct{ dsn, text, piece string }{
		{`postgres://admin:Qx7%zzK#wV9@rTq"dJ4@127.0.0.1:1/db`, `parse "postgres://admin:Qx7%zzK": invalid port ":Qx7%zzK" after host`, "Qx7%zzK"},
		{`postgres://admin:Hun7er?x@h/db`, `parse "postgres://admin:Hun7er?x@h/db": invalid port ":Hun7er" after host`, "Hun7er"},
		{`postgres://admin:Sec/ret@h/db`, `invalid port ":Sec" after host`, `":Sec"`},
	} {
		got := String(c.text, Secrets(c.dsn)...)
		if strings.Contains(got, c.piece) {
			t.Errorf("Secrets(%q) leaves %q in %q", c.dsn, c.piece, got)
		}
	}
}
