// Package dbinstance runs throwaway database servers owned by one test: a
// PostgreSQL (initdb into a temporary directory) or a MariaDB
// (mariadb-install-db) on a free loopback port, that the test can stop
// (fast shutdown), kill (SIGKILL of the server's processes) and start again
// on the same port with the same data. Tests that stop a database must own
// it: the shared servers of JITOUTBOX_POSTGRES_DSN and JITOUTBOX_MYSQL_DSN
// are never touched.
//
// When the server's binaries are not installed the test is skipped, with a
// message, unless the matching JITOUTBOX_*_DSN variable is set (as in CI,
// where a missing database must fail). When the test runs as root, the
// server runs as the postgres or mysql OS user, as both servers want.
//
// The server's data, socket and log live in a directory of their own under
// os.TempDir() (a short path, as unix sockets need); the test's cleanup
// stops the server and removes it.
package dbinstance

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Environment variables that make missing binaries a failure.
const (
	EnvPostgres = "JITOUTBOX_POSTGRES_DSN"
	EnvMySQL    = "JITOUTBOX_MYSQL_DSN"
)

// readyPoll is how often Start tries to connect while the server starts.
const readyPoll = 20 * time.Millisecond

// flavor is what differs between PostgreSQL and MariaDB.
type flavor struct {
	name       string         // "PostgreSQL"
	stopSignal syscall.Signal // fast shutdown
	driver     string         // database/sql driver of the readiness check
	// serverCmd returns the server's command line.
	serverCmd func(i *Instance) (string, []string)
	// readyDSN is the DSN of the readiness check (a database that exists
	// from the start).
	readyDSN func(i *Instance) string
}

// Instance is one database server owned by a test.
type Instance struct {
	t    testing.TB
	f    flavor
	dir  string // owns everything below
	port int
	cred *syscall.Credential // nil: run as the test's own user
	dsn  string

	mu   sync.Mutex
	proc *process // nil while stopped
}

// process is one run of the server.
type process struct {
	cmd  *exec.Cmd
	done chan struct{} // closed when the server has exited
	err  error         // Wait's result, set before done is closed
}

// DSN returns the DSN of the database "test": a lib/pq URL for PostgreSQL
// (postgres://postgres@127.0.0.1:PORT/test?sslmode=disable), a
// go-sql-driver DSN for MariaDB (root@tcp(127.0.0.1:PORT)/test). It stays
// the same across Stop, Kill and Restart.
func (i *Instance) DSN() string { return i.dsn }

// Addr returns the server's TCP address ("127.0.0.1:PORT").
func (i *Instance) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(i.port)) }

// Port returns the server's TCP port.
func (i *Instance) Port() int { return i.port }

// Dir returns the directory that holds the server's data, socket and log.
func (i *Instance) Dir() string { return i.dir }

// Running reports whether the server process is running.
func (i *Instance) Running() bool {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.proc == nil {
		return false
	}
	select {
	case <-i.proc.done:
		return false
	default:
		return true
	}
}

// Log returns the last n bytes (n <= 0: all) of the server's log.
func (i *Instance) Log(n int) string {
	b, err := os.ReadFile(i.logPath())
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	if n > 0 && len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

func (i *Instance) logPath() string { return filepath.Join(i.dir, "server.log") }

// Start starts the server and waits until it accepts connections (after
// crash recovery, when it was killed). Starting a running server does
// nothing. If ctx ends first, the server is killed and ctx's error returned.
func (i *Instance) Start(ctx context.Context) error {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.proc != nil {
		select {
		case <-i.proc.done:
			i.proc = nil // exited on its own: start it again
		default:
			return nil
		}
	}
	bin, args := i.f.serverCmd(i)
	logf, err := os.OpenFile(i.logPath(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("dbinstance: %s log: %w", i.f.name, err)
	}
	defer logf.Close() // the child has its own descriptor
	fmt.Fprintf(logf, "\n--- dbinstance: start %s at %s ---\n", bin, time.Now().Format(time.RFC3339Nano))
	cmd := exec.Command(bin, args...)
	cmd.Dir = i.dir
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = serverAttr(i.cred)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("dbinstance: start %s: %w", i.f.name, err)
	}
	p := &process{cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	i.proc = p
	if err := i.waitReady(ctx, p); err != nil {
		i.killLocked()
		return err
	}
	return nil
}

// waitReady pings the server until it answers, it exits or ctx ends.
func (i *Instance) waitReady(ctx context.Context, p *process) error {
	db, err := sql.Open(i.f.driver, i.f.readyDSN(i))
	if err != nil {
		return fmt.Errorf("dbinstance: %s readiness check: %w", i.f.name, err)
	}
	defer db.Close()
	tick := time.NewTicker(readyPoll)
	defer tick.Stop()
	var last error
	for {
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		last = db.PingContext(pctx)
		cancel()
		if last == nil {
			return nil
		}
		select {
		case <-p.done:
			return fmt.Errorf("dbinstance: %s exited while starting (%v); log tail:\n%s", i.f.name, p.err, i.Log(3000))
		case <-ctx.Done():
			return fmt.Errorf("dbinstance: %s not accepting connections (last: %v): %w", i.f.name, last, ctx.Err())
		case <-tick.C:
		}
	}
}

// Stop shuts the server down fast (PostgreSQL: SIGINT, its "fast"
// shutdown that ends open sessions; MariaDB: SIGTERM, a clean shutdown)
// and waits until it has exited. If ctx ends first, the server is killed
// and ctx's error returned. Stopping a stopped server does nothing.
func (i *Instance) Stop(ctx context.Context) error {
	i.mu.Lock()
	defer i.mu.Unlock()
	p := i.proc
	if p == nil {
		return nil
	}
	select {
	case <-p.done:
		i.proc = nil
		return nil
	default:
	}
	if err := p.cmd.Process.Signal(i.f.stopSignal); err != nil && !errors.Is(err, os.ErrProcessDone) {
		i.killLocked()
		return fmt.Errorf("dbinstance: signal %s: %w", i.f.name, err)
	}
	select {
	case <-p.done:
	case <-ctx.Done():
		i.killLocked()
		return fmt.Errorf("dbinstance: %s did not shut down: %w", i.f.name, ctx.Err())
	}
	i.proc = nil
	return nil
}

// Kill sends SIGKILL to the server and every process it started, and
// waits until they have exited: the next Start runs crash recovery.
// Killing a stopped server does nothing.
func (i *Instance) Kill() {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.killLocked()
}

func (i *Instance) killLocked() {
	p := i.proc
	if p == nil {
		return
	}
	killTree(p.cmd.Process.Pid)
	<-p.done
	i.proc = nil
}

// Restart stops the server if it runs (fast shutdown), then starts it
// again on the same port with the same data and waits until it accepts
// connections. After Kill, Restart is Start.
func (i *Instance) Restart(ctx context.Context) error {
	if err := i.Stop(ctx); err != nil {
		return err
	}
	return i.Start(ctx)
}

// killTree sends SIGKILL to pid and every process descended from it and
// waits (at most 10 s) until none is alive. PostgreSQL's backends each
// call setsid(), so killing the postmaster's process group would leave
// them serving their open sessions; pid is stopped first so it cannot
// fork while its descendants are listed. Without /proc (not Linux) only
// pid itself is killed.
func killTree(pid int) {
	_ = syscall.Kill(pid, syscall.SIGSTOP)
	pids := append(descendants(pid), pid)
	for _, p := range pids {
		_ = syscall.Kill(p, syscall.SIGKILL)
	}
	deadline := time.Now().Add(10 * time.Second)
	for _, p := range pids {
		for alive(p) && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
	}
}

// procStat is what /proc/PID/stat says of one process.
type procStat struct {
	pid, ppid int
	state     string
}

// readStat reads /proc/PID/stat ("pid (comm) state ppid ..."; comm may
// hold spaces and parentheses).
func readStat(path string) (procStat, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return procStat{}, false
	}
	open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || end < open {
		return procStat{}, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b[:open])))
	f := strings.Fields(string(b[end+1:]))
	if err != nil || len(f) < 2 {
		return procStat{}, false
	}
	ppid, _ := strconv.Atoi(f[1])
	return procStat{pid: pid, ppid: ppid, state: f[0]}, true
}

// descendants lists the processes descended from pid (from /proc; none
// where there is no /proc).
func descendants(pid int) []int {
	paths, _ := filepath.Glob("/proc/[0-9]*/stat")
	children := make(map[int][]int)
	for _, path := range paths {
		if st, ok := readStat(path); ok {
			children[st.ppid] = append(children[st.ppid], st.pid)
		}
	}
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}

// alive reports whether process pid exists and is not a zombie (a zombie
// holds no port, file or shared memory; whoever inherits it reaps it).
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	st, ok := readStat(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if !ok {
		_, err := os.Stat("/proc/self/stat")
		return err != nil // no /proc: trust kill(2)
	}
	return st.state != "Z" && st.state != "X"
}

// newInstance prepares an instance's directory (owned by osUser when the
// test runs as root) and port, and registers its cleanup.
func newInstance(t testing.TB, f flavor, osUser string) *Instance {
	t.Helper()
	i := &Instance{t: t, f: f}
	dir, err := os.MkdirTemp("", "jitoutbox-db-")
	if err != nil {
		t.Fatalf("dbinstance: %v", err)
	}
	i.dir = dir
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := i.Stop(ctx); err != nil {
			t.Errorf("dbinstance: cleanup: %v", err)
		}
		if err := os.RemoveAll(dir); err != nil {
			t.Errorf("dbinstance: cleanup: %v", err)
		}
	})
	if os.Geteuid() == 0 {
		u, err := user.Lookup(osUser)
		if err != nil {
			t.Fatalf("dbinstance: running as root, %s must run as the OS user %q: %v", f.name, osUser, err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		i.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatalf("dbinstance: %v", err)
		}
	}
	i.port = freePort(t)
	return i
}

// run runs a setup command (initdb, mariadb-install-db) as the server's
// user, failing the test with its output on error.
func (i *Instance) run(ctx context.Context, bin string, args ...string) {
	i.t.Helper()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = i.dir
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: i.cred}
	out, err := cmd.CombinedOutput()
	if err != nil {
		i.t.Fatalf("dbinstance: %s %s: %v\n%s", filepath.Base(bin), strings.Join(args, " "), err, out)
	}
}

// freePort returns a loopback port that was free a moment ago.
func freePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("dbinstance: find a free port: %v", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// missing skips t (or fails it when env is set) because bins are missing.
func missing(t testing.TB, env, what string) {
	t.Helper()
	if os.Getenv(env) != "" {
		t.Fatalf("dbinstance: %s is set but %s is not installed", env, what)
	}
	t.Skipf("dbinstance: %s is not installed: skipping the test that owns its own server", what)
}

// startWithTestDB starts a new server and creates its database "test",
// failing the test that made it on error.
func (i *Instance) startWithTestDB(ctx context.Context) {
	i.t.Helper()
	if err := i.Start(ctx); err != nil {
		i.t.Fatal(err)
	}
	db, err := sql.Open(i.f.driver, i.f.readyDSN(i))
	if err != nil {
		i.t.Fatalf("dbinstance: %v", err)
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, "CREATE DATABASE test"); err != nil {
		i.t.Fatalf("dbinstance: create database test: %v", err)
	}
}
