package migrate

import (
	"fmt"
	"slices"
)

// move renumbers one recorded migration: name, recorded as from, is to in
// this code's numbering.
type move struct {
	from, to int
	name     string
}

// reconcile compares what the version table records (version to name)
// with this code's numbering. A recorded name that has another number now
// moves to it, so that no migration runs twice and none is skipped: the
// numbering became one across databases after some databases had recorded
// their own. Moves run upward highest first (and downward lowest first),
// so a version never takes a number another row still holds. It returns
// the moves in that order and the versions applied once they are made. A
// recorded name this code does not know keeps its number and counts as
// applied, as before renumbering.
func (m *Migrator) reconcile(recorded map[int]string) ([]move, map[int]bool, error) {
	byName := make(map[string]int, len(m.Migrations))
	for _, mig := range m.Migrations {
		byName[mig.Name] = mig.Version
	}
	var up, down []move
	for v, name := range recorded {
		to, ok := byName[name]
		switch {
		case !ok || to == v:
		case to > v:
			up = append(up, move{from: v, to: to, name: name})
		default:
			down = append(down, move{from: v, to: to, name: name})
		}
	}
	slices.SortFunc(up, func(a, b move) int { return b.from - a.from })
	slices.SortFunc(down, func(a, b move) int { return a.from - b.from })
	moves := append(up, down...)
	at := make(map[int]string, len(recorded))
	for v, name := range recorded {
		at[v] = name
	}
	for _, mv := range moves {
		if other, taken := at[mv.to]; taken {
			return nil, nil, fmt.Errorf("%s: migrate: version %d is recorded as %q, which this version numbers %d, but %d is recorded as %q",
				m.Name, mv.from, mv.name, mv.to, mv.to, other)
		}
		delete(at, mv.from)
		at[mv.to] = mv.name
	}
	applied := make(map[int]bool, len(at))
	for v := range at {
		applied[v] = true
	}
	return moves, applied, nil
}
