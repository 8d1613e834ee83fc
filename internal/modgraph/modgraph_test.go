package modgraph

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// neverInGoSum are modules that must not appear in the service's go.sum at
// all, not even as a go.mod checksum: test-only modules of jitoutbox whose
// packages no test of an imported package uses, and the modules of
// packages the service does not import.
var neverInGoSum = []string{
	"github.com/chromedp/",               // cmd/outboxctl's browser test
	"github.com/twmb/franz-go/pkg/kfake", // Kafka tests' in-process cluster
	"gonum.org/",                         // bench/cmd plots
	"k8s.io/", "sigs.k8s.io/",            // must never come in through a test helper
	"github.com/ThreeDotsLabs/",      // bench/watermill, a module of its own
	"github.com/twmb/franz-go",       // relay/kafkapub, not imported here
	"github.com/rabbitmq/amqp091-go", // relay/rabbitpub, not imported here
	"go.opentelemetry.io/",           // otel (jitotel), not imported here
}

// neverBuilt are modules the service must not build. They may appear in
// its go.sum: go mod tidy records checksums for the tests of the packages
// a module imports (so that go test of those packages works), and
// relay/natspub's tests run an embedded NATS server, txoutbox's use
// go-sqlmock, relay's use the SQLite and database drivers. The test logs
// which of them are there and why (go mod why).
var neverBuilt = append([]string{
	"github.com/nats-io/nats-server/",
	"github.com/DATA-DOG/go-sqlmock",
	"github.com/cloudevents/sdk-go/", // relay/natspub's CloudEvents test (through internal/cetest)
	"go.uber.org/goleak",
	"modernc.org/sqlite",
	"github.com/mattn/go-sqlite3",
}, neverInGoSum...)

func TestServiceModuleGraphIsLean(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go mod tidy in a scratch module (-short)")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	rootMod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	goLine := "go 1.26.0"
	for _, l := range strings.Split(string(rootMod), "\n") {
		if strings.HasPrefix(l, "go ") {
			goLine = strings.TrimSpace(l)
		}
	}

	dir := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/service\n\n"+goLine+"\n\n"+
		"require github.com/jitoutbox/jitoutbox v0.0.0\n\n"+
		"replace github.com/jitoutbox/jitoutbox => "+root+"\n")
	write("main.go", `package main

import (
	_ "github.com/jitoutbox/jitoutbox/dialects/postgres"
	_ "github.com/jitoutbox/jitoutbox/relay"
	_ "github.com/jitoutbox/jitoutbox/relay/natspub"
	_ "github.com/jitoutbox/jitoutbox/txoutbox"
)

func main() {}
`)
	// The repository's go.sum seeds the scratch one: tidy keeps only the
	// lines the service needs, and the checksums of modules already in the
	// module cache need no checksum-database lookup, so the test runs
	// offline once the repository's own build has filled the cache. The
	// GOPROXY of the environment is used for anything missing.
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	write("go.sum", string(sum))

	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.CommandContext(ctx, goBin, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			t.Fatalf("go %s: %v\n%s%s", strings.Join(args, " "), err, out.String(), errb.String())
		}
		return out.String()
	}
	start := time.Now()
	run("mod", "tidy")
	t.Logf("go mod tidy took %v", time.Since(start).Round(time.Millisecond))

	tidied, err := os.ReadFile(filepath.Join(dir, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(tidied)), "\n")
	t.Logf("the service's go.sum: %d lines", len(lines))
	recorded := map[string]bool{} // every module with a line in go.sum
	content := map[string]bool{}  // modules with a checksum of their code, not only of their go.mod
	for _, l := range lines {
		f := strings.Fields(l)
		if len(f) < 2 {
			continue
		}
		recorded[f[0]] = true
		if !strings.HasSuffix(f[1], "/go.mod") {
			content[f[0]] = true
		}
	}
	for mod := range recorded {
		for _, deny := range neverInGoSum {
			if strings.HasPrefix(mod, deny) {
				t.Errorf("go.sum of a service importing txoutbox, relay, natspub and postgres records %s", mod)
			}
		}
	}
	for mod := range content {
		for _, deny := range neverBuilt {
			if strings.HasPrefix(mod, deny) {
				t.Logf("in go.sum for a test of an imported package, not built: %s\n%s",
					mod, strings.TrimSpace(run("mod", "why", "-m", mod)))
			}
		}
	}

	built := strings.Fields(run("list", "-deps", "-f", "{{with .Module}}{{.Path}}{{end}}", "."))
	seen := map[string]bool{}
	for _, mod := range built {
		if seen[mod] {
			continue
		}
		seen[mod] = true
		for _, deny := range neverBuilt {
			if strings.HasPrefix(mod, deny) {
				t.Errorf("the service builds %s", mod)
			}
		}
	}
	t.Logf("modules the service builds: %d", len(seen))
}
