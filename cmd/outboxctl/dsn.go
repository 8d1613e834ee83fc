package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	redactpkg "github.com/jitoutbox/jitoutbox/internal/redact"
)

// errUsage marks command-line mistakes.
var errUsage = errors.New("usage")

// inferDialect guesses the dialect from a DSN's form.
func inferDialect(dsn string) (string, error) {
	lower := strings.ToLower(dsn)
	path := lower
	if i := strings.IndexByte(path, '?'); i >= 0 {
		path = path[:i]
	}
	switch {
	case strings.HasPrefix(lower, "postgres://"), strings.HasPrefix(lower, "postgresql://"):
		return "postgres", nil
	case strings.HasPrefix(lower, "file:"), strings.HasSuffix(path, ".db"), strings.HasSuffix(path, ".sqlite"),
		strings.HasSuffix(path, ".sqlite3"), lower == ":memory:":
		return "sqlite", nil
	case strings.Contains(dsn, "@tcp(") || strings.Contains(dsn, "@unix(") || strings.HasPrefix(dsn, "tcp("):
		return "mysql", nil
	case strings.Contains(dsn, "=") && !strings.Contains(dsn, "@"):
		return "postgres", nil // key=value form: host=... dbname=...
	}
	return "", fmt.Errorf("%w: cannot tell the database from the DSN; set -dialect postgres|mysql|sqlite", errUsage)
}

// dsnEnv lists the environment variables read when -dsn is not given.
var dsnEnv = map[string]string{
	"postgres": "JITOUTBOX_POSTGRES_DSN",
	"mysql":    "JITOUTBOX_MYSQL_DSN",
	"sqlite":   "JITOUTBOX_SQLITE_DSN",
}

// resolveDSN picks the DSN and dialect from the flags (which
// JITOUTBOX_DSN and JITOUTBOX_DSN_FILE may have set) and, without a DSN,
// the dialects' variables.
func resolveDSN(dialect, dsn string, getenv func(string) string) (string, string, error) {
	if dsn == "" && dialect != "" {
		env, ok := dsnEnv[dialect]
		if !ok {
			return "", "", fmt.Errorf("%w: unknown -dialect %q (want postgres, mysql or sqlite)", errUsage, dialect)
		}
		dsn = getenv(env)
	}
	if dsn == "" && dialect == "" {
		var found []string
		for _, d := range []string{"postgres", "mysql", "sqlite"} {
			if v := getenv(dsnEnv[d]); v != "" {
				found = append(found, d)
				dialect, dsn = d, v
			}
		}
		if len(found) > 1 {
			return "", "", fmt.Errorf("%w: several of JITOUTBOX_{POSTGRES,MYSQL,SQLITE}_DSN are set (%s); pick one with -dialect or pass -dsn", errUsage, strings.Join(found, ", "))
		}
	}
	if dsn == "" {
		return "", "", fmt.Errorf("%w: no database: pass -dsn or -dsn-file, or set JITOUTBOX_DSN, JITOUTBOX_DSN_FILE or JITOUTBOX_{POSTGRES,MYSQL,SQLITE}_DSN", errUsage)
	}
	if dialect == "" {
		d, err := inferDialect(dsn)
		if err != nil {
			return "", "", err
		}
		dialect = d
	}
	if _, ok := dsnEnv[dialect]; !ok {
		return "", "", fmt.Errorf("%w: unknown -dialect %q (want postgres, mysql or sqlite)", errUsage, dialect)
	}
	return dialect, dsn, nil
}

// driverDSN returns the driver name and the DSN to open: MySQL DSNs get
// parseTime and UTC; SQLite paths become file: URIs with a busy timeout.
func driverDSN(dialect, dsn string) (string, string, error) {
	switch dialect {
	case "postgres":
		return "postgres", dsn, nil
	case "mysql":
		cfg, err := mysql.ParseDSN(dsn)
		if err != nil {
			return "", "", fmt.Errorf("parse MySQL DSN: %w", err)
		}
		cfg.ParseTime = true
		cfg.Loc = time.UTC
		return "mysql", cfg.FormatDSN(), nil
	default:
		if !strings.HasPrefix(dsn, "file:") && dsn != ":memory:" {
			dsn = "file:" + filepath.ToSlash(dsn)
		}
		if !strings.Contains(dsn, "busy_timeout") {
			sep := "?"
			if strings.Contains(dsn, "?") {
				sep = "&"
			}
			dsn += sep + "_pragma=busy_timeout(10000)"
		}
		return "sqlite", dsn, nil
	}
}

// redact wraps err so that no secret of dsn appears in its text.
func redact(err error, dsn string) error {
	return redactpkg.Error(err, redactpkg.Secrets(dsn)...)
}
