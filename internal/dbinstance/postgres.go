package dbinstance

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "github.com/lib/pq" // "postgres" driver of the readiness check
)

// postgresBin finds the directory holding initdb and postgres: the newest
// /usr/lib/postgresql/<version>/bin (Debian, Ubuntu), else $PATH.
func postgresBin() string {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(a, b int) bool { return pgVersion(dirs[a]) > pgVersion(dirs[b]) })
	for _, d := range dirs {
		if isExec(filepath.Join(d, "initdb")) && isExec(filepath.Join(d, "postgres")) {
			return d
		}
	}
	initdb, err := exec.LookPath("initdb")
	if err != nil {
		return ""
	}
	d := filepath.Dir(initdb)
	if !isExec(filepath.Join(d, "postgres")) {
		return ""
	}
	return d
}

// pgVersion reads the version out of /usr/lib/postgresql/<version>/bin.
func pgVersion(dir string) float64 {
	v, _ := strconv.ParseFloat(filepath.Base(filepath.Dir(dir)), 64)
	return v
}

func isExec(path string) bool {
	st, err := os.Stat(path)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

// PostgreSQL starts a PostgreSQL server of its own for t: initdb into a
// temporary directory (as the postgres OS user when the test runs as
// root), trust authentication, fsync on, a small shared_buffers, TCP on
// 127.0.0.1 at a free port and its unix socket in its own directory. It
// returns once the server accepts connections and the database "test"
// exists. The server is stopped and its files removed when t ends.
func PostgreSQL(t testing.TB) *Instance {
	t.Helper()
	bin := postgresBin()
	if bin == "" {
		missing(t, EnvPostgres, "PostgreSQL (initdb and postgres, looked in /usr/lib/postgresql/*/bin and $PATH)")
	}
	i := newInstance(t, postgresFlavor(bin), "postgres")
	i.dsn = fmt.Sprintf("postgres://postgres@%s/test?sslmode=disable", i.Addr())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// --no-sync: initdb's own files are not flushed (a test's throwaway
	// cluster survives no power cut anyway); the server fsyncs as usual.
	i.run(ctx, filepath.Join(bin, "initdb"), "-D", filepath.Join(i.dir, "data"),
		"-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-locale", "--no-sync")
	if err := os.Mkdir(filepath.Join(i.dir, "sock"), 0o700); err != nil {
		t.Fatalf("dbinstance: %v", err)
	}
	if i.cred != nil {
		if err := os.Chown(filepath.Join(i.dir, "sock"), int(i.cred.Uid), int(i.cred.Gid)); err != nil {
			t.Fatalf("dbinstance: %v", err)
		}
	}
	i.startWithTestDB(ctx)
	return i
}

func postgresFlavor(bin string) flavor {
	return flavor{
		name:       "PostgreSQL",
		stopSignal: syscall.SIGINT, // the postmaster's "fast" shutdown
		driver:     "postgres",
		serverCmd: func(i *Instance) (string, []string) {
			settings := []string{
				"listen_addresses=127.0.0.1",
				"port=" + strconv.Itoa(i.port),
				"unix_socket_directories=" + filepath.Join(i.dir, "sock"),
				"fsync=on",
				"synchronous_commit=on",
				"shared_buffers=16MB",
				"max_connections=100",
				"huge_pages=off",
				"logging_collector=off",
				"max_wal_senders=0",
				"wal_level=minimal",
			}
			args := []string{"-D", filepath.Join(i.dir, "data")}
			for _, s := range settings {
				args = append(args, "-c", s)
			}
			return filepath.Join(bin, "postgres"), args
		},
		readyDSN: func(i *Instance) string {
			return strings.Replace(i.dsn, "/test?", "/postgres?", 1) + "&connect_timeout=1"
		},
	}
}
