package migrate

import (
	"fmt"
	"slices"
)

// Upto returns m with its migrations up to version and no functions (those
// of this version, installed after every migration): the migrator of an
// earlier release, for upgrade tests with data in the table.
func (m Migrator) Upto(version int) Migrator {
	m.Migrations = m.Migrations[:version:version]
	m.Functions = nil
	return m
}

// Renumbered returns m with the migrations named names, in that order,
// numbered 1, 2, 3..., and no functions: the migrator of code of an earlier
// numbering, for upgrade tests of the renumbering.
func (m Migrator) Renumbered(names ...string) (Migrator, error) {
	out := make([]Migration, 0, len(names))
	for i, name := range names {
		j := slices.IndexFunc(m.Migrations, func(mig Migration) bool { return mig.Name == name })
		if j < 0 {
			return Migrator{}, fmt.Errorf("%s: migrate: no migration named %q", m.Name, name)
		}
		mig := m.Migrations[j]
		mig.Version = i + 1
		out = append(out, mig)
	}
	m.Migrations, m.Functions = out, nil
	return m, nil
}
