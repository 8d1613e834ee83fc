package dbinstance

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql" // "mysql" driver of the readiness check
)

// mariadbBins finds mariadb-install-db and mariadbd ($PATH, then /usr/sbin
// and /usr/bin, where Debian puts them).
func mariadbBins() (install, server string) {
	find := func(names ...string) string {
		for _, n := range names {
			if p, err := exec.LookPath(n); err == nil {
				return p
			}
			for _, d := range []string{"/usr/sbin", "/usr/bin", "/usr/local/bin", "/usr/local/sbin"} {
				if p := filepath.Join(d, n); isExec(p) {
					return p
				}
			}
		}
		return ""
	}
	return find("mariadb-install-db", "mysql_install_db"), find("mariadbd", "mysqld")
}

// MariaDB starts a MariaDB server of its own for t: mariadb-install-db
// into a temporary directory (as the mysql OS user when the test runs as
// root), root without a password (root@127.0.0.1 exists), TCP on 127.0.0.1
// at a free port and its own unix socket, InnoDB with
// innodb_flush_log_at_trx_commit=1, a small buffer pool, no binary log and
// no performance schema. It returns once the server accepts connections
// and the database "test" exists. The server is stopped and its files
// removed when t ends.
func MariaDB(t testing.TB) *Instance {
	t.Helper()
	install, server := mariadbBins()
	if install == "" || server == "" {
		missing(t, EnvMySQL, "MariaDB (mariadb-install-db and mariadbd, looked on $PATH and in /usr/sbin, /usr/bin)")
	}
	i := newInstance(t, mariadbFlavor(server), "mysql")
	i.dsn = fmt.Sprintf("root@tcp(%s)/test", i.Addr())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	i.run(ctx, install, "--no-defaults", "--datadir="+filepath.Join(i.dir, "data"),
		"--auth-root-authentication-method=normal", "--skip-test-db", "--skip-name-resolve",
		"--innodb-buffer-pool-size=16M", "--skip-log-bin")
	i.startWithTestDB(ctx)
	return i
}

func mariadbFlavor(server string) flavor {
	return flavor{
		name:       "MariaDB",
		stopSignal: syscall.SIGTERM, // a clean shutdown
		driver:     "mysql",
		serverCmd: func(i *Instance) (string, []string) {
			return server, []string{
				"--no-defaults",
				"--datadir=" + filepath.Join(i.dir, "data"),
				"--port=" + strconv.Itoa(i.port),
				"--bind-address=127.0.0.1",
				"--socket=" + filepath.Join(i.dir, "mysqld.sock"),
				"--pid-file=" + filepath.Join(i.dir, "mysqld.pid"),
				"--tmpdir=" + i.dir,
				"--skip-name-resolve",
				"--character-set-server=utf8mb4",
				"--collation-server=utf8mb4_general_ci",
				"--innodb-buffer-pool-size=16M",
				"--innodb-flush-log-at-trx-commit=1",
				"--max-allowed-packet=16M",
				"--skip-log-bin",
				"--performance-schema=OFF",
			}
		},
		readyDSN: func(i *Instance) string {
			return fmt.Sprintf("root@tcp(%s)/?timeout=1s", i.Addr())
		},
	}
}
