package dbinstance

import (
	"context"
	"database/sql"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// kind is one database the tests run on.
type kind struct {
	name   string
	new    func(testing.TB) *Instance
	driver string
}

var kinds = []kind{
	{"postgres", PostgreSQL, "postgres"},
	{"mariadb", MariaDB, "mysql"},
}

func ctxTimeout(t *testing.T, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// open opens the instance's "test" database, closed when t ends.
func open(t *testing.T, k kind, inst *Instance) *sql.DB {
	t.Helper()
	db, err := sql.Open(k.driver, inst.DSN())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// count returns the rows of table kv with value v.
func count(ctx context.Context, t *testing.T, db *sql.DB, v string) int {
	t.Helper()
	var n int
	// v is a constant of the test, not user input.
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM kv WHERE v = '"+v+"'").Scan(&n); err != nil {
		t.Fatalf("count %s: %v", v, err)
	}
	return n
}

// refused checks that nothing listens on addr.
func refused(t *testing.T, addr string) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err == nil {
		_ = c.Close()
		t.Fatalf("%s still accepts connections", addr)
	}
}

// TestKillKeepsCommitted: after SIGKILL and a restart on the same port, a
// committed row is there and a row of a transaction open at the kill is
// not.
func TestKillKeepsCommitted(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			ctx := ctxTimeout(t, 2*time.Minute)
			inst := k.new(t)
			addr, dsn := inst.Addr(), inst.DSN()
			if port := inst.Port(); port == 5432 || port == 3306 || !strings.HasPrefix(addr, "127.0.0.1:") {
				t.Fatalf("instance on %s: must be a free loopback port, never the shared servers'", addr)
			}
			db := open(t, k, inst)
			if _, err := db.ExecContext(ctx, "CREATE TABLE kv (id INT PRIMARY KEY, v VARCHAR(20))"); err != nil {
				t.Fatal(err)
			}
			if _, err := db.ExecContext(ctx, "INSERT INTO kv VALUES (1, 'committed')"); err != nil {
				t.Fatal(err)
			}
			tx, err := db.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tx.ExecContext(ctx, "INSERT INTO kv VALUES (2, 'open')"); err != nil {
				t.Fatal(err)
			}

			pid := inst.proc.cmd.Process.Pid
			procs := append(descendants(pid), pid)
			if k.name == "postgres" && len(procs) < 3 {
				t.Fatalf("postmaster %d has children %v, want its backends and workers", pid, procs[:len(procs)-1])
			}
			inst.Kill()
			inst.Kill() // harmless
			if inst.Running() {
				t.Fatal("running after Kill")
			}
			for _, p := range procs {
				if alive(p) {
					t.Errorf("process %d of the server is alive after Kill", p)
				}
			}
			refused(t, addr)
			if err := tx.Commit(); err == nil {
				t.Fatal("a transaction committed on a killed server")
			}

			if err := inst.Restart(ctx); err != nil {
				t.Fatal(err)
			}
			if inst.Addr() != addr || inst.DSN() != dsn {
				t.Fatalf("address moved across Restart: %s -> %s", addr, inst.Addr())
			}
			if n := count(ctx, t, db, "committed"); n != 1 {
				t.Errorf("committed row: %d after kill -9 and restart, want 1", n)
			}
			if n := count(ctx, t, db, "open"); n != 0 {
				t.Errorf("row of a transaction open at the kill: %d, want 0", n)
			}
			if !strings.Contains(inst.Log(0), "dbinstance: start") {
				t.Errorf("log has no start line: %q", inst.Log(500))
			}
		})
	}
}

// TestStopFast: Stop ends a server that holds an open transaction
// (a "smart" shutdown would wait for it forever), the port is closed, and
// Start brings the data back on the same port.
func TestStopFast(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			ctx := ctxTimeout(t, 2*time.Minute)
			inst := k.new(t)
			addr := inst.Addr()
			db := open(t, k, inst)
			if _, err := db.ExecContext(ctx, "CREATE TABLE kv (id INT PRIMARY KEY, v VARCHAR(20))"); err != nil {
				t.Fatal(err)
			}
			if _, err := db.ExecContext(ctx, "INSERT INTO kv VALUES (1, 'kept')"); err != nil {
				t.Fatal(err)
			}
			tx, err := db.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = tx.Rollback() }()
			if _, err := tx.ExecContext(ctx, "UPDATE kv SET v = 'changed' WHERE id = 1"); err != nil {
				t.Fatal(err)
			}

			if err := inst.Stop(ctx); err != nil {
				t.Fatalf("Stop with an open transaction: %v", err)
			}
			if err := inst.Stop(ctx); err != nil {
				t.Fatalf("second Stop: %v", err)
			}
			if inst.Running() {
				t.Fatal("running after Stop")
			}
			refused(t, addr)
			if err := db.PingContext(ctx); err == nil {
				t.Fatal("ping answered by a stopped server")
			}

			if err := inst.Start(ctx); err != nil {
				t.Fatal(err)
			}
			if err := inst.Start(ctx); err != nil { // already running: nothing
				t.Fatalf("second Start: %v", err)
			}
			if inst.Addr() != addr {
				t.Fatalf("address moved across Stop/Start: %s -> %s", addr, inst.Addr())
			}
			if n := count(ctx, t, db, "kept"); n != 1 {
				t.Errorf("row after fast shutdown and start: %d, want 1 (the open update must be rolled back)", n)
			}
		})
	}
}

// TestStartEndsWithContext: a Start whose context ends before the server
// is ready kills it and returns the context's error.
func TestStartEndsWithContext(t *testing.T) {
	inst := PostgreSQL(t)
	ctx := ctxTimeout(t, time.Minute)
	inst.Kill()
	short, cancel := context.WithCancel(ctx)
	cancel()
	if err := inst.Start(short); !errors.Is(err, context.Canceled) {
		t.Fatalf("Start with a canceled context = %v", err)
	}
	if inst.Running() {
		t.Fatal("server left running after a failed Start")
	}
	if err := inst.Start(ctx); err != nil {
		t.Fatal(err)
	}
}
