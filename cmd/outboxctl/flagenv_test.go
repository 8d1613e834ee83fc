package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// envOf returns a getenv that reads only m.
func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// runWith runs outboxctl with args and the environment m, and returns its
// output (stdout and stderr) and error.
func runWith(t *testing.T, m map[string]string, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	err := runEnv(t.Context(), args, &out, &out, envOf(m))
	return out.String(), err
}

// hasTable reports whether the SQLite database at path has table tbl.
func hasTable(t *testing.T, path, tbl string) bool {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRowContext(t.Context(), "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?", tbl).Scan(&n); err != nil {
		return false // no such file
	}
	return n == 1
}

// TestEnvHelpNamesEveryVariable: every global flag and every flag of serve
// has a variable; outboxctl -h names each, and serve -h shows each next to
// its flag. Other commands' flags have none.
func TestEnvHelpNamesEveryVariable(t *testing.T) {
	fs := flag.NewFlagSet("", flag.ContinueOnError)
	new(globals).register(fs)
	serveFlags(fs)
	top := helpText(t)
	serveHelp, err := runWith(t, nil, "serve", "-h")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	fs.VisitAll(func(f *flag.Flag) {
		n++
		v := envName("serve", f.Name)
		if v == "" {
			t.Errorf("-%s has no variable", f.Name)
			return
		}
		if !strings.Contains(top, v) {
			t.Errorf("outboxctl -h does not name $%s (-%s):\n%s", v, f.Name, top)
		}
		if !strings.Contains(serveHelp, "[$"+v+"]") {
			t.Errorf("outboxctl serve -h does not name $%s for -%s", v, f.Name)
		}
	})
	if n != 15 {
		t.Fatalf("%d flags, want the 7 global ones and serve's 8", n)
	}
	if envName("serve", "token") != consoleTokenEnv || envName("list", "dsn-file") != "JITOUTBOX_DSN_FILE" {
		t.Fatalf("variables: token %s, dsn-file %s", envName("serve", "token"), envName("list", "dsn-file"))
	}
	listHelp, err := runWith(t, nil, "list", "-h")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(listHelp, "[$JITOUTBOX_TABLE]") || strings.Contains(listHelp, "LIMIT") || envName("list", "limit") != "" {
		t.Fatalf("list -h: the global flags' variables, none for list's own:\n%s", listHelp)
	}
}

// TestEnvSetsGlobalFlags: JITOUTBOX_DSN, _TABLE, _JSON, _DIALECT set the
// global flags; a flag on the command line wins over its variable; the
// dialects' variables still give the DSN; a bad value names its variable.
func TestEnvSetsGlobalFlags(t *testing.T) {
	dir := t.TempDir()
	envDB, flagDB := filepath.Join(dir, "env.db"), filepath.Join(dir, "flag.db")
	env := map[string]string{"JITOUTBOX_DSN": "file:" + envDB, "JITOUTBOX_TABLE": "env_outbox", "JITOUTBOX_JSON": "true"}
	out, err := runWith(t, env, "migrate")
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	var m struct{ Table string }
	if err := json.Unmarshal([]byte(out), &m); err != nil || m.Table != "env_outbox" || !hasTable(t, envDB, "env_outbox") {
		t.Fatalf("from the environment: %q (%v); env.db has env_outbox: %v", out, err, hasTable(t, envDB, "env_outbox"))
	}

	// The command line wins, before or after the command.
	out, err = runWith(t, env, "-dsn", "file:"+flagDB, "migrate", "-table", "flag_outbox")
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if !hasTable(t, flagDB, "flag_outbox") || hasTable(t, flagDB, "env_outbox") || hasTable(t, envDB, "flag_outbox") {
		t.Fatal("-dsn and -table did not win over JITOUTBOX_DSN and JITOUTBOX_TABLE")
	}

	// JITOUTBOX_DIALECT picks among the dialects' variables.
	env = map[string]string{"JITOUTBOX_DIALECT": "sqlite", "JITOUTBOX_SQLITE_DSN": "file:" + envDB,
		"JITOUTBOX_POSTGRES_DSN": "postgres://127.0.0.1:1/db", "JITOUTBOX_TABLE": "env_outbox", "JITOUTBOX_JSON": "1"}
	if out, err := runWith(t, env, "status"); err != nil || !strings.HasPrefix(out, "{") {
		t.Fatalf("JITOUTBOX_DIALECT with JITOUTBOX_SQLITE_DSN: %v: %s", err, out)
	}

	env["JITOUTBOX_JSON"] = "maybe"
	if _, err := runWith(t, env, "status"); !errors.Is(err, errUsage) || !strings.Contains(err.Error(), "$JITOUTBOX_JSON") {
		t.Fatalf("JITOUTBOX_JSON=maybe: %v, want a usage error naming the variable", err)
	}
}

// TestDSNFile: -dsn-file and JITOUTBOX_DSN_FILE read the DSN with the
// trailing newline trimmed; a DSN and its file at the same level is an
// error, the command line wins over the environment as a whole; an empty
// or missing file is an error.
func TestDSNFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a, b := filepath.Join(dir, "a.db"), filepath.Join(dir, "b.db")
	fileA := write("dsn-a", "file:"+a+"\n")
	fileB := write("dsn-b", "file:"+b+"\r\n")
	empty := write("empty", "\n")

	if out, err := runWith(t, nil, "-dsn-file", fileA, "migrate"); err != nil || !hasTable(t, a, "outbox") {
		t.Fatalf("-dsn-file: %v: %s", err, out)
	}
	if out, err := runWith(t, map[string]string{"JITOUTBOX_DSN_FILE": fileB}, "migrate", "-table", "from_env_file"); err != nil || !hasTable(t, b, "from_env_file") {
		t.Fatalf("JITOUTBOX_DSN_FILE (CRLF): %v: %s", err, out)
	}
	// The command line wins as a whole: a -dsn-file flag over
	// JITOUTBOX_DSN, a -dsn flag over JITOUTBOX_DSN_FILE.
	if out, err := runWith(t, map[string]string{"JITOUTBOX_DSN": "file:" + b}, "-dsn-file", fileA, "migrate", "-table", "cli_file"); err != nil ||
		!hasTable(t, a, "cli_file") || hasTable(t, b, "cli_file") {
		t.Fatalf("-dsn-file with JITOUTBOX_DSN: %v: %s", err, out)
	}
	if out, err := runWith(t, map[string]string{"JITOUTBOX_DSN_FILE": fileA}, "-dsn", "file:"+b, "migrate", "-table", "cli_dsn"); err != nil ||
		!hasTable(t, b, "cli_dsn") || hasTable(t, a, "cli_dsn") {
		t.Fatalf("-dsn with JITOUTBOX_DSN_FILE: %v: %s", err, out)
	}

	const secret = "postgres://u:fileSecret99@127.0.0.1:1/db"
	for _, c := range []struct {
		env  map[string]string
		args []string
		want string
	}{
		{nil, []string{"-dsn", secret, "-dsn-file", fileA, "status"}, "not both"},
		{map[string]string{"JITOUTBOX_DSN": secret, "JITOUTBOX_DSN_FILE": fileA}, []string{"status"}, "not both"},
		{nil, []string{"-dsn-file", empty, "status"}, "empty"},
		{nil, []string{"-dsn-file", filepath.Join(dir, "missing"), "status"}, "missing"},
	} {
		out, err := runWith(t, c.env, c.args...)
		if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v %q: %v, want a usage error with %q", c.env, c.args, err, c.want)
			continue
		}
		var printed bytes.Buffer
		printError(&printed, err)
		if strings.Contains(printed.String()+out, "fileSecret99") {
			t.Errorf("%v %q shows the DSN: %s%s", c.env, c.args, printed.String(), out)
		}
	}
}

// TestEnvSetsServeFlags: JITOUTBOX_CONSOLE_* set serve's flags, the
// command line wins; the token comes from JITOUTBOX_CONSOLE_TOKEN or
// _TOKEN_FILE (both: an error; a -token-file flag wins over both) and a
// token from the environment draws no "shows in ps" warning. validate's
// errors tell which value was taken, so nothing listens.
func TestEnvSetsServeFlags(t *testing.T) {
	dir := t.TempDir()
	dsn := "file:" + filepath.Join(dir, "console.db")
	short := filepath.Join(dir, "short")
	if err := os.WriteFile(short, []byte("short\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	long := filepath.Join(dir, "long")
	if err := os.WriteFile(long, []byte("file-token-0123456789\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	const envToken = "env-token-0123456789"
	for _, c := range []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"limit from the variable", map[string]string{"JITOUTBOX_CONSOLE_LIMIT": "5000"}, nil, "between 1 and 1000"},
		{"-limit wins; addr from the variable", map[string]string{"JITOUTBOX_CONSOLE_LIMIT": "5000", "JITOUTBOX_CONSOLE_ADDR": "0.0.0.0:0"},
			[]string{"-limit", "10"}, errNeedToken.Error()},
		{"-addr wins", map[string]string{"JITOUTBOX_CONSOLE_ADDR": "0.0.0.0:0", "JITOUTBOX_CONSOLE_REFRESH": "-1s"},
			[]string{"-addr", "127.0.0.1:0"}, "-refresh must not be negative"},
		{"token from the variable", map[string]string{"JITOUTBOX_CONSOLE_ADDR": "0.0.0.0:0", consoleTokenEnv: "short"}, nil, "at least 16"},
		{"token file from the variable", map[string]string{"JITOUTBOX_CONSOLE_ADDR": "0.0.0.0:0", "JITOUTBOX_CONSOLE_TOKEN_FILE": short}, nil, "at least 16"},
		{"token and its file", map[string]string{consoleTokenEnv: envToken, "JITOUTBOX_CONSOLE_TOKEN_FILE": long}, nil, "not both"},
		{"-token-file wins over the variables", map[string]string{consoleTokenEnv: envToken, "JITOUTBOX_CONSOLE_TOKEN_FILE": long,
			"JITOUTBOX_CONSOLE_ADDR": "0.0.0.0:0"}, []string{"-token-file", short}, "at least 16"},
		{"token from the environment, no warning", map[string]string{consoleTokenEnv: envToken, "JITOUTBOX_CONSOLE_ADDR": "0.0.0.0:0",
			"JITOUTBOX_CONSOLE_RETENTION": "-1h"}, nil, "-retention must not be negative"},
	} {
		out, err := runWith(t, c.env, append([]string{"-dsn", dsn, "serve"}, c.args...)...)
		if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want a usage error with %q", c.name, err, c.want)
		}
		if strings.Contains(out, "process list") || strings.Contains(out+err.Error(), envToken) {
			t.Errorf("%s: output %q", c.name, out)
		}
	}
	// The same token on the command line warns.
	out, err := runWith(t, nil, "-dsn", dsn, "serve", "-token", envToken, "-limit", "0")
	if err == nil || !strings.Contains(out, "process list") || strings.Contains(out, envToken) {
		t.Fatalf("-token: %v; output %q (want a warning without the token)", err, out)
	}
}

// TestNoSecretFromEnvInOutput: a DSN from -dsn-file, JITOUTBOX_DSN or
// JITOUTBOX_DSN_FILE, malformed or unreachable, never shows its password,
// on stdout, stderr or in the error main prints (TestNoSecretInOutput does
// the same for -dsn).
func TestNoSecretFromEnvInOutput(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	const pw = `Qx7%zzK#wV9@rTq"dJ4`
	secrets := []string{pw, "Qx7", "zzK", "wV9", "rTq", "dJ4"}
	dir := t.TempDir()
	for i, dsn := range []string{
		"postgres://admin:" + pw + "@127.0.0.1:1/db?sslmode=disable&connect_timeout=2",
		"host=127.0.0.1 port=1 user=admin password='" + pw + "' dbname=db connect_timeout=2",
		"admin:" + pw + "@tcp(127.0.0.1:1/db",
		"admin:" + pw + "@tcp(127.0.0.1:1)/db?timeout=2s",
	} {
		file := filepath.Join(dir, "dsn"+string(rune('a'+i)))
		if err := os.WriteFile(file, []byte(dsn+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		for _, way := range []struct {
			env  map[string]string
			args []string
		}{
			{nil, []string{"-dsn-file", file}},
			{map[string]string{"JITOUTBOX_DSN": dsn}, nil},
			{map[string]string{"JITOUTBOX_DSN_FILE": file}, nil},
		} {
			for _, cmd := range [][]string{{"status"}, {"serve", "-addr", "127.0.0.1:0"}} {
				var out, errOut, printed bytes.Buffer
				err := runEnv(ctx, append(append([]string{}, way.args...), cmd...), &out, &errOut, envOf(way.env))
				if err == nil {
					t.Fatalf("%s %q on an unreachable database succeeded", dsn, cmd)
				}
				printError(&printed, err)
				for what, s := range map[string]string{"stdout": out.String(), "stderr": errOut.String(), "error": printed.String()} {
					for _, secret := range secrets {
						if strings.Contains(s, secret) {
							t.Errorf("dsn %q via %v %q, %q: %s shows the password (%q):\n%s", dsn, way.env, way.args, cmd, what, secret, s)
						}
					}
				}
			}
		}
	}
}
