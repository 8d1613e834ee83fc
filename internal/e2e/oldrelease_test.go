package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// previousRelease is the commit the previous release was built from: the
// upgrade test runs its relay and writers against a table migrated by this
// tree. At each release, set it to the commit of the release before the one
// being made (the last commit whose binaries may still run while the new
// ones roll out). If testdata/oldrelease/main.go no longer compiles against
// that tree, bring it to that release's API; keep its output format.
const previousRelease = "9e366c74f4d750fef52a281a1c68cab601d4366a"

// oldRelease holds the previous release's binaries.
type oldRelease struct {
	relay  string // its cmd/jitoutbox-relay
	writer string // testdata/oldrelease built inside its tree
}

// buildPreviousRelease extracts previousRelease from this repository's
// history (git archive, so the repository itself is not touched), adds the
// writer program to it and builds both binaries with the module cache and
// proxy of this environment. Without the history (a shallow clone or a
// source tarball) it fails where the test servers are configured (CI, where
// a clean clone of main has the full history) and skips elsewhere.
func buildPreviousRelease(t *testing.T) oldRelease {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	root, err := command(ctx, "", nil, "git", "rev-parse", "--show-toplevel")
	if err != nil {
		historyAbsent(t, "not inside a git clone: %v", err)
	}
	root = strings.TrimSpace(root)
	if _, err := command(ctx, root, nil, "git", "cat-file", "-e", previousRelease+"^{commit}"); err != nil {
		shallow, _ := command(ctx, root, nil, "git", "rev-parse", "--is-shallow-repository")
		historyAbsent(t, "commit %s (the previous release) is not in this clone (shallow: %s); fetch it (git fetch --unshallow in a shallow clone, else git fetch origin)",
			previousRelease, strings.TrimSpace(shallow))
	}
	dir := t.TempDir()
	tree, bin := filepath.Join(dir, "tree"), filepath.Join(dir, "bin")
	tarball := filepath.Join(dir, "tree.tar")
	if err := os.MkdirAll(tree, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := command(ctx, root, nil, "git", "archive", "--format=tar", "-o", tarball, previousRelease); err != nil {
		t.Fatal(err)
	}
	if _, err := command(ctx, tree, nil, "tar", "-xf", tarball); err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(filepath.Join("testdata", "oldrelease", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	writerDir := filepath.Join(tree, "cmd", "jitoutbox-oldrelease")
	if err := os.MkdirAll(writerDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(writerDir, "main.go"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	// Built as relayproc builds this tree's relay (no -race, no -trimpath):
	// the dependencies come from the build cache that build has filled, and
	// only the release's own packages are compiled (their cache keys hold
	// the temporary path).
	env := append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	start := time.Now()
	if _, err := command(ctx, tree, env, "go", "build", "-o", bin+string(filepath.Separator),
		"./cmd/jitoutbox-relay", "./cmd/jitoutbox-oldrelease"); err != nil {
		t.Fatalf("building the previous release %s: %v", previousRelease[:7], err)
	}
	t.Logf("previous release %s built in %v", previousRelease[:7], time.Since(start).Round(time.Millisecond))
	return oldRelease{relay: filepath.Join(bin, "jitoutbox-relay"), writer: filepath.Join(bin, "jitoutbox-oldrelease")}
}

// historyAbsent fails the test when a JITOUTBOX_* variable is set (CI, or
// a developer with the servers) and skips it otherwise.
func historyAbsent(t *testing.T, format string, args ...any) {
	t.Helper()
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "JITOUTBOX_") {
			t.Fatalf("upgrade test: "+format, args...)
		}
	}
	t.Skipf("upgrade test skipped: "+format, args...)
}

// command runs name with args in dir (env nil: this process's) and returns
// its stdout; the error carries its stderr.
func command(ctx context.Context, dir string, env []string, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir, cmd.Env = dir, env
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out), fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, stderr.String())
	}
	return string(out), nil
}
