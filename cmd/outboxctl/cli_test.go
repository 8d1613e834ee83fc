package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/internal/testdb"
)

func TestSafe(t *testing.T) {
	for in, want := range map[string]string{
		"plain text é€ 日本":      "plain text é€ 日本",
		"\x1b[2J\x1b[H":         `\x1b[2J\x1b[H`,
		"\x1b]0;owned\x07":      `\x1b]0;owned\x07`,
		"a\nb\rc\td":            `a\nb\rc\td`,
		"nul\x00del\x7f":        `nul\x00del\x7f`,
		"c1 \u009b31m \u0085":   `c1 \u009b31m \u0085`,
		"bad utf-8 \x9b\xff":    `bad utf-8 \x9b\xff`,
		"bidi \u202eevil\u2066": `bidi \u202eevil\u2066`,
		"":                      "",
	} {
		if got := safe(in); got != want {
			t.Errorf("safe(%q) = %q, want %q", in, got, want)
		}
	}
	doc := []byte("{\"e\": \"\u009b\x7f\u202e ok é\"}\n")
	got := safeJSON(doc)
	var v map[string]string
	if err := json.Unmarshal(got, &v); err != nil || v["e"] != "\u009b\x7f\u202e ok é" {
		t.Fatalf("safeJSON changed the value: %q (%v)", got, err)
	}
	if bytes.ContainsAny(got, "\u009b\x7f\u202e") {
		t.Fatalf("safeJSON left an unsafe rune: %q", got)
	}
}

// hostile is a last_error and an aggregate id that would clear the
// operator's screen, retitle the window, or recolour through C1 CSI.
const (
	hostileErr = "broker said \x1b[2J\x1b[H\u009b31m\x7f\rdone"
	hostileAgg = "evil\x1b]0;owned\x07"
)

// noControls fails when out holds a C0 control other than newline or tab
// (tabwriter), DEL, or a C1 control.
func noControls(t *testing.T, what, out string) {
	t.Helper()
	for _, r := range out {
		if (r < 0x20 && r != '\n') || r == 0x7f || (r >= 0x80 && r <= 0x9f) {
			t.Fatalf("%s prints the control %U raw:\n%q", what, r, out)
		}
	}
}

// TestCLIEscapesRowData: list, dead, blocked, status and show print the
// controls of row data escaped; --json keeps the exact value, escaped.
func TestCLIEscapesRowData(t *testing.T) {
	consoleTargets(t, func(t *testing.T, tgt testdb.Target) {
		db, d, g, gj := migratedTable(t, tgt)
		ids := insertRaw(t, db, d, hostileAgg)
		now := time.Now()
		sess := ownAll(t, db, d, "relay\x1b[31m")
		recs := readAll(t, db, d, now)
		fail(t, db, d, sess, recs[0], hostileErr, now, true)
		for _, args := range [][]string{
			{"list", "-state", "dead"}, {"dead"}, {"blocked"}, {"status"}, {"show", ids[0]},
		} {
			var out, errOut bytes.Buffer
			if err := run(t.Context(), append(append([]string{}, g...), args...), &out, &errOut); err != nil {
				t.Fatalf("%q: %v", args, err)
			}
			noControls(t, strings.Join(args, " "), out.String())
			if !strings.Contains(out.String(), `\x1b[2J`) && args[0] != "status" {
				t.Fatalf("%q does not show the escaped error:\n%s", args, out.String())
			}
			if !strings.Contains(out.String(), `evil\x1b]0;owned\x07`) {
				t.Fatalf("%q does not show the escaped aggregate:\n%s", args, out.String())
			}
			if args[0] == "status" && !strings.Contains(out.String(), `relay\x1b[31m`) {
				t.Fatalf("status does not show the escaped relay name:\n%s", out.String())
			}
		}
		var out bytes.Buffer
		if err := run(t.Context(), append(append([]string{}, gj...), "dead"), &out, &out); err != nil {
			t.Fatal(err)
		}
		noControls(t, "dead -json", out.String())
		var list struct {
			Events []eventJSON `json:"events"`
		}
		if err := json.Unmarshal(out.Bytes(), &list); err != nil || len(list.Events) != 1 ||
			list.Events[0].LastError != hostileErr || list.Events[0].AggregateID != hostileAgg || list.Events[0].PayloadBytes != 2 {
			t.Fatalf("dead -json = %+v, %v; want the exact error and aggregate and a 2-byte payload", list, err)
		}
		var bl struct {
			Blockers []blockerJSON `json:"blockers"`
		}
		out.Reset()
		if err := run(t.Context(), append(append([]string{}, gj...), "blocked"), &out, &out); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(out.Bytes(), &bl); err != nil || len(bl.Blockers) != 1 || bl.Blockers[0].Head == nil ||
			bl.Blockers[0].Head.ID != ids[0] || bl.Blockers[0].Reason != "dead" {
			t.Fatalf("blocked -json = %+v, %v", bl, err)
		}
	})
}

// insertRaw writes one event per aggregate id with the dialect itself, as
// another writer could: txoutbox refuses control characters in ids.
func insertRaw(t *testing.T, db *sql.DB, d dialects.Dialect, aggIDs ...string) []string {
	t.Helper()
	n, err := d.Partitions(t.Context(), db)
	if err != nil {
		t.Fatal(err)
	}
	var evs []dialects.Event
	var ids []string
	for _, a := range aggIDs {
		id := uuid.Must(uuid.NewV7()).String()
		ids = append(ids, id)
		evs = append(evs, dialects.Event{ID: id, AggregateType: "order", AggregateID: a, EventType: "order.changed",
			Payload: []byte(`{}`), ContentType: "application/json", CreatedAt: time.Now().UTC(),
			Partition: dialects.PartitionOf("order", a, n)})
	}
	if err := d.Insert(t.Context(), db, evs); err != nil {
		t.Fatal(err)
	}
	return ids
}

// TestPrintError: an error that quotes row data prints escaped.
func TestPrintError(t *testing.T) {
	var out bytes.Buffer
	printError(&out, errors.New("pq: bad \x1b[2J value \u009b"))
	if out.String() != "outboxctl: pq: bad \\x1b[2J value \\u009b\n" {
		t.Fatalf("printError = %q", out.String())
	}
}

// helpText is what outboxctl -h prints.
func helpText(t *testing.T) string {
	t.Helper()
	var out, errOut bytes.Buffer
	if err := runEnv(t.Context(), []string{"-h"}, &out, &errOut, func(string) string { return "" }); err != nil {
		t.Fatalf("outboxctl -h: %v", err)
	}
	return out.String() + errOut.String()
}

// TestHelpListsEveryCommand: outboxctl -h lists every command, and every
// "outboxctl <command>" the docs and the alert runbooks name exists.
func TestHelpListsEveryCommand(t *testing.T) {
	help := helpText(t)
	listed := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^  ([a-z]+)\b`).FindAllStringSubmatch(help, -1) {
		listed[m[1]] = true
	}
	for _, cmd := range []string{"migrate", "status", "list", "dead", "blocked", "show", "requeue", "skip", "purge", "serve", "help"} {
		if !listed[cmd] {
			t.Errorf("outboxctl -h does not list %q:\n%s", cmd, help)
		}
		if _, ok := lookup(cmd); !ok && cmd != "help" {
			t.Errorf("outboxctl -h lists %q, which is no command", cmd)
		}
	}
	for cmd := range listed {
		if _, ok := lookup(cmd); !ok && cmd != "help" {
			t.Errorf("outboxctl -h lists %q, which is no command", cmd)
		}
	}

	files, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, "../../README.md", "../../DEVELOPERS.md", "../../deploy/prometheus/alerts.yml")
	// "outboxctl", its global flags, then the command.
	named := regexp.MustCompile("outboxctl((?:\\s+(?:-dsn|-dialect|-table)\\s+\\S+|\\s+--?json)*)\\s+`?([a-z][a-z-]*)")
	found := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range named.FindAllStringSubmatch(string(b), -1) {
			found++
			if !listed[m[2]] {
				t.Errorf("%s names %q, which outboxctl -h does not list", f, "outboxctl "+m[2])
			}
		}
	}
	if found < 10 {
		t.Fatalf("found %d outboxctl commands in the docs: the pattern missed them", found)
	}
}

// TestMigratePlan: migrate -plan lists the migrations migrate would apply
// (their SQL with -v) and changes nothing; after migrate, none.
func TestMigratePlan(t *testing.T) {
	consoleTargets(t, func(t *testing.T, tgt testdb.Target) {
		db, dsn := tgt.Open(t)
		tbl := uniqueTable()
		g := []string{"-dsn", dsn, "-dialect", tgt.Dialect, "-table", tbl}
		var plan struct {
			Pending []migrationJSON `json:"pending"`
		}
		ctl(t, &plan, append(g, "-json", "migrate", "-plan")...)
		if len(plan.Pending) < 3 || plan.Pending[0].Version != 1 || plan.Pending[0].Name != "outbox" || plan.Pending[0].SQL != "" {
			t.Fatalf("migrate -plan on an empty database = %+v", plan)
		}
		var out bytes.Buffer
		if err := run(t.Context(), append(g, "migrate", "-plan", "-v"), &out, &out); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), "001_outbox") || !strings.Contains(out.String(), "CREATE TABLE") ||
			!strings.Contains(out.String(), tbl) || !strings.Contains(out.String(), "step: fill-partitions") {
			t.Fatalf("migrate -plan -v:\n%s", out.String())
		}
		d, err := newDialect(tgt.Dialect, tbl)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := d.Stats(t.Context(), db); err == nil {
			t.Fatal("migrate -plan created the table")
		}
		ctl(t, nil, append(g, "migrate")...)
		if _, err := d.Stats(t.Context(), db); err != nil {
			t.Fatalf("migrate did not create the table: %v", err)
		}
		out.Reset()
		if err := run(t.Context(), append(g, "migrate", "-plan"), &out, &out); err != nil || !strings.Contains(out.String(), "nothing to migrate") {
			t.Fatalf("migrate -plan after migrate: %v\n%s", err, out.String())
		}
		if err := run(t.Context(), append(g, "migrate", "-v"), &out, &out); !errors.Is(err, errUsage) {
			t.Fatalf("migrate -v without -plan = %v, want a usage error", err)
		}
	})
}

// TestNoSecretInOutput: malformed DSNs whose passwords hold '%', '#', '@'
// and '"' never show the password, on stdout, stderr or in the error
// main prints, for every command that opens the database.
func TestNoSecretInOutput(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	const pw = `Qx7%zzK#wV9@rTq"dJ4`
	// A parse error may quote the DSN up to a '#' or '@': each piece
	// between the special characters is a secret too.
	secrets := []string{pw, "Qx7", "zzK", "wV9", "rTq", "dJ4"}
	for _, c := range []struct{ dialect, dsn string }{
		{"", "postgres://admin:" + pw + "@127.0.0.1:1/db?sslmode=disable&connect_timeout=2"},
		{"postgres", "postgres://admin:" + pw + "@127.0.0.1:1/db?sslmode=disable&connect_timeout=2"},
		{"postgres", "host=127.0.0.1 port=1 user=admin password='" + pw + "' dbname=db connect_timeout=2"},
		{"postgres", `host=127.0.0.1 port=1 password=` + pw + ` connect_timeout=2`},
		{"mysql", "admin:" + pw + "@tcp(127.0.0.1:1)/db?timeout=2s"},
		{"mysql", "admin:" + pw + "@tcp(127.0.0.1:1/db"},
		{"", "admin:" + pw + "@tcp(127.0.0.1:1)/db?timeout=2s"},
		{"sqlite", "file:/nonexistent/dir/" + pw + ".db?mode=ro"},
	} {
		for _, args := range [][]string{{"status"}, {"migrate", "-plan"}, {"dead"}, {"serve", "-addr", "127.0.0.1:0"}} {
			full := []string{"-dsn", c.dsn}
			if c.dialect != "" {
				full = append(full, "-dialect", c.dialect)
			}
			var out, errOut, printed bytes.Buffer
			err := runEnv(ctx, append(full, args...), &out, &errOut, func(string) string { return "" })
			if err == nil {
				t.Fatalf("%s %q on an unreachable database succeeded", c.dsn, args)
			}
			printError(&printed, err)
			for what, s := range map[string]string{"stdout": out.String(), "stderr": errOut.String(), "error": printed.String()} {
				for _, secret := range secrets {
					if strings.Contains(s, secret) {
						t.Errorf("dsn %q, %q: %s shows the password (%q):\n%s", c.dsn, args, what, secret, s)
					}
				}
			}
		}
	}
}
