package docscheck

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// moduleRoot is the directory of go.mod above this package.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

// TestDocsNameWhatExists runs the check over the repository's docs: every
// Go name, SQL file and link path they give exists.
func TestDocsNameWhatExists(t *testing.T) {
	root := moduleRoot(t)
	docs, err := DocFiles(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) < 5 {
		t.Fatalf("found only %v: the doc list is wrong", docs)
	}
	ix, err := LoadIndex(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, pkg := range []string{"txoutbox", "relay", "dialects", "jitotel", "inbox"} {
		if !ix.Has(pkg) {
			t.Fatalf("package %s not indexed", pkg)
		}
	}
	problems, err := Check(root, docs, ix)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
}

// TestCheckFindsDrift builds a small module whose doc names things that
// exist and things that do not, and checks that exactly the latter are
// reported.
func TestCheckFindsDrift(t *testing.T) {
	root := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/m\n")
	write("relay/relay.go", `package relay

import "database/sql"

type Config struct{ Hooks int }
type Hooks interface{ BatchEnd() }
type Wrapped struct{ *sql.Tx }
type Relay struct{}

func (r *Relay) Run() {}
func New() *Relay    { return nil }

const DefaultBatch = 1
`)
	write("dialects/postgres/sql/read.sql", "SELECT 1")
	write("cmd/outboxctl/run.go", `package main

func lookup(name string) bool {
	switch name {
	case "status", "list":
		return true
	}
	return false
}
`)
	write("docs/other.md", "# Other\n\n## The `Run` loop\n")
	write("README.md", "# M\n\n"+strings.Join([]string{
		"Good: `relay.New`, `relay.Relay.Run`, `relay.Config.Hooks`, `relay.Hooks.BatchEnd`,",
		"`relay.Wrapped.Commit` (promoted from sql.Tx), `relay.DefaultBatch`, `sql.Tx`,",
		"`jetstream.WithMsgID`, `read.sql`, `dialects/postgres/sql/read.sql`,",
		"[other](docs/other.md), [loop](docs/other.md#the-run-loop), [here](#m), [web](https://example.com/x.md).",
		"Bad: `relay.Claim`, `relay.Relay.Claim`, `relay.Config.Prefetch`, `insert_leased_row.sql`,",
		"[gone](docs/gone.md), [anchor](docs/other.md#fifth-session).",
		"```go",
		"r := relay.NewRelay()",
		"```",
		"```sh",
		"relay.Nothing is checked in a shell block",
		"outboxctl list -state pending",
		"outboxctl purge -before 24h",
		"```",
		"Good: `outboxctl status -dsn x`, `outboxctl`; bad: `outboxctl frobnicate`.",
		"<<<<<<< HEAD",
		"Title",
		"=======",
		">>>>>>> other-branch",
	}, "\n")+"\n")

	docs, err := DocFiles(root)
	if err != nil {
		t.Fatal(err)
	}
	ix, err := LoadIndex(root)
	if err != nil {
		t.Fatal(err)
	}
	problems, err := Check(root, docs, ix)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range problems {
		got = append(got, p.String())
	}
	want := []string{
		"README.md:7: Go name relay.Claim: package relay declares no Claim",
		"README.md:7: Go name relay.Relay.Claim: relay.Relay has no member Claim",
		"README.md:7: Go name relay.Config.Prefetch: relay.Config has no member Prefetch",
		"README.md:7: SQL file insert_leased_row.sql: no such file under dialects/ or inbox/",
		"README.md:8: link docs/gone.md: no such file or directory docs/gone.md",
		"README.md:8: link docs/other.md#fifth-session: docs/other.md has no heading #fifth-session",
		"README.md:10: Go name relay.NewRelay: package relay declares no NewRelay",
		"README.md:15: outboxctl command purge: cmd/outboxctl has no such command",
		"README.md:17: outboxctl command frobnicate: cmd/outboxctl has no such command",
		`README.md:18: merge conflict marker "<<<<<<< HEAD": resolve the merge`,
		`README.md:21: merge conflict marker ">>>>>>> other-branch": resolve the merge`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestSlug(t *testing.T) {
	for in, want := range map[string]string{
		"Partition targets (issue 13), 2026-11-24": "partition-targets-issue-13-2026-11-24",
		"The web console: `outboxctl serve`":       "the-web-console-outboxctl-serve",
		"What latency to expect":                   "what-latency-to-expect",
	} {
		if got := Slug(in); got != want {
			t.Errorf("Slug(%q) = %q, want %q", in, got, want)
		}
	}
}
