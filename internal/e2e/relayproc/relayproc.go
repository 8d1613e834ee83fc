// Package relayproc builds the jitoutbox-relay command and runs it as a
// child process for end-to-end tests and benchmarks, with its log lines
// (JSON, on stderr) captured so that a test can wait for one.
package relayproc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// Package is the import path of the relay command.
const Package = "github.com/jitoutbox/jitoutbox/cmd/jitoutbox-relay"

// Build compiles the relay command into dir and returns the binary's path.
// It must run inside the module (a test's working directory is).
func Build(ctx context.Context, dir string) (string, error) {
	return BuildWith(ctx, dir)
}

// BuildWith is Build with extra go build flags (such as "-race").
func BuildWith(ctx context.Context, dir string, flags ...string) (string, error) {
	bin := filepath.Join(dir, "jitoutbox-relay")
	args := append(append([]string{"build"}, flags...), "-o", bin, Package)
	cmd := exec.CommandContext(ctx, "go", args...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("relayproc: go build %s: %w\n%s", Package, err, out)
	}
	return bin, nil
}

// BuildT is Build for a test or benchmark: the binary lands in t.TempDir().
func BuildT(t testing.TB) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	bin, err := Build(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// Process is a running relay.
type Process struct {
	// Log holds the process's stderr, line by line.
	Log *Log

	cmd    *exec.Cmd
	done   chan struct{}
	err    error       // set before done is closed
	killed atomic.Bool // Kill was called
}

// Start runs bin with args as a child process and stops it (SIGTERM, then
// SIGKILL after 10 s) when the test ends; its log is dumped into the test's
// output if the test failed.
func Start(t testing.TB, bin string, args ...string) *Process {
	t.Helper()
	p := &Process{Log: NewLog(), done: make(chan struct{})}
	p.cmd = exec.Command(bin, args...)
	// The environment is not passed on: everything comes from args, so a
	// test never relays from a database it did not name.
	p.cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	p.cmd.Stderr = p.Log
	p.cmd.Stdout = p.Log
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("relayproc: start %s: %v", bin, err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		if err := p.Stop(10 * time.Second); err != nil {
			t.Logf("relayproc: stop: %v", err)
		}
		if t.Failed() {
			t.Logf("relay log:\n%s", p.Log.String())
		}
	})
	return p
}

// Stop sends SIGTERM and waits up to grace for the process to exit, then
// kills it. It returns the exit error of a process that did not exit cleanly
// (nil if it exits with status 0 or was stopped by Kill).
func (p *Process) Stop(grace time.Duration) error {
	select {
	case <-p.done:
		if p.killed.Load() {
			return nil
		}
		return p.err
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-p.done:
		return p.err
	case <-t.C:
		_ = p.cmd.Process.Kill()
		<-p.done
		return fmt.Errorf("relayproc: relay ignored SIGTERM for %v and was killed", grace)
	}
}

// Kill kills the process with SIGKILL and waits for it.
func (p *Process) Kill() {
	p.killed.Store(true)
	_ = p.cmd.Process.Kill()
	<-p.done
}

// Done is closed when the process has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// Err returns the process's exit error once Done is closed.
func (p *Process) Err() error {
	<-p.done
	return p.err
}

// Log collects written bytes as lines and lets readers wait for a line.
// It is safe for concurrent use.
type Log struct {
	mu      sync.Mutex
	lines   []string
	partial []byte
	changed chan struct{} // closed and replaced on every new line
}

// NewLog returns an empty Log.
func NewLog() *Log { return &Log{changed: make(chan struct{})} }

// Write appends p, splitting it into lines.
func (l *Log) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.partial = append(l.partial, p...)
	added := false
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			break
		}
		l.lines = append(l.lines, string(l.partial[:i]))
		l.partial = l.partial[i+1:]
		added = true
	}
	if added {
		close(l.changed)
		l.changed = make(chan struct{})
	}
	return len(p), nil
}

// Count returns how many lines contain every one of subs.
func (l *Log) Count(subs ...string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, line := range l.lines {
		if containsAll(line, subs) {
			n++
		}
	}
	return n
}

// ErrTimeout is returned by Wait when the line did not come in time.
var ErrTimeout = errors.New("relayproc: timed out waiting for a log line")

// Wait waits until at least n lines contain every one of subs, or timeout.
func (l *Log) Wait(timeout time.Duration, n int, subs ...string) error {
	t := time.NewTimer(timeout)
	defer t.Stop()
	for {
		l.mu.Lock()
		c := 0
		for _, line := range l.lines {
			if containsAll(line, subs) {
				c++
			}
		}
		ch := l.changed
		l.mu.Unlock()
		if c >= n {
			return nil
		}
		select {
		case <-ch:
		case <-t.C:
			return fmt.Errorf("%w: %d of %d lines with %q after %v", ErrTimeout, c, n, subs, timeout)
		}
	}
}

// String returns the whole log.
func (l *Log) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n") + string(l.partial)
}

func containsAll(s string, subs []string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

// RunTests is a TestMain body for packages that start relay processes: it
// builds the relay binary once (with flags, e.g. "-race") into a temporary
// directory, stores its path in *bin, runs the tests, and then checks for
// leaked goroutines. It returns the exit code for os.Exit.
func RunTests(m *testing.M, name string, bin *string, flags ...string) int {
	dir, err := os.MkdirTemp("", "jitoutbox-"+name+"-")
	if err != nil {
		fmt.Fprintln(os.Stderr, name+":", err)
		return 1
	}
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	*bin, err = BuildWith(ctx, dir, flags...)
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, name+":", err)
		return 1
	}
	code := m.Run()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			return 1
		}
	}
	return code
}
