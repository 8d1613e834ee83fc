package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
)

// -all-tables: the commands that read every outbox table a pattern finds
// (a schema per tenant on PostgreSQL, a database per tenant on MySQL,
// tables of one file on SQLite).

// tableReaders bounds the tables read at the same time: enough for 500
// tables to take seconds, few enough to leave the database's connections to
// the services and relays.
const tableReaders = 4

// Health of a table in status -all-tables and on the console's tables page.
const (
	// healthOK: the table was read.
	healthOK = "ok"
	// healthSchema: the table is not at this version (run migrate), or is
	// gone (dropped after it was found): dialects.ErrSchemaVersion.
	healthSchema = "schema_version"
	// healthError: the table could not be read for another reason.
	healthError = "error"
)

// errNoTableRead is returned by status -all-tables when it read no table:
// none matched, or none could be read (each one's error is printed).
var errNoTableRead = errors.New("no outbox table could be read")

// allTablesCommands are the commands that take -all-tables.
var allTablesCommands = map[string]bool{"status": true, "serve": true}

// checkAllTables checks -all-tables and -tables-pattern for command cmd,
// once the flags and their variables are parsed (set holds those given on
// the command line). -table and -all-tables exclude each other at the same
// level; a flag on the command line wins over the other's variable.
// -all-tables is refused, as a usage error, by the commands that act on one
// table; -tables-pattern on the command line needs -all-tables (its
// variable alone is ignored, as a setting the console's environment may
// carry).
func (g *globals) checkAllTables(cmd string, set map[string]bool, getenv func(string) string) error {
	tableEnv := getenv(envName(cmd, "table")) != ""
	switch {
	case !g.allTables:
	case set["table"] && set["all-tables"]:
		return fmt.Errorf("%w: give -table or -all-tables, not both", errUsage)
	case set["table"]:
		g.allTables = false // -table wins over $JITOUTBOX_ALL_TABLES
	case tableEnv && !set["all-tables"]:
		return fmt.Errorf("%w: $%s and $%s are both set: give one (a flag on the command line wins)", errUsage,
			envName(cmd, "table"), envName(cmd, "all-tables"))
	}
	if !g.allTables {
		if set["tables-pattern"] {
			return fmt.Errorf("%w: -tables-pattern goes with -all-tables", errUsage)
		}
		return nil
	}
	if !allTablesCommands[cmd] {
		return fmt.Errorf("%w: %s acts on one table: give -table instead of -all-tables (only status and serve read every table)", errUsage, cmd)
	}
	return nil
}

// defaultPattern is the pattern of every outbox table of the database:
// every schema's (PostgreSQL) or database's (MySQL) outbox tables, every
// one of the file on SQLite.
func defaultPattern(dialect string) string {
	if dialect == "sqlite" {
		return "*"
	}
	return "*.*"
}

// findTables returns the outbox tables of e's database that -tables-pattern
// matches, sorted; a malformed pattern is a usage error.
func findTables(ctx context.Context, e *env) ([]string, error) {
	tables, err := e.d.FindTables(ctx, e.db, e.g.pattern)
	if errors.Is(err, dialects.ErrInvalidPattern) {
		return nil, fmt.Errorf("%w: -tables-pattern: %w", errUsage, err)
	}
	if err != nil {
		return nil, fmt.Errorf("find tables matching %q: %w", e.g.pattern, err)
	}
	return tables, nil
}

// tableStatusJSON is one table's line of status -all-tables and row of the
// console's tables page. A table that could not be read has its Health
// and Error, and zeros.
type tableStatusJSON struct {
	Table string `json:"table"`
	// Health is healthOK, healthSchema or healthError.
	Health                  string     `json:"health"`
	Error                   string     `json:"error,omitempty"`
	Pending                 int64      `json:"pending"`
	Scheduled               int64      `json:"scheduled"`
	OldestPending           *time.Time `json:"oldest_pending"`
	OldestPendingAgeSeconds float64    `json:"oldest_pending_age_seconds"`
	// Blocked counts the aggregates held back, BlockedDead those behind a
	// dead event (the others back off until their next attempt).
	Blocked      int64 `json:"blocked"`
	BlockedDead  int64 `json:"blocked_dead"`
	Dead         int64 `json:"dead"`
	BadPartition int64 `json:"bad_partition"`
	// Relays counts the live relays; Owned the partitions they own out of
	// Partitions.
	Relays     int `json:"relays"`
	Owned      int `json:"owned"`
	Partitions int `json:"partitions"`
}

// OK reports whether the table was read.
func (t *tableStatusJSON) OK() bool { return t.Health == healthOK }

// OldestAge words the oldest pending row's age ("-" for none).
func (t *tableStatusJSON) OldestAge() string {
	if t.OldestPending == nil {
		return "-"
	}
	return age(time.Duration(t.OldestPendingAgeSeconds * float64(time.Second)))
}

// readTable reads one table's status at now: its schema version (through
// Partitions, which fails with dialects.ErrSchemaVersion on a table not at
// this version or gone), its counts and its owners. An error is kept in
// the result, redacted, never returned: one table's fault is its own.
func readTable(ctx context.Context, db *sql.DB, d dialects.Dialect, now time.Time, redact func(error) error) tableStatusJSON {
	t := tableStatusJSON{Table: d.Table(), Health: healthOK}
	fail := func(what string, err error) tableStatusJSON {
		t.Health = healthError
		if errors.Is(err, dialects.ErrSchemaVersion) {
			t.Health = healthSchema
		}
		t.Error = redact(fmt.Errorf("%s: %w", what, err)).Error()
		return t
	}
	n, err := d.Partitions(ctx, db)
	if err != nil {
		return fail("read schema version", err)
	}
	s, err := d.Stats(ctx, db)
	if err != nil {
		return fail("read stats", err)
	}
	o, err := d.Ownership(ctx, db, now)
	if err != nil {
		return fail("read ownership", err)
	}
	t.Pending, t.Scheduled, t.Dead, t.BadPartition = s.Pending, s.Scheduled, s.Dead, s.BadPartition
	t.Blocked, t.BlockedDead = s.BlockedDead+s.BlockedRetry, s.BlockedDead
	if t.OldestPending = timePtr(s.OldestPending); t.OldestPending != nil {
		t.OldestPendingAgeSeconds = max(now.Sub(s.OldestPending), 0).Seconds()
	}
	t.Partitions, t.Relays, t.Owned = n, len(o.Relays), len(o.Partitions)-len(o.Free())
	return t
}

// readTables reads the tables' status at now, tableReaders at a time, in
// the order given; dialectOf gives each table's dialect (an error is that
// table's). It returns when every read has; a cancelled ctx ends each read
// with its error.
func readTables(ctx context.Context, db *sql.DB, tables []string, dialectOf func(string) (dialects.Dialect, error),
	now time.Time, redact func(error) error) []tableStatusJSON {
	out := make([]tableStatusJSON, len(tables))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(tableReaders, len(tables)) {
		wg.Go(func() {
			for i := range next {
				d, err := dialectOf(tables[i])
				if err != nil {
					out[i] = tableStatusJSON{Table: tables[i], Health: healthError, Error: redact(err).Error()}
					continue
				}
				out[i] = readTable(ctx, db, d, now, redact)
			}
		})
	}
	for i := range tables {
		next <- i
	}
	close(next)
	wg.Wait()
	return out
}

// allTablesJSON is status -all-tables.
type allTablesJSON struct {
	Dialect string            `json:"dialect"`
	Pattern string            `json:"pattern"`
	Tables  []tableStatusJSON `json:"tables"`
	// Unreadable counts the tables whose Health is not ok.
	Unreadable int `json:"unreadable"`
}

// statusAllTables is status -all-tables: one line (one object of "tables"
// in JSON) per table the pattern finds. It fails with errNoTableRead, after
// printing, when no table could be read. status's -blockers and
// -retention, which are for one table, are refused.
func statusAllTables(ctx context.Context, e *env) error {
	if e.cmdline["blockers"] || e.cmdline["retention"] {
		return fmt.Errorf("%w: -blockers and -retention are for one table: with -all-tables, status counts the blocked aggregates per table", errUsage)
	}
	tables, err := findTables(ctx, e)
	if err != nil {
		return fmt.Errorf("status: %w", err)
	}
	dialectOf := func(name string) (dialects.Dialect, error) { return newDialect(e.d.Name(), name) }
	out := allTablesJSON{Dialect: e.d.Name(), Pattern: e.g.pattern,
		Tables: readTables(ctx, e.db, tables, dialectOf, time.Now(), e.redact)}
	for _, t := range out.Tables {
		if !t.OK() {
			out.Unreadable++
		}
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("status: %w", err)
	}
	if e.g.json {
		err = writeJSON(e.stdout, out)
	} else {
		err = writeAllTables(e.stdout, out)
	}
	if err != nil {
		return err
	}
	if len(tables) == 0 {
		return fmt.Errorf("status: %w: no outbox table matches %q", errNoTableRead, e.g.pattern)
	}
	if out.Unreadable == len(tables) {
		return fmt.Errorf("status: %w: each of the %s failed", errNoTableRead, plural(len(tables), "table"))
	}
	return nil
}

// writeAllTables prints status -all-tables for humans: a line per table,
// the error of each unreadable one at its end.
func writeAllTables(stdout io.Writer, out allTablesJSON) error {
	w := table(stdout)
	fmt.Fprintln(w, "TABLE\tHEALTH\tPENDING\tSCHEDULED\tOLDEST PENDING\tBLOCKED\tDEAD\tBAD PARTITION\tRELAYS\tOWNED\tERROR")
	for _, t := range out.Tables {
		if !t.OK() {
			fmt.Fprintf(w, "%s\t%s\t-\t-\t-\t-\t-\t-\t-\t-\t%s\n", safe(t.Table), t.Health, safe(t.Error))
			continue
		}
		blocked := strconv.FormatInt(t.Blocked, 10)
		if t.BlockedDead > 0 {
			blocked += " (" + strconv.FormatInt(t.BlockedDead, 10) + " dead)"
		}
		fmt.Fprintf(w, "%s\t%s\t%d\t%d\t%s\t%s\t%d\t%d\t%d\t%d/%d\t\n", safe(t.Table), t.Health, t.Pending, t.Scheduled,
			t.OldestAge(), blocked, t.Dead, t.BadPartition, t.Relays, t.Owned, t.Partitions)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(stdout, "%s matching %s on %s, %d unreadable\n", plural(len(out.Tables), "table"), safe(out.Pattern),
		out.Dialect, out.Unreadable)
	return err
}
