package main

import (
	"context"
	"fmt"
	"strings"
)

// migrationJSON is one migration of migrate -plan.
type migrationJSON struct {
	Version int    `json:"version"`
	Name    string `json:"name"`
	SQL     string `json:"sql,omitempty"`
}

// migratePlan prints the migrations "outboxctl migrate" would apply, with
// their SQL when verbose, and changes nothing.
func migratePlan(ctx context.Context, e *env, verbose bool) error {
	ms, err := e.d.PendingMigrations(ctx, e.db)
	if err != nil {
		return fmt.Errorf("migrate -plan: %w", err)
	}
	if e.g.json {
		out := make([]migrationJSON, len(ms))
		for i, m := range ms {
			out[i] = migrationJSON{Version: m.Version, Name: m.Name}
			if verbose {
				out[i].SQL = m.SQL
			}
		}
		return writeJSON(e.stdout, map[string]any{"dialect": e.d.Name(), "table": e.d.Table(), "pending": out})
	}
	if len(ms) == 0 {
		_, err := fmt.Fprintf(e.stdout, "nothing to migrate: %s table %s has every migration\n", e.d.Name(), e.d.Table())
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "outboxctl migrate would apply %s to %s table %s, in order:\n", plural(len(ms), "migration"), e.d.Name(), e.d.Table())
	for _, m := range ms {
		fmt.Fprintf(&b, "  %03d_%s\n", m.Version, m.Name)
		if verbose {
			for line := range strings.Lines(m.SQL + ";\n") {
				b.WriteString("      " + line)
			}
		}
	}
	_, err = fmt.Fprint(e.stdout, b.String())
	return err
}
