package sqlkit

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/jitoutbox/jitoutbox/dialects"
)

// TestLongestSuffix: no dialect derives a name from the table with a
// suffix longer than LongestSuffix (every .sql file and the Go-made
// idempotency index name), so MaxTableName leaves room for each.
func TestLongestSuffix(t *testing.T) {
	re := regexp.MustCompile(`\{\{(?:table|name)\}\}(_[A-Za-z0-9_]*)`)
	longest, found := "", 0
	for _, dir := range []string{"../../postgres/sql", "../../mysql/sql", "../../sqlite/sql"} {
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".sql") {
				return err
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			for _, m := range re.FindAllStringSubmatch(string(b), -1) {
				found++
				if len(m[1]) > len(longest) {
					longest = m[1]
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if found < 50 {
		t.Fatalf("found %d derived names in the dialects' SQL: the walk missed the files", found)
	}
	if s := strings.TrimPrefix(IdempotencyIndex("t"), "t"); len(s) > len(longest) {
		longest = s
	}
	if len(longest) != LongestSuffix {
		t.Fatalf("longest derived suffix %q has %d bytes, LongestSuffix is %d", longest, len(longest), LongestSuffix)
	}
}

func TestValidateTableFor(t *testing.T) {
	max := MaxTableName(63)
	for _, name := range []string{strings.Repeat("a", max), "app." + strings.Repeat("a", max), strings.Repeat("s", 63) + ".t"} {
		if err := ValidateTableFor(name, "postgres", 63); err != nil {
			t.Errorf("ValidateTableFor(%d bytes) = %v", len(name), err)
		}
	}
	for _, name := range []string{strings.Repeat("a", max+1), "app." + strings.Repeat("a", max+1)} {
		err := ValidateTableFor(name, "postgres", 63)
		var tne *dialects.TableNameError
		if !errors.Is(err, dialects.ErrInvalidTable) || !errors.As(err, &tne) || tne.Max != max || tne.IdentLimit != 63 ||
			!strings.Contains(err.Error(), "at most 43 characters") || !strings.Contains(err.Error(), "63-byte") {
			t.Errorf("ValidateTableFor(%d bytes) = %v, want a TableNameError saying 43 and 63", len(name), err)
		}
	}
	if err := ValidateTableFor("a;b", "postgres", 63); !errors.Is(err, dialects.ErrInvalidTable) {
		t.Errorf("ValidateTableFor(a;b) = %v", err)
	}
}
