package sqlkit

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// fragmentColumns returns the columns a dialect's fragment selects, by the
// name of the column each reads ("o.id::text" is id, "NULL" stays NULL,
// the partition count subquery is partitions).
func fragmentColumns(t *testing.T, file string) []string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	text := payloadMarker.ReplaceAllString(Render(string(b), "outbox"), "$1")
	text = strings.ReplaceAll(text, "(SELECT m.partitions FROM outbox_meta m)", "o.partitions")
	cast := regexp.MustCompile(`(::[a-z]+)+$`)
	var cols []string
	for _, c := range strings.Split(text, ",") {
		c = cast.ReplaceAllString(strings.TrimSpace(c), "")
		cols = append(cols, strings.TrimPrefix(c, "o."))
	}
	return cols
}

// TestRecordColumnsFragment: each dialect's _record_columns.sql selects
// the columns ScanRead scans, in its order (PostgreSQL's ending with
// payload_json), so that the reads, which include the fragment, and the
// scan agree.
func TestRecordColumnsFragment(t *testing.T) {
	for dialect, json := range map[string]bool{"postgres": true, "mysql": false, "sqlite": false} {
		want := slices.Clone(readColumnNames[:RecordColumns])
		if json {
			want = append(want, "payload_json")
		}
		if got := fragmentColumns(t, "../../"+dialect+"/sql/_record_columns.sql"); !slices.Equal(got, want) {
			t.Errorf("%s: _record_columns.sql selects %v, ScanRead scans %v", dialect, got, want)
		}
	}
}

// TestInspectColumnsFragment: each dialect's _inspect_columns.sql selects
// the columns rowScan scans, in its order (NULL for payload_json where the
// dialect keeps no JSON column).
func TestInspectColumnsFragment(t *testing.T) {
	for dialect, json := range map[string]bool{"postgres": true, "mysql": false, "sqlite": false} {
		want := slices.Clone(inspectColumnNames)
		if !json {
			want[slices.Index(want, "payload_json")] = "NULL"
		}
		if got := fragmentColumns(t, "../../"+dialect+"/sql/_inspect_columns.sql"); !slices.Equal(got, want) {
			t.Errorf("%s: _inspect_columns.sql selects %v, rowScan scans %v", dialect, got, want)
		}
	}
}
