package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/jitoutbox/jitoutbox/internal/testdb"
)

// TestDriverLoggerWritesJSON: the MySQL driver's complaints (seen by the
// chaos harness as plain "[mysql] ... closing bad idle connection" lines
// among the JSON logs after a connection was killed) come out as JSON.
func TestDriverLoggerWritesJSON(t *testing.T) {
	var buf bytes.Buffer
	var l gomysql.Logger = driverLogger{log: slog.New(slog.NewJSONHandler(&buf, nil)), driver: "mysql"}
	l.Print("closing bad idle connection: ", "EOF")
	var rec map[string]any
	if err := json.Unmarshal(buf.Bytes(), &rec); err != nil {
		t.Fatalf("not one JSON line: %q: %v", buf.String(), err)
	}
	if rec["level"] != "WARN" || rec["driver"] != "mysql" || rec["msg_text"] != "closing bad idle connection: EOF" {
		t.Fatalf("unexpected record %v", rec)
	}
}

// TestMySQLDriverComplaintsGoThroughTheLogger: openDB gives the MySQL driver
// the relay's logger, so the complaint about a killed idle connection comes
// out as a JSON line (it used to be a plain "[mysql] ..." line on stderr).
func TestMySQLDriverComplaintsGoThroughTheLogger(t *testing.T) {
	admin, dsn := testdb.MySQL(t)
	var buf syncBuffer
	log := slog.New(slog.NewJSONHandler(&buf, nil))
	db, _, err := openDB(config{dialect: "mysql", dsn: dsn}, log)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxIdleConns(1)
	db.SetMaxOpenConns(1)
	ctx := context.Background()
	var id int64
	if err := db.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&id); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.ExecContext(ctx, fmt.Sprintf("KILL CONNECTION %d", id)); err != nil {
		t.Fatal(err)
	}
	// The pool's idle connection is dead; the driver notices, complains and
	// dials again (polling: the server closes the socket asynchronously).
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(buf.String(), `"driver":"mysql"`) {
		if time.Now().After(deadline) {
			t.Fatalf("no driver complaint logged through the relay's logger; log: %q", buf.String())
		}
		if err := db.PingContext(ctx); err != nil {
			t.Logf("ping: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
		if _, err := admin.ExecContext(ctx, fmt.Sprintf("KILL CONNECTION %d", id)); err == nil {
			continue
		}
		_ = db.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&id)
	}
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		if !json.Valid([]byte(line)) {
			t.Fatalf("not JSON: %q", line)
		}
	}
}

// syncBuffer is a bytes.Buffer safe for concurrent use.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestDriverLoggerRedacts: a driver complaint that quotes the DSN (drivers
// print what they were given) goes through the relay's logger, which hides
// the password.
func TestDriverLoggerRedacts(t *testing.T) {
	const dsn = `root:SECRET%zz#"@tcp(db:3306)/app`
	var buf bytes.Buffer
	var l gomysql.Logger = driverLogger{log: newLogger(config{dsn: dsn}, &buf), driver: "mysql"}
	l.Print("invalid DSN ", dsn, ": closing bad idle connection")
	if out := buf.String(); strings.Contains(out, "SECRET") || !strings.Contains(out, "closing bad idle connection") {
		t.Fatalf("driver line: %s", out)
	}
}
