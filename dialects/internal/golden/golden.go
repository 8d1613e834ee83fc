// Package golden compares the SQL a dialect renders with files kept under
// its testdata/golden directory, one file per statement, byte for byte: the
// dialects' golden tests prove that a change to how statements are written
// (named parameters, shared fragments) leaves the SQL they run unchanged.
// Run a dialect's tests with -update to rewrite the files from today's code.
package golden

import (
	"database/sql"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/jitoutbox/jitoutbox/dialects/internal/sqlkit"
)

var update = flag.Bool("update", false, "rewrite the golden SQL files under testdata/golden")

// Check compares got (file name -> content) with the files of dir: every
// entry must have a file with exactly its content, and every file of dir an
// entry. With -update it writes got to dir instead and removes the files
// no entry names.
func Check(t *testing.T, dir string, got map[string]string) {
	t.Helper()
	names := make([]string, 0, len(got))
	for name := range got {
		names = append(names, name)
	}
	slices.Sort(names)
	if *update {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, name := range names {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(got[name]), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("golden: %v (run the test with -update to write the files)", err)
	}
	for _, e := range entries {
		if _, ok := got[e.Name()]; ok {
			continue
		}
		if *update {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
				t.Fatal(err)
			}
			continue
		}
		t.Errorf("golden: %s has no statement of that name (stale file?)", filepath.Join(dir, e.Name()))
	}
	for _, name := range names {
		want, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Errorf("golden: %v", err)
			continue
		}
		if g := got[name]; g != string(want) {
			t.Errorf("golden: %s differs:\n%s", filepath.Join(dir, name), firstDiff(string(want), g))
		}
	}
}

// firstDiff shows the first line where got departs from want.
func firstDiff(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < max(len(wl), len(gl)); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			return "line " + strconv.Itoa(i+1) + ":\n  want: " + w + "\n  got:  " + g
		}
	}
	return "(same lines)"
}

// Section is one statement's rendering for table as part of its golden
// file, which holds one such section per table: the SQL under a
// "-- table: <name>" line.
func Section(table, sql string) string {
	return "-- table: " + table + "\n" + sql + "\n"
}

// Test renders, for each of tables, the statements stmts returns (file
// name -> SQL as run) and compares them with testdata/golden, one section
// per table in each file.
func Test(t *testing.T, tables []string, stmts func(table string) map[string]string) {
	t.Helper()
	got := map[string]string{}
	for _, table := range tables {
		for name, q := range stmts(table) {
			got[name] += Section(table, q)
		}
	}
	Check(t, "testdata/golden", got)
}

// Statements returns the statements of st by file name as run, leaving out
// the files of skip: a statement with named parameters with its
// placeholders (bound, when bind is not nil, with bind's value for each
// name, for the statements whose text depends on them: lists), one with
// positional parameters (the migrator's) as written.
func Statements(t *testing.T, st *sqlkit.Statements, bind func(q *sqlkit.Query, name string) any, skip ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, name := range st.Files() {
		if slices.Contains(skip, name) {
			continue
		}
		q, err := st.Query(name)
		if err != nil {
			text, err := st.Text(name)
			if err != nil {
				t.Fatal(err)
			}
			out[name] = text
			continue
		}
		if bind == nil {
			out[name] = q.SQL()
			continue
		}
		var args []sql.NamedArg
		for _, n := range q.Names() {
			args = append(args, sql.Named(n, bind(q, n)))
		}
		text, _, err := q.Bind(args...)
		if err != nil {
			t.Fatal(err)
		}
		out[name] = text
	}
	return out
}
