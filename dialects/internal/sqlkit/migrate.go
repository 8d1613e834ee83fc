package sqlkit

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
)

// stepMarker starts a line of a migration file that names a Go step to run
// at that point ("-- step: fill-partitions"); Render keeps it out of the
// SQL text, so Schema() shows only SQL.
const stepMarker = "-- step:"

// Migration is one numbered migration file, NNN_name.sql: SQL statements,
// optionally split by Go steps.
type Migration struct {
	Version int
	Name    string
	// Parts are the file's parts in order: SQL text (statements separated
	// by ";\n") or, with Step set, the name of a Go step.
	Parts []MigrationPart
}

// MigrationPart is SQL text or a Go step.
type MigrationPart struct {
	SQL  string
	Step string
}

// SQL returns the migration's SQL text without its Go steps.
func (m Migration) SQL() string {
	var out []string
	for _, p := range m.Parts {
		if p.SQL != "" {
			out = append(out, p.SQL)
		}
	}
	return strings.Join(out, ";\n")
}

// LoadMigrations reads dir's NNN_name.sql files from fsys in version order,
// each rendered with render. Versions must run 1, 2, 3... without gaps.
func LoadMigrations(fsys fs.FS, dir string, render func(string) string) ([]Migration, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, err
	}
	var out []Migration
	for _, e := range entries {
		name := e.Name()
		num, rest, ok := strings.Cut(name, "_")
		if !ok || !strings.HasSuffix(name, ".sql") {
			continue
		}
		v, err := strconv.Atoi(num)
		if err != nil {
			return nil, fmt.Errorf("migration %s: version %q is not a number", name, num)
		}
		b, err := fs.ReadFile(fsys, path.Join(dir, name))
		if err != nil {
			return nil, err
		}
		m := Migration{Version: v, Name: strings.TrimSuffix(rest, ".sql")}
		var cur strings.Builder
		flush := func() {
			if s := render(cur.String()); s != "" {
				m.Parts = append(m.Parts, MigrationPart{SQL: s})
			}
			cur.Reset()
		}
		for line := range strings.Lines(string(b)) {
			if step, ok := strings.CutPrefix(strings.TrimSpace(line), stepMarker); ok {
				flush()
				m.Parts = append(m.Parts, MigrationPart{Step: strings.TrimSpace(step)})
				continue
			}
			cur.WriteString(line)
		}
		flush()
		out = append(out, m)
	}
	slices.SortFunc(out, func(a, b Migration) int { return a.Version - b.Version })
	for i, m := range out {
		if m.Version != i+1 {
			return nil, fmt.Errorf("migration versions must run 1, 2, 3...: found %d at position %d", m.Version, i+1)
		}
	}
	return out, nil
}

// SchemaText joins the SQL of every migration, in order, for Schema().
func SchemaText(ms []Migration) string {
	var out []string
	for _, m := range ms {
		if s := m.SQL(); s != "" {
			out = append(out, s)
		}
	}
	return strings.Join(out, ";\n") + ";\n"
}

// Migrator applies migrations through one connection or transaction. The
// dialect serialises concurrent Migrate calls with its own lock before
// calling Run.
type Migrator struct {
	Migrations []Migration
	// CreateVersions creates the <table>_migrations table if missing.
	CreateVersions string
	// ReadVersions selects the applied versions.
	ReadVersions string
	// InsertVersion records a version: args version, name, applied at.
	InsertVersion string
	// LegacyExists returns a row when the outbox table exists: a table
	// made before versioned migrations is at version 1.
	LegacyExists string
	// VersionsExists returns a row when the <table>_migrations table
	// exists (Pending, which must not create it).
	VersionsExists string
	// Steps are the Go steps migration files name.
	Steps map[string]func(ctx context.Context, q dialects.Querier) error
	// Name prefixes errors: the calling dialect's package name ("postgres").
	Name string
	// Needed is the schema version writers and relays of this code need.
	// Later migrations only add what they do without (indexes that make
	// Stats cheap, such as 004's dead-row index), so a process of this
	// version still writes and relays on a table Migrate has not reached
	// yet. A migration that writers or relays depend on must raise it.
	Needed int
}

// Run applies every migration q's database lacks, in order. Statements run
// on q; a dialect whose DDL is transactional passes a *sql.Tx.
func (m *Migrator) Run(ctx context.Context, q dialects.Querier) error {
	if _, err := q.ExecContext(ctx, m.CreateVersions); err != nil {
		return fmt.Errorf("%s: migrate: create version table: %w", m.Name, err)
	}
	applied, err := m.applied(ctx, q)
	if err != nil {
		return err
	}
	if len(applied) == 0 {
		var one int
		switch err := q.QueryRowContext(ctx, m.LegacyExists).Scan(&one); {
		case err == nil: // a table from before versioned migrations: version 1
			if err := m.record(ctx, q, m.Migrations[0]); err != nil {
				return err
			}
			applied[1] = true
		case err != sql.ErrNoRows:
			return fmt.Errorf("%s: migrate: look for an existing table: %w", m.Name, err)
		}
	}
	for _, mig := range m.Migrations {
		if applied[mig.Version] {
			continue
		}
		for _, p := range mig.Parts {
			if p.Step != "" {
				step, ok := m.Steps[p.Step]
				if !ok {
					return fmt.Errorf("%s: migrate %03d: unknown step %q", m.Name, mig.Version, p.Step)
				}
				if err := step(ctx, q); err != nil {
					return fmt.Errorf("%s: migrate %03d_%s: %s: %w", m.Name, mig.Version, mig.Name, p.Step, err)
				}
				continue
			}
			for _, stmt := range SplitStatements(p.SQL) {
				if _, err := q.ExecContext(ctx, stmt); err != nil {
					return fmt.Errorf("%s: migrate %03d_%s: %w", m.Name, mig.Version, mig.Name, err)
				}
			}
		}
		if err := m.record(ctx, q, mig); err != nil {
			return err
		}
	}
	return nil
}

// Latest is the version of the newest migration.
func (m *Migrator) Latest() int { return m.Migrations[len(m.Migrations)-1].Version }

func (m *Migrator) applied(ctx context.Context, q dialects.Querier) (map[int]bool, error) {
	rows, err := q.QueryContext(ctx, m.ReadVersions)
	if err != nil {
		return nil, fmt.Errorf("%s: migrate: read versions: %w", m.Name, err)
	}
	defer rows.Close()
	out := make(map[int]bool)
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			return nil, fmt.Errorf("%s: migrate: read versions: %w", m.Name, err)
		}
		out[v] = true
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: migrate: read versions: %w", m.Name, err)
	}
	return out, nil
}

func (m *Migrator) record(ctx context.Context, q dialects.Querier, mig Migration) error {
	if _, err := q.ExecContext(ctx, m.InsertVersion, mig.Version, mig.Name, UTC(time.Now())); err != nil {
		return fmt.Errorf("%s: migrate: record version %d: %w", m.Name, mig.Version, err)
	}
	return nil
}

// FillPartitions sets the partition of every pending and dead row (those a
// relay or an operator still acts on) whose partition is not yet set, for
// a table of n partitions: selectRows returns (seq, aggregate_type,
// aggregate_id) of those rows; update(part, seqs) sets one partition on a
// set of rows. Published rows keep the column's default; nothing reads
// their partition.
func FillPartitions(ctx context.Context, q dialects.Querier, n int, selectRows string,
	update func(ctx context.Context, part int, seqs []int64) error) error {
	rows, err := q.QueryContext(ctx, selectRows)
	if err != nil {
		return err
	}
	byPart := make(map[int][]int64)
	for rows.Next() {
		var seq int64
		var at, id string
		if err := rows.Scan(&seq, &at, &id); err != nil {
			rows.Close()
			return err
		}
		p := dialects.PartitionOf(at, id, n)
		byPart[p] = append(byPart[p], seq)
	}
	if err := rows.Err(); err != nil {
		rows.Close()
		return err
	}
	rows.Close()
	for p, seqs := range byPart {
		for len(seqs) > 0 {
			k := min(len(seqs), 1000)
			if err := update(ctx, p, seqs[:k]); err != nil {
				return err
			}
			seqs = seqs[k:]
		}
	}
	return nil
}

// LockNamespace returns a 31-bit number identifying table in advisory lock
// keys (PostgreSQL) and lock names (MySQL): FNV-1a of "jitoutbox:" + table.
func LockNamespace(table string) int32 {
	return int32(dialects.PartitionOf("jitoutbox", table, 1<<31-1))
}

// Required is the schema version the dialect's writers and relays check
// for (Dialect.Partitions): the newest migration, at most m.Needed.
func (m *Migrator) Required() int { return min(m.Latest(), m.Needed) }

// PartitionsReadError is the error of Dialect.Partitions when its read of
// table failed: dialects.ErrSchemaVersion when the table has no meta row
// or missing says a table, column or function of this version is missing
// (the dialect's reading of its driver's error), else err wrapped as
// dialect's, which the relay retries (the server is down or restarting).
func PartitionsReadError(ctx context.Context, dialect, table string, err error, missing bool) error {
	if ctx.Err() == nil && (errors.Is(err, sql.ErrNoRows) || missing) {
		return fmt.Errorf("%w: table %s: %w", dialects.ErrSchemaVersion, table, err)
	}
	return fmt.Errorf("%s: read partition count: %w", dialect, err)
}

// CheckPartitions applies Dialect.Partitions' rules to what a dialect's
// partitions.sql read for table: the schema version (NULL before versioned
// migrations) must be at least Required, and a configured count (0: any)
// must equal the table's n. It returns n.
func (m *Migrator) CheckPartitions(table string, n int, version sql.NullInt64, configured int) (int, error) {
	if latest := m.Required(); int(version.Int64) < latest {
		return 0, fmt.Errorf("%w: table %s is at version %d, this version needs %d", dialects.ErrSchemaVersion, table, version.Int64, latest)
	}
	if configured != 0 && configured != n {
		return 0, fmt.Errorf("%w: table %s has %d partitions, the dialect was given %d (WithPartitions)",
			dialects.ErrPartitionMismatch, table, n, configured)
	}
	return n, nil
}
