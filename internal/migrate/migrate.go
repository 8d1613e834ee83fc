// Package migrate is the migrator of jitoutbox's tables: numbered
// migration files (NNN_name.sql) applied in order and recorded in a
// version table, function files installed after them, and a plan of what
// would run. The dialect packages (one line of migrations per outbox
// table) and inbox (a second line, its own version table) share it; each
// supplies its SQL and its way of keeping concurrent Migrate calls apart.
package migrate

import (
	"context"
	"database/sql"
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
// at that point ("-- step: fill-partitions"); the step is kept out of the
// SQL text, so Schema() shows only SQL.
const stepMarker = "-- step:"

// Migration is one numbered migration file, NNN_name.sql: SQL statements,
// optionally split by Go steps. A file with neither is an empty step: the
// version exists so that version N means the same schema on every
// database, and this database needs nothing at N.
type Migration struct {
	Version int
	Name    string
	// Parts are the file's parts in order: SQL text (statements separated
	// by ";\n") or, with Step set, the name of a Go step.
	Parts []Part
}

// Part is SQL text or a Go step.
type Part struct {
	SQL  string
	Step string
}

// SQL returns the migration's SQL text without its Go steps.
func (m Migration) SQL() string {
	var out []string
	for _, p := range m.Parts {
		if s := strings.TrimSuffix(p.SQL, ";"); s != "" {
			out = append(out, s)
		}
	}
	return strings.Join(out, ";\n")
}

// Load reads dir's NNN_name.sql files from fsys in version order, each
// rendered with render (which drops comment lines). Versions must run 1,
// 2, 3... without gaps, and names must differ: Run finds a migration that
// changed number by its name.
func Load(fsys fs.FS, dir string, render func(string) string) ([]Migration, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	var out []Migration
	names := map[string]bool{}
	for _, e := range entries {
		name := e.Name()
		num, rest, ok := strings.Cut(name, "_")
		if !ok || !strings.HasSuffix(name, ".sql") {
			continue
		}
		v, err := strconv.Atoi(num)
		if err != nil {
			return nil, fmt.Errorf("migrate: migration %s: version %q is not a number: %w", name, num, err)
		}
		b, err := fs.ReadFile(fsys, path.Join(dir, name))
		if err != nil {
			return nil, fmt.Errorf("migrate: %w", err)
		}
		m := Migration{Version: v, Name: strings.TrimSuffix(rest, ".sql")}
		if names[m.Name] {
			return nil, fmt.Errorf("migrate: migration %s: name %q is taken by another version", name, m.Name)
		}
		names[m.Name] = true
		var cur strings.Builder
		flush := func() {
			if s := render(cur.String()); s != "" {
				m.Parts = append(m.Parts, Part{SQL: s})
			}
			cur.Reset()
		}
		for line := range strings.Lines(string(b)) {
			if step, ok := strings.CutPrefix(strings.TrimSpace(line), stepMarker); ok {
				flush()
				m.Parts = append(m.Parts, Part{Step: strings.TrimSpace(step)})
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
			return nil, fmt.Errorf("migrate: versions must run 1, 2, 3...: found %d at position %d", m.Version, i+1)
		}
	}
	return out, nil
}

// LoadFunctions reads dir's .sql files from fsys in name order, each
// rendered with render: the current functions, which Run installs after
// the migrations.
func LoadFunctions(fsys fs.FS, dir string, render func(string) string) ([]string, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	var out []string
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".sql") {
			continue
		}
		b, err := fs.ReadFile(fsys, path.Join(dir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("migrate: %w", err)
		}
		if s := render(string(b)); s != "" {
			out = append(out, s)
		}
	}
	return out, nil
}

// Schema joins the SQL of every migration, in order, then every function,
// for Schema(): statements separated by ";\n".
func (m *Migrator) Schema() string {
	var out []string
	for _, mig := range m.Migrations {
		if s := mig.SQL(); s != "" {
			out = append(out, s)
		}
	}
	for _, f := range m.Functions {
		out = append(out, strings.TrimSuffix(f, ";"))
	}
	return strings.Join(out, ";\n") + ";\n"
}

// Migrator applies migrations through one connection or transaction.
// RunInTx, RunNamedLock and RunImmediate take the database's lock, so that
// concurrent Migrate calls run one after the other, and call Run.
type Migrator struct {
	Migrations []Migration
	// Functions are statements (CREATE OR REPLACE FUNCTION ...) that Run
	// executes after the migrations, every time: the functions the code of
	// this version calls, under versioned names, so that changing one
	// needs no migration, only a new name (see docs/schema.md).
	Functions []string
	// CreateVersions creates the version table if missing.
	CreateVersions string
	// ReadVersions selects the recorded (version, name) pairs.
	ReadVersions string
	// InsertVersion records a version: args version, name, applied at.
	InsertVersion string
	// MoveVersion changes a recorded version: args new version, old
	// version. Needed only once a migration has changed its number.
	MoveVersion string
	// LegacyExists, if set, returns a row when the table exists: a table
	// made before versioned migrations is at version 1.
	LegacyExists string
	// VersionsExists returns a row when the version table exists
	// (Pending, which must not create it).
	VersionsExists string
	// Steps are the Go steps migration files name.
	Steps map[string]func(ctx context.Context, q dialects.Querier) error
	// Name prefixes errors: the calling package's name ("postgres").
	Name string
	// Needed is the schema version writers and relays of this code need.
	// Later migrations only add what they do without (indexes that make
	// Stats cheap, such as 004's dead-row index), so a process of this
	// version still writes and relays on a table Migrate has not reached
	// yet. A migration that writers or relays depend on must raise it.
	Needed int
	// Time converts the applied-at time into the value the version table
	// stores (nil: a UTC time.Time to the microsecond).
	Time func(time.Time) any
}

// Run applies every migration q's database lacks, in order, then the
// functions. Statements run on q; a database whose DDL is transactional
// passes a *sql.Tx.
func (m *Migrator) Run(ctx context.Context, q dialects.Querier) error {
	if _, err := q.ExecContext(ctx, m.CreateVersions); err != nil {
		return fmt.Errorf("%s: migrate: create version table: %w", m.Name, err)
	}
	recorded, err := m.recorded(ctx, q)
	if err != nil {
		return err
	}
	if len(recorded) == 0 && m.LegacyExists != "" {
		var one int
		switch err := q.QueryRowContext(ctx, m.LegacyExists).Scan(&one); {
		case err == nil: // a table from before versioned migrations: version 1
			if err := m.record(ctx, q, m.Migrations[0]); err != nil {
				return err
			}
			recorded[1] = m.Migrations[0].Name
		case err != sql.ErrNoRows:
			return fmt.Errorf("%s: migrate: look for an existing table: %w", m.Name, err)
		}
	}
	moves, applied, err := m.reconcile(recorded)
	if err != nil {
		return err
	}
	for _, mv := range moves {
		if m.MoveVersion == "" {
			return fmt.Errorf("%s: migrate: version %d (%s) is now %d, and the migrator has no MoveVersion", m.Name, mv.from, mv.name, mv.to)
		}
		if _, err := q.ExecContext(ctx, m.MoveVersion, mv.to, mv.from); err != nil {
			return fmt.Errorf("%s: migrate: renumber %03d_%s to %03d: %w", m.Name, mv.from, mv.name, mv.to, err)
		}
	}
	for _, mig := range m.Migrations {
		if applied[mig.Version] {
			continue
		}
		if err := m.apply(ctx, q, mig); err != nil {
			return err
		}
		if err := m.record(ctx, q, mig); err != nil {
			return err
		}
	}
	for _, f := range m.Functions {
		for _, stmt := range SplitStatements(f) {
			if _, err := q.ExecContext(ctx, stmt); err != nil {
				return fmt.Errorf("%s: migrate: install functions: %w", m.Name, err)
			}
		}
	}
	return nil
}

// apply runs mig's statements and Go steps in order.
func (m *Migrator) apply(ctx context.Context, q dialects.Querier, mig Migration) error {
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
	return nil
}

// Latest is the version of the newest migration.
func (m *Migrator) Latest() int { return m.Migrations[len(m.Migrations)-1].Version }

// Required is the schema version writers and relays check for: the
// newest migration, at most Needed.
func (m *Migrator) Required() int { return min(m.Latest(), m.Needed) }

// recorded reads the version table: version to name.
func (m *Migrator) recorded(ctx context.Context, q dialects.Querier) (map[int]string, error) {
	rows, err := q.QueryContext(ctx, m.ReadVersions)
	if err != nil {
		return nil, fmt.Errorf("%s: migrate: read versions: %w", m.Name, err)
	}
	defer rows.Close()
	out := make(map[int]string)
	for rows.Next() {
		var v int
		var name string
		if err := rows.Scan(&v, &name); err != nil {
			return nil, fmt.Errorf("%s: migrate: read versions: %w", m.Name, err)
		}
		out[v] = name
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: migrate: read versions: %w", m.Name, err)
	}
	return out, nil
}

func (m *Migrator) record(ctx context.Context, q dialects.Querier, mig Migration) error {
	now := time.Now().UTC().Truncate(time.Microsecond)
	var at any = now
	if m.Time != nil {
		at = m.Time(now)
	}
	if _, err := q.ExecContext(ctx, m.InsertVersion, mig.Version, mig.Name, at); err != nil {
		return fmt.Errorf("%s: migrate: record version %d: %w", m.Name, mig.Version, err)
	}
	return nil
}
