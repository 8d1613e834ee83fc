package migrate

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/jitoutbox/jitoutbox/dialects"
)

// Plan returns the migration as dialects.Migration: its SQL with each Go
// step shown as a comment line, and an empty step as a comment saying so.
func (m Migration) Plan() dialects.Migration {
	if len(m.Parts) == 0 {
		return dialects.Migration{Version: m.Version, Name: m.Name, SQL: "-- empty: nothing to run on this database at this version"}
	}
	var parts []string
	for _, p := range m.Parts {
		if p.Step != "" {
			parts = append(parts, "-- step: "+p.Step+" (Go)")
			continue
		}
		parts = append(parts, strings.TrimSuffix(p.SQL, ";"))
	}
	return dialects.Migration{Version: m.Version, Name: m.Name, SQL: strings.Join(parts, ";\n")}
}

// Pending returns the migrations Run would apply on q's database, reading
// only: VersionsExists tells whether the version table exists (a missing
// one is read as no version applied), a table made before versioned
// migrations counts as version 1, and recorded versions are renumbered by
// name, as in Run.
func (m *Migrator) Pending(ctx context.Context, q dialects.Querier) ([]dialects.Migration, error) {
	recorded := map[int]string{}
	var one int
	switch err := q.QueryRowContext(ctx, m.VersionsExists).Scan(&one); {
	case err == nil:
		var err error
		if recorded, err = m.recorded(ctx, q); err != nil {
			return nil, err
		}
	case !errors.Is(err, sql.ErrNoRows):
		return nil, fmt.Errorf("%s: migrate plan: look for the version table: %w", m.Name, err)
	}
	if len(recorded) == 0 && m.LegacyExists != "" {
		switch err := q.QueryRowContext(ctx, m.LegacyExists).Scan(&one); {
		case err == nil:
			recorded[1] = m.Migrations[0].Name
		case !errors.Is(err, sql.ErrNoRows):
			return nil, fmt.Errorf("%s: migrate plan: look for an existing table: %w", m.Name, err)
		}
	}
	_, applied, err := m.reconcile(recorded)
	if err != nil {
		return nil, err
	}
	out := []dialects.Migration{}
	for _, mig := range m.Migrations {
		if !applied[mig.Version] {
			out = append(out, mig.Plan())
		}
	}
	return out, nil
}
