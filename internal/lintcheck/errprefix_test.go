package lintcheck

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

// TestErrPrefixes runs the check over the module: every error string
// created outside package main starts with its own package's name or with
// a word that names no package.
func TestErrPrefixes(t *testing.T) {
	found, err := ErrPrefixes(moduleRoot(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range found {
		t.Error(f)
	}
}

// TestErrPrefixesSeesTheModule guards the walk itself: a check that read
// no file, or missed the library's packages, would pass on anything.
func TestErrPrefixesSeesTheModule(t *testing.T) {
	root := t.TempDir()
	write := func(rel, src string) {
		t.Helper()
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/m\n")
	write("relay/relay.go", "package relay\nimport \"errors\"\nvar ErrX = errors.New(\"relay: x\")\n")
	write("relay/natspub/pub.go", "package natspub\nimport \"errors\"\nvar ErrY = errors.New(\"relay: y\")\n")
	write("relay/natspub/pub_test.go", "package natspub\nimport \"errors\"\nvar errZ = errors.New(\"relay: z\")\n")
	write("relay/natspub/testdata/x.go", "package natspub\nimport \"errors\"\nvar errZ = errors.New(\"relay: z\")\n")
	write("other/go.mod", "module example.com/other\n")
	write("other/o.go", "package other\nimport \"errors\"\nvar errZ = errors.New(\"relay: z\")\n")
	write("cmd/tool/main.go", "package main\nimport \"fmt\"\nfunc f(err error) error { return fmt.Errorf(\"relay: %w\", err) }\n")
	found, err := ErrPrefixes(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(found) != 1 || found[0].File != "relay/natspub/pub.go" || found[0].Line != 3 || found[0].Prefix != "relay" {
		t.Fatalf("found %v, want only relay/natspub/pub.go:3 (test files, testdata, other modules and package main are not checked)", found)
	}
	if s := found[0].String(); !strings.Contains(s, `start it with "natspub:"`) {
		t.Errorf("finding %q does not name the prefix to use", s)
	}
}

// TestCheckFile shows which prefixes the check reports on small sources.
func TestCheckFile(t *testing.T) {
	pkgs := map[string]bool{ModuleName: true, "relay": true, "natspub": true, "postgres": true, "dialects": true, "main": true}
	for _, tc := range []struct {
		name, src string
		want      []string // prefixes reported, in order
	}{
		{"own package", `package natspub
import ("errors"; "fmt")
var ErrX = errors.New("natspub: x")
func f(err error) error { return fmt.Errorf("natspub: publish: %w", err) }`, nil},
		{"module name", `package dialects
import "errors"
var ErrBadRow = errors.New("jitoutbox: bad row")`, []string{"jitoutbox"}},
		{"import path", `package postgres
import "fmt"
func f(err error) error { return fmt.Errorf("jitoutbox/postgres: mark: %w", err) }`, []string{"jitoutbox/postgres"}},
		{"another package of the module", `package natspub
import "errors"
var ErrX = errors.New("relay: x")`, []string{"relay"}},
		{"an imported package", `package natspub
import ("fmt"; "github.com/nats-io/nats.go")
var _ = nats.Connect
func f(err error) error { return fmt.Errorf("nats: %w", err) }`, []string{"nats"}},
		{"renamed imports of errors and fmt", `package natspub
import (stderrors "errors"; f "fmt")
var ErrX = stderrors.New("relay: x")
var ErrY = f.Errorf("postgres: y")`, []string{"relay", "postgres"}},
		{"context added by a wrapper", `package natspub
import ("errors"; "fmt")
var errX = errors.New("connect: DialFunc returned nil")
func f(err error) error { return fmt.Errorf("exchange: %w", err) }
func g(err error) error { return fmt.Errorf("mark published: %w", err) }`, nil},
		{"no prefix, or a verb first", `package natspub
import ("errors"; "fmt")
var ErrX = errors.New("relay x")
func f(op string, err error) error { return fmt.Errorf("%s: relay: %w", op, err) }`, nil},
		{"not errors.New or fmt.Errorf", `package natspub
import "fmt"
var s = fmt.Sprintf("relay: %d", 1)
type errs struct{}
func (errs) New(string) error { return nil }
var e errs
var x = e.New("relay: x")`, nil},
		{"package main", `package main
import "fmt"
func f(err error) error { return fmt.Errorf("relay: %w", err) }`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			found, err := CheckFile("x.go", []byte(tc.src), pkgs)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range found {
				got = append(got, f.Prefix)
			}
			if strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Errorf("reported %q, want %q", got, tc.want)
			}
		})
	}
}

func TestImportName(t *testing.T) {
	for path, want := range map[string]string{
		"errors":                               "errors",
		"database/sql":                         "sql",
		"github.com/nats-io/nats.go":           "nats",
		"github.com/nats-io/nats.go/jetstream": "jetstream",
		"github.com/twmb/franz-go/pkg/kgo":     "kgo",
		"github.com/jackc/pgx/v5":              "pgx",
		"github.com/rabbitmq/amqp091-go":       "amqp091",
	} {
		if got := importName(path); got != want {
			t.Errorf("importName(%q) = %q, want %q", path, got, want)
		}
	}
}
