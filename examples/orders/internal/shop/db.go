package shop

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	gomysql "github.com/go-sql-driver/mysql"
	_ "github.com/jackc/pgx/v5/stdlib" // "pgx" driver

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/dialects/mysql"
	"github.com/jitoutbox/jitoutbox/dialects/postgres"
)

// Dialect names accepted by Open.
const (
	Postgres = "postgres"
	MySQL    = "mysql"
)

// ErrUnknownDialect is returned by Open for a dialect other than Postgres and
// MySQL.
var ErrUnknownDialect = errors.New("shop: unknown dialect (use postgres or mysql)")

// Open opens and pings the database: PostgreSQL through pgx's stdlib driver,
// MySQL/MariaDB through go-sql-driver/mysql with parseTime=true and loc=UTC
// forced. It returns the database and the outbox dialect.
func Open(ctx context.Context, dialect, dsn string) (*sql.DB, dialects.Dialect, error) {
	var (
		driver string
		d      dialects.Dialect
		err    error
	)
	switch dialect {
	case Postgres:
		driver = "pgx"
		d, err = postgres.New()
	case MySQL:
		driver = "mysql"
		cfg, perr := gomysql.ParseDSN(dsn)
		if perr != nil {
			// The error may quote the DSN; never show it.
			return nil, nil, errors.New("shop: invalid MySQL DSN")
		}
		cfg.ParseTime = true
		cfg.Loc = time.UTC
		dsn = cfg.FormatDSN()
		d, err = mysql.New()
	default:
		return nil, nil, fmt.Errorf("%w: %q", ErrUnknownDialect, dialect)
	}
	if err != nil {
		return nil, nil, err
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		return nil, nil, fmt.Errorf("shop: open %s: %w", dialect, err)
	}
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := db.PingContext(pctx); err != nil {
		db.Close()
		return nil, nil, fmt.Errorf("shop: connect to %s: %w", dialect, err)
	}
	return db, d, nil
}

// Placeholder returns the n-th (1-based) bind placeholder of the dialect.
func Placeholder(dialect string, n int) string {
	if dialect == Postgres {
		return fmt.Sprintf("$%d", n)
	}
	return "?"
}
