package sqlkit

import (
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strings"
)

// Statements loads a dialect's SQL files for one table: one statement per
// file, dir/<name>.sql, named by its file; files whose name starts with
// '_' are fragments, shared text that a statement includes as {{name}}
// (dir/_record_columns.sql as {{record_columns}}). A fragment's
// "{{payload X}}" is X where the fragment is included as {{name}}, and
// NULL where it is included as {{name_without_payload}}.
type Statements struct {
	files  fs.FS
	dir    string
	table  string
	style  Style
	frags  map[string]string // {{name}} -> a fragment's text
	consts map[string]string // {{name}} -> a constant's text
	names  []string          // the statements' files
}

// payloadMarker is a fragment's column that its payload-less inclusion
// selects as NULL.
var payloadMarker = regexp.MustCompile(`\{\{payload ([^{}]+)\}\}`)

// NewStatements reads the fragments of dir for table (validated), with
// style for the named parameters and consts for the {{name}} constants the
// dialect defines in Go (values written into the SQL text).
func NewStatements(files fs.FS, dir, table string, style Style, consts map[string]string) (*Statements, error) {
	s := &Statements{files: files, dir: dir, table: table, style: style, frags: map[string]string{}, consts: consts}
	entries, err := fs.ReadDir(files, dir)
	if err != nil {
		return nil, fmt.Errorf("sqlkit: statements: %w", err)
	}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".sql") {
			continue
		}
		if !strings.HasPrefix(name, "_") {
			s.names = append(s.names, name)
			continue
		}
		b, err := fs.ReadFile(files, path.Join(dir, name))
		if err != nil {
			return nil, fmt.Errorf("sqlkit: statements: %w", err)
		}
		frag := strings.TrimSuffix(strings.TrimPrefix(name, "_"), ".sql")
		text := Render(string(b), table)
		s.frags[frag] = payloadMarker.ReplaceAllString(text, "$1")
		if text != s.frags[frag] {
			s.frags[frag+"_without_payload"] = payloadMarker.ReplaceAllString(text, "NULL")
		}
	}
	slices.Sort(s.names)
	return s, nil
}

// Files returns the file names of the statements (not the fragments), in
// order.
func (s *Statements) Files() []string { return slices.Clone(s.names) }

// Render renders src as Render does, then writes the constants into it
// (for text that is not one of dir's statements, such as migrations).
func (s *Statements) Render(src string) string {
	return s.expand(Render(src, s.table), false)
}

// expand replaces each {{name}} of the constants and, with frags, of the
// fragments.
func (s *Statements) expand(text string, frags bool) string {
	if !strings.Contains(text, "{{") {
		return text
	}
	if frags {
		for k, v := range s.frags {
			text = strings.ReplaceAll(text, "{{"+k+"}}", v)
		}
	}
	for k, v := range s.consts {
		text = strings.ReplaceAll(text, "{{"+k+"}}", v)
	}
	return text
}

// Text returns the statement of file name rendered, fragments included,
// its parameters as written (for statements bound by position elsewhere,
// such as the migrator's).
func (s *Statements) Text(name string) (string, error) {
	b, err := fs.ReadFile(s.files, path.Join(s.dir, name))
	if err != nil {
		return "", fmt.Errorf("sqlkit: statement %s: %w", name, err)
	}
	return s.expand(Render(string(b), s.table), true), nil
}

// TextFor returns the statement of file name rendered for another table
// (validated), with the constants but without fragments, which are
// rendered for the Statements' own table: a statement that includes one
// fails.
func (s *Statements) TextFor(name, table string) (string, error) {
	b, err := fs.ReadFile(s.files, path.Join(s.dir, name))
	if err != nil {
		return "", fmt.Errorf("sqlkit: statement %s: %w", name, err)
	}
	text := s.expand(Render(string(b), table), false)
	if i := strings.Index(text, "{{"); i >= 0 {
		return "", fmt.Errorf("sqlkit: statement %s: %s is not rendered for another table", name, text[i:min(len(text), i+32)])
	}
	return text, nil
}

// Query returns the statement of file name rendered, fragments included,
// with its named parameters (ParseQuery).
func (s *Statements) Query(name string) (*Query, error) {
	text, err := s.Text(name)
	if err != nil {
		return nil, err
	}
	return ParseQuery(name, text, s.style)
}
