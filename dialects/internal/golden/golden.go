// Package golden compares the SQL a dialect renders with files kept under
// its testdata/golden directory, one file per statement, byte for byte: the
// dialects' golden tests prove that a change to how statements are written
// (named parameters, shared fragments) leaves the SQL they run unchanged.
// Run a dialect's tests with -update to rewrite the files from today's code.
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
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
