package txoutbox_test

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/dialects/mysql"
	"github.com/jitoutbox/jitoutbox/dialects/postgres"
	"github.com/jitoutbox/jitoutbox/internal/sqlcount"
	"github.com/jitoutbox/jitoutbox/internal/testdb"
	"github.com/jitoutbox/jitoutbox/txoutbox"
)

// faultServer is a real server whose connections a test can kill.
type faultServer struct {
	name     string
	driver   string
	open     func(t testing.TB) (*sql.DB, string)
	dialect  func() (dialects.Dialect, error)
	pidQuery string
	kill     string // takes the pid as its only argument
	alive    string // counts sessions with that pid
	ordersDD string
	ph       string
}

func faultServers() []faultServer {
	return []faultServer{
		{
			name: "postgres", driver: "postgres",
			open:     func(t testing.TB) (*sql.DB, string) { return testdb.Postgres(t, "postgres") },
			dialect:  func() (dialects.Dialect, error) { return postgres.New() },
			pidQuery: "SELECT pg_backend_pid()",
			kill:     "SELECT pg_terminate_backend($1)",
			alive:    "SELECT count(*) FROM pg_stat_activity WHERE pid = $1",
			ordersDD: "CREATE TABLE orders (id TEXT PRIMARY KEY)",
			ph:       "$1",
		},
		{
			name: "mysql", driver: "mysql",
			open:     testdb.MySQL,
			dialect:  func() (dialects.Dialect, error) { return mysql.New() },
			pidQuery: "SELECT CONNECTION_ID()",
			kill:     "KILL ?",
			alive:    "SELECT count(*) FROM information_schema.processlist WHERE id = ?",
			ordersDD: "CREATE TABLE orders (id VARCHAR(64) PRIMARY KEY)",
			ph:       "?",
		},
	}
}

// killAndWait kills the session pid from admin and waits until the server has
// dropped it, so the next thing the victim sends meets a dead connection.
func (s faultServer) killAndWait(t *testing.T, admin *sql.DB, pid int64) {
	t.Helper()
	ctx := context.Background()
	if _, err := admin.ExecContext(ctx, s.kill, pid); err != nil {
		t.Errorf("kill session %d: %v", pid, err)
		return
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		var n int
		if err := admin.QueryRowContext(ctx, s.alive, pid).Scan(&n); err != nil {
			t.Errorf("check session %d: %v", pid, err)
			return
		}
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("session %d still alive after kill", pid)
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

type countNotifier struct{ n atomic.Int64 }

func (c *countNotifier) Notify([]int) { c.n.Add(1) }

// TestConnectionDiesOnCommitPath kills the transaction's database
// connection at three points of Commit on real servers: during the flush
// (before the outbox INSERT reaches the server), as COMMIT is sent, and right
// after COMMIT succeeded. In the first two cases Commit returns an error, the
// business row and the events are both absent and no wake fires; in the
// third, both are present and the wake fires once.
func TestConnectionDiesOnCommitPath(t *testing.T) {
	for _, srv := range faultServers() {
		t.Run(srv.name, func(t *testing.T) {
			admin, dsn := srv.open(t)
			ctx := context.Background()
			d, err := srv.dialect()
			if err != nil {
				t.Fatal(err)
			}
			if err := d.Migrate(ctx, admin); err != nil {
				t.Fatal(err)
			}
			if _, err := admin.ExecContext(ctx, srv.ordersDD); err != nil {
				t.Fatal(err)
			}
			for _, point := range []string{"flush", "commit", "after-commit"} {
				t.Run(point, func(t *testing.T) {
					var c sqlcount.Counter
					db, err := sqlcount.Open(srv.driver, dsn, &c)
					if err != nil {
						t.Fatal(err)
					}
					defer db.Close()
					n := &countNotifier{}
					ob, err := txoutbox.New(db, d, txoutbox.WithNotifier(n))
					if err != nil {
						t.Fatal(err)
					}
					tx, err := ob.Begin(ctx, nil, txoutbox.TimeCritical())
					if err != nil {
						t.Fatal(err)
					}
					defer tx.Rollback()
					var pid int64
					if err := tx.QueryRowContext(ctx, srv.pidQuery).Scan(&pid); err != nil {
						t.Fatal(err)
					}
					orderID := "o-" + point
					if _, err := tx.ExecContext(ctx, "INSERT INTO orders (id) VALUES ("+srv.ph+")", orderID); err != nil {
						t.Fatal(err)
					}
					ev := validEvent()
					ev.AggregateID = orderID
					if _, err := tx.Add(ev); err != nil {
						t.Fatal(err)
					}
					switch point {
					case "flush":
						c.BeforeStatement = func(q string) {
							if strings.Contains(q, "INSERT INTO "+d.Table()) {
								srv.killAndWait(t, admin, pid)
							}
						}
					case "commit":
						c.BeforeCommit = func() { srv.killAndWait(t, admin, pid) }
					case "after-commit":
						c.AfterCommit = func(err error) {
							if err == nil {
								srv.killAndWait(t, admin, pid)
							}
						}
					}
					err = tx.Commit()
					t.Logf("Commit after the connection died at %s: %v", point, err)

					var orders, events int
					if err := admin.QueryRowContext(ctx, "SELECT count(*) FROM orders WHERE id = "+srv.ph, orderID).Scan(&orders); err != nil {
						t.Fatal(err)
					}
					if err := admin.QueryRowContext(ctx, "SELECT count(*) FROM "+d.Table()+" WHERE aggregate_id = "+srv.ph, orderID).Scan(&events); err != nil {
						t.Fatal(err)
					}
					if point == "after-commit" {
						if err != nil {
							t.Fatalf("Commit = %v, want success: the server committed before the connection died", err)
						}
						if orders != 1 || events != 1 || n.n.Load() != 1 {
							t.Fatalf("orders=%d events=%d wakes=%d, want 1/1/1", orders, events, n.n.Load())
						}
						return
					}
					if err == nil {
						t.Fatal("Commit succeeded on a dead connection")
					}
					if point == "flush" && !errors.Is(err, txoutbox.ErrFlush) {
						t.Errorf("Commit = %v, want an error matching ErrFlush", err)
					}
					if point == "commit" && errors.Is(err, txoutbox.ErrFlush) {
						t.Errorf("Commit = %v: a failed COMMIT is not a flush failure", err)
					}
					if orders != 0 || events != 0 {
						t.Fatalf("half-written: orders=%d events=%d after %v", orders, events, err)
					}
					if n.n.Load() != 0 {
						t.Fatalf("woke %d times after a failed commit", n.n.Load())
					}
					if _, err := tx.Add(ev); !errors.Is(err, sql.ErrTxDone) {
						t.Errorf("Add after a failed Commit = %v, want sql.ErrTxDone", err)
					}
				})
			}
		})
	}
}
