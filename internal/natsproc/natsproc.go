// Package natsproc runs nats-server as a child process that a test owns and
// can SIGKILL, then start again on the same store directory: either the
// nats-server binary installed on the machine (FindSystem) or one built from
// the nats-server/v2 module this repository depends on (Build), which offers
// newer options such as jetstream { sync_interval: always }.
package natsproc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Package is the import path of the module-built server command.
const Package = "github.com/jitoutbox/jitoutbox/internal/natsproc/cmd/natsserver"

// systemPaths returns where FindSystem looks after $PATH.
func systemPaths() []string {
	return []string{"/usr/sbin/nats-server", "/usr/local/bin/nats-server", "/usr/bin/nats-server"}
}

// FindSystem returns the path of an installed nats-server binary, or "" if
// there is none.
func FindSystem() string {
	if p, err := exec.LookPath("nats-server"); err == nil {
		return p
	}
	for _, p := range systemPaths() {
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}

// Build compiles the module-built server (Package) into dir and returns the
// binary's path. It must run inside the module (a test's working directory
// is).
func Build(ctx context.Context, dir string) (string, error) {
	bin := filepath.Join(dir, "natsserver")
	out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, Package).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("natsproc: go build %s: %w\n%s", Package, err, out)
	}
	return bin, nil
}

// BuildT is Build for a test: the binary lands in t.TempDir(). It skips the
// test when the go command is not available.
func BuildT(t testing.TB) string {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skipf("natsproc: go command not found, cannot build %s: %v", Package, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	bin, err := Build(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// Version returns the first line of `bin --version`.
func Version(ctx context.Context, bin string) (string, error) {
	out, err := exec.CommandContext(ctx, bin, "--version").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("natsproc: %s --version: %w", bin, err)
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	return line, nil
}

// Config configures a child server.
type Config struct {
	// StoreDir is JetStream's store directory; it survives Kill and
	// Restart. Required.
	StoreDir string
	// SyncAlways sets jetstream { sync_interval: always } (nats-server
	// 2.10+): every write is followed by fsync before the acknowledgement.
	SyncAlways bool
}

// Server is a nats-server child process.
type Server struct {
	// URL is the client URL; it stays the same across Restart.
	URL string

	bin     string
	cfg     Config
	port    int
	workDir string
	log     *lockedBuffer

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
}

// Start writes a configuration file, starts bin with it and waits until the
// server accepts clients. The process is killed when the test ends and its
// output is dumped if the test failed.
func Start(t testing.TB, bin string, cfg Config) *Server {
	t.Helper()
	if cfg.StoreDir == "" {
		t.Fatal("natsproc: Config.StoreDir is required")
	}
	s := &Server{bin: bin, cfg: cfg, port: -1, workDir: t.TempDir(), log: &lockedBuffer{}}
	t.Cleanup(func() {
		if err := s.Kill(); err != nil {
			t.Logf("natsproc: kill: %v", err)
		}
		if t.Failed() {
			t.Logf("natsproc: server output:\n%s", s.log.String())
		}
	})
	s.start(t)
	return s
}

// Restart starts the server again (after Kill) on the same port and store
// directory and waits until it accepts clients, JetStream recovery done.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	if err := s.Kill(); err != nil {
		t.Fatalf("natsproc: kill before restart: %v", err)
	}
	s.start(t)
}

// Pid returns the process id of the running server (0 if none).
func (s *Server) Pid() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil || s.cmd.Process == nil {
		return 0
	}
	return s.cmd.Process.Pid
}

// Output returns what the server has written to stdout and stderr.
func (s *Server) Output() string { return s.log.String() }

func (s *Server) configText(portsDir string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "listen: \"127.0.0.1:%d\"\n", s.port)
	fmt.Fprintf(&b, "ports_file_dir: %s\n", strconv.Quote(portsDir))
	b.WriteString("jetstream {\n")
	fmt.Fprintf(&b, "  store_dir: %s\n", strconv.Quote(s.cfg.StoreDir))
	if s.cfg.SyncAlways {
		b.WriteString("  sync_interval: always\n")
	}
	b.WriteString("}\n")
	return b.String()
}

func (s *Server) start(t testing.TB) {
	t.Helper()
	portsDir, err := os.MkdirTemp(s.workDir, "ports")
	if err != nil {
		t.Fatalf("natsproc: %v", err)
	}
	conf := filepath.Join(s.workDir, "server.conf")
	if err := os.WriteFile(conf, []byte(s.configText(portsDir)), 0o600); err != nil {
		t.Fatalf("natsproc: write config: %v", err)
	}
	cmd := exec.Command(s.bin, "-c", conf)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	cmd.Stdout, cmd.Stderr = s.log, s.log
	if err := cmd.Start(); err != nil {
		t.Fatalf("natsproc: start %s: %v", s.bin, err)
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
	s.mu.Lock()
	s.cmd, s.done = cmd, done
	s.mu.Unlock()

	url, err := waitPorts(portsDir, cmd.Process.Pid, done, 60*time.Second)
	if err != nil {
		t.Fatalf("natsproc: %s: %v\n%s", s.bin, err, s.log.String())
	}
	s.URL = url
	if i := strings.LastIndexByte(url, ':'); i >= 0 {
		if p, err := strconv.Atoi(url[i+1:]); err == nil {
			s.port = p // Restart reuses it.
		}
	}
}

// waitPorts waits for the ports file the server writes once it accepts
// clients and returns its client URL.
func waitPorts(dir string, pid int, exited <-chan struct{}, timeout time.Duration) (string, error) {
	deadline := time.Now().Add(timeout)
	suffix := "_" + strconv.Itoa(pid) + ".ports"
	for {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if !strings.HasSuffix(e.Name(), suffix) {
				continue
			}
			data, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				continue
			}
			var ports struct {
				Nats []string `json:"nats"`
			}
			if json.Unmarshal(data, &ports) == nil && len(ports.Nats) > 0 {
				return ports.Nats[0], nil
			}
		}
		select {
		case <-exited:
			return "", errors.New("server exited before accepting clients")
		default:
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("no ports file after %v", timeout)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Kill sends SIGKILL to the server (no shutdown, no flush: as a crash of the
// process) and waits until it has exited. It does nothing when the server
// is not running.
func (s *Server) Kill() error {
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.cmd, s.done = nil, nil
	s.mu.Unlock()
	if cmd == nil {
		return nil
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("natsproc: SIGKILL: %w", err)
	}
	select {
	case <-done:
		return nil
	case <-time.After(30 * time.Second):
		return errors.New("natsproc: server did not exit 30s after SIGKILL")
	}
}

// lockedBuffer is a bytes.Buffer safe for concurrent writes and reads.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
