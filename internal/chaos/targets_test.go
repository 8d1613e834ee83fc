package chaos

import (
	"context"
	"database/sql"
	"strconv"
	"strings"
	"testing"
	"time"

	gomysql "github.com/go-sql-driver/mysql"
	"github.com/nats-io/nats.go"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/dialects/mysql"
	"github.com/jitoutbox/jitoutbox/dialects/postgres"
	"github.com/jitoutbox/jitoutbox/internal/dbinstance"
	"github.com/jitoutbox/jitoutbox/internal/testdb"
	"github.com/jitoutbox/jitoutbox/internal/testnats"
	"github.com/jitoutbox/jitoutbox/notify"
	"github.com/jitoutbox/jitoutbox/notify/natsnotify"
	"github.com/jitoutbox/jitoutbox/notify/pgnotify"
)

// runner is a cross-process notifier with a Run loop (pgnotify.Notifier,
// natsnotify.Notifier).
type runner interface {
	notify.Notifier
	Run(ctx context.Context) error
}

// target is one database set up for a run.
type target struct {
	db      *sql.DB
	dialect dialects.Dialect
	bind    func(n int) string
	// relayDSN is the DSN the relays connect with (never in their logs);
	// wakeArgs are their wake flags.
	relayDSN string
	wakeArgs []string
	// relayUser is the relays' own database user (MariaDB; "" on
	// PostgreSQL, where their application_name tells their connections).
	relayUser string
	cutter    cutter
	// tenants are the run's outbox tables (openTenants).
	tenants *tenantSet
	// wake makes the test's cross-process notifier; nc is the NATS
	// connection of the run's wakes.
	wake func(nc *nats.Conn) (runner, error)
	// secret must never appear in a relay's log.
	secret string
	// server is the database server when the run owns it (and may stop,
	// kill and start it); nil for the shared servers.
	server dbServer
}

// dbServer is a database server the run owns (a *dbinstance.Instance).
type dbServer interface {
	// Stop shuts the server down fast (open transactions are rolled back).
	Stop(ctx context.Context) error
	// Kill kills the server with SIGKILL.
	Kill()
	// Start starts the server again and waits until it accepts connections.
	Start(ctx context.Context) error
}

// businessDDL is the business table the producers write next to their
// events; it tells whether a transaction whose Commit failed committed.
const businessDDL = `CREATE TABLE chaos_orders (
	tx_id VARCHAR(100) NOT NULL PRIMARY KEY,
	agg VARCHAR(20) NOT NULL,
	events INT NOT NULL)`

func postgresTarget(t *testing.T) target {
	t.Helper()
	db, dsn := testdb.Postgres(t, "postgres")
	return postgresOn(t, db, dsn)
}

// postgresOn sets up the run on db, opened with dsn.
func postgresOn(t *testing.T, db *sql.DB, dsn string) target {
	t.Helper()
	d, err := postgres.New()
	if err != nil {
		t.Fatal(err)
	}
	app := testnats.RandomName("jitchaos_")
	channel := testnats.RandomName("jitchaos_wake_")
	n, err := pgnotify.NewNotifier(db, pgnotify.WithChannel(channel))
	if err != nil {
		t.Fatal(err)
	}
	relayDSN := withParam(dsn, "application_name", app)
	return target{
		db: db, dialect: d,
		bind:     func(n int) string { return "$" + strconv.Itoa(n) },
		relayDSN: relayDSN,
		wakeArgs: []string{"-wake", "pg", "-wake-channel", channel},
		cutter:   pgCutter{db: db, app: app},
		wake:     func(*nats.Conn) (runner, error) { return n, nil },
		secret:   relayDSN,
	}
}

func mysqlTarget(t *testing.T) target {
	t.Helper()
	db, dsn := testdb.MySQL(t)
	return mysqlOn(t, db, dsn)
}

// mysqlOn sets up the run on db, opened with dsn; the wakes go over NATS.
func mysqlOn(t *testing.T, db *sql.DB, dsn string) target {
	t.Helper()
	d, err := mysql.New()
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := gomysql.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	// The relays log in as their own user, so the cutter finds exactly
	// their connections in the processlist. The names are generated here,
	// never user input.
	user := testnats.RandomName("jitchaos_")
	password := testnats.RandomName("pw")
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	for _, q := range []string{
		"CREATE USER '" + user + "'@'%' IDENTIFIED BY '" + password + "'",
		"GRANT ALL PRIVILEGES ON " + cfg.DBName + ".* TO '" + user + "'@'%'",
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("chaos: %s: %v", strings.SplitN(q, " ", 3)[:2], err)
		}
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		_, _ = db.ExecContext(ctx, "DROP USER '"+user+"'@'%'")
	})
	cfg.User, cfg.Passwd = user, password
	relayDSN := cfg.FormatDSN()
	subject := testnats.RandomName("jitchaos.wake.")
	return target{
		db: db, dialect: d,
		bind:      func(int) string { return "?" },
		relayDSN:  relayDSN,
		wakeArgs:  []string{"-wake", "nats", "-wake-subject", subject},
		relayUser: user,
		cutter:    mysqlCutter{db: db, user: user},
		wake: func(nc *nats.Conn) (runner, error) {
			return natsnotify.NewNotifier(nc, natsnotify.WithSubject(subject))
		},
		secret: password,
	}
}

// withParam adds key=value to a PostgreSQL URL or key=value DSN.
func withParam(dsn, key, value string) string {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		sep := "?"
		if strings.Contains(dsn, "?") {
			sep = "&"
		}
		return dsn + sep + key + "=" + value
	}
	return dsn + " " + key + "=" + value
}

// postgresInstance is a PostgreSQL server of the run's own (a throwaway
// initdb), which the run may stop, kill and start.
func postgresInstance(t *testing.T) target {
	t.Helper()
	inst := dbinstance.PostgreSQL(t)
	db, err := sql.Open("postgres", inst.DSN())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	tg := postgresOn(t, db, inst.DSN())
	tg.server = inst
	return tg
}

// mysqlInstance is a MariaDB server of the run's own (a throwaway
// mariadb-install-db), which the run may stop, kill and start.
func mysqlInstance(t *testing.T) target {
	t.Helper()
	inst := dbinstance.MariaDB(t)
	cfg, err := gomysql.ParseDSN(inst.DSN())
	if err != nil {
		t.Fatal(err)
	}
	cfg.ParseTime, cfg.Loc = true, time.UTC // as testdb.MySQL
	dsn := cfg.FormatDSN()
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	tg := mysqlOn(t, db, dsn)
	tg.server = inst
	return tg
}
