package sqlkit

import (
	"database/sql"
	"errors"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"
)

// TestBindStyles: each style renders its placeholders; a name used twice
// binds twice with '?' and once, under one number, in the numbered styles
// (numbered in order of first appearance); the arguments follow by name,
// whatever order the call gives them in.
func TestBindStyles(t *testing.T) {
	const src = "SELECT 'a@b ?', \"@x\", `$1` /* ? @y */ FROM t WHERE a = @after AND b <= @now AND c > @now::int LIMIT @limit"
	args := []sql.NamedArg{sql.Named("limit", 5), sql.Named("now", "N"), sql.Named("after", 7)}
	for _, tc := range []struct {
		style Style
		sql   string
		args  []any
	}{
		{Question, "SELECT 'a@b ?', \"@x\", `$1` /* ? @y */ FROM t WHERE a = ? AND b <= ? AND c > ?::int LIMIT ?", []any{7, "N", "N", 5}},
		{Dollar, "SELECT 'a@b ?', \"@x\", `$1` /* ? @y */ FROM t WHERE a = $1 AND b <= $2 AND c > $2::int LIMIT $3", []any{7, "N", 5}},
		{QuestionNumbered, "SELECT 'a@b ?', \"@x\", `$1` /* ? @y */ FROM t WHERE a = ?1 AND b <= ?2 AND c > ?2::int LIMIT ?3", []any{7, "N", 5}},
	} {
		q, err := ParseQuery("q.sql", src, tc.style)
		if err != nil {
			t.Fatal(err)
		}
		if got := q.Names(); !reflect.DeepEqual(got, []string{"after", "now", "limit"}) {
			t.Fatalf("Names = %v", got)
		}
		text, got, err := q.Bind(args...)
		if err != nil {
			t.Fatal(err)
		}
		if text != tc.sql || q.SQL() != tc.sql {
			t.Errorf("style %d: SQL\n%s\nwant\n%s", tc.style, text, tc.sql)
		}
		if !reflect.DeepEqual(got, tc.args) {
			t.Errorf("style %d: args %v, want %v", tc.style, got, tc.args)
		}
	}
}

// TestBindFailsLoudly: a missing, unknown or repeated name, and a list
// given no list or an empty one, fail with ErrBind naming the statement
// and the parameter.
func TestBindFailsLoudly(t *testing.T) {
	q, err := ParseQuery("read.sql", "SELECT 1 WHERE a IN (@parts...) AND b = @after", Question)
	if err != nil {
		t.Fatal(err)
	}
	parts := sql.Named("parts", []int{1})
	for _, tc := range []struct {
		args []sql.NamedArg
		want string
	}{
		{[]sql.NamedArg{parts}, "missing parameter @after"},
		{[]sql.NamedArg{parts, sql.Named("after", 1), sql.Named("limit", 2)}, "unknown parameter @limit"},
		{[]sql.NamedArg{parts, sql.Named("after", 1), sql.Named("after", 2)}, "parameter @after given twice"},
		{[]sql.NamedArg{sql.Named("parts", 3), sql.Named("after", 1)}, "int is not a list"},
		{[]sql.NamedArg{sql.Named("parts", []int{}), sql.Named("after", 1)}, "empty list"},
		{[]sql.NamedArg{sql.Named("parts", [][]any{{1, 2}, {3}}), sql.Named("after", 1)}, "different or no width"},
	} {
		_, _, err := q.Bind(tc.args...)
		if !errors.Is(err, ErrBind) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "read.sql") {
			t.Errorf("Bind(%v) = %v, want ErrBind saying %q", tc.args, err, tc.want)
		}
	}
}

// TestBindLists: a list expands to one '?' per element, a list of tuples
// to one group per tuple, and its elements take the list's place among the
// arguments.
func TestBindLists(t *testing.T) {
	q, err := ParseQuery("q.sql", "SELECT @a, x IN (@parts...), y IN (@aggs...), @a", Question)
	if err != nil {
		t.Fatal(err)
	}
	if !q.IsList("parts") || q.IsList("a") || q.SQL() != "" {
		t.Fatalf("IsList(parts) %v, IsList(a) %v, SQL %q", q.IsList("parts"), q.IsList("a"), q.SQL())
	}
	text, args, err := q.Bind(sql.Named("a", "A"), sql.Named("parts", []int64{4, 5, 6}),
		sql.Named("aggs", [][]any{{1, "t", "x"}, {2, "t", "y"}}))
	if err != nil {
		t.Fatal(err)
	}
	if want := "SELECT ?, x IN (?, ?, ?), y IN ((?, ?, ?), (?, ?, ?)), ?"; text != want {
		t.Fatalf("SQL %q, want %q", text, want)
	}
	if want := []any{"A", int64(4), int64(5), int64(6), 1, "t", "x", 2, "t", "y", "A"}; !reflect.DeepEqual(args, want) {
		t.Fatalf("args %v, want %v", args, want)
	}
}

// TestParseQueryRefuses: a positional placeholder in a named statement, a
// list in a numbered style and a name both list and value are refused.
func TestParseQueryRefuses(t *testing.T) {
	for _, tc := range []struct {
		src   string
		style Style
		want  string
	}{
		{"SELECT ? WHERE a = @a", Question, "positional placeholder"},
		{"SELECT $1 WHERE a = @a", Dollar, "positional placeholder"},
		{"SELECT 1 WHERE a IN (@a...)", Dollar, "needs '?' placeholders"},
		{"SELECT @a WHERE a IN (@a...)", Question, "both as a list and as a value"},
		{"SELECT 'open", Question, "unterminated"},
	} {
		if _, err := ParseQuery("q.sql", tc.src, tc.style); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseQuery(%q) = %v, want an error saying %q", tc.src, err, tc.want)
		}
	}
	// '@@' (a MySQL system variable) and "a@b" are no parameters.
	q, err := ParseQuery("q.sql", "SELECT @@version, 'x' FROM t", Question)
	if err != nil || len(q.Names()) != 0 {
		t.Fatalf("ParseQuery(@@version) = %v, %v", q.Names(), err)
	}
}

// TestInsertBuilderBinds: rows and the tail take their arguments by name,
// in the template's order, and refuse a missing or unknown name.
func TestInsertBuilderBinds(t *testing.T) {
	b, err := NewInsertBuilder("INSERT INTO t (a, b) VALUES", "(@a, @b)", Question)
	if err != nil {
		t.Fatal(err)
	}
	tb, err := b.WithTail("RETURNING @c")
	if err != nil {
		t.Fatal(err)
	}
	args, err := tb.AppendRow(nil, sql.Named("b", 2), sql.Named("a", 1))
	if err == nil {
		args, err = tb.AppendRow(args, sql.Named("a", 3), sql.Named("b", 4))
	}
	if err == nil {
		args, err = tb.AppendTail(args, sql.Named("c", 5))
	}
	if err != nil {
		t.Fatal(err)
	}
	if want := []any{1, 2, 3, 4, 5}; !reflect.DeepEqual(args, want) {
		t.Fatalf("args %v, want %v", args, want)
	}
	if got := tb.SQL(2); got != "INSERT INTO t (a, b) VALUES (?, ?),\n(?, ?)\nRETURNING ?" {
		t.Fatalf("SQL(2) = %q", got)
	}
	for _, bad := range [][]sql.NamedArg{
		{sql.Named("a", 1)},
		{sql.Named("a", 1), sql.Named("b", 2), sql.Named("z", 3)},
		{sql.Named("a", 1), sql.Named("a", 2)},
	} {
		if got, err := b.AppendRow([]any{0}, bad...); !errors.Is(err, ErrBind) || len(got) != 1 {
			t.Errorf("AppendRow(%v) = %v, %v; want ErrBind and dst unchanged", bad, got, err)
		}
	}
	if _, err := b.WithTail("RETURNING @a"); err == nil {
		t.Error("WithTail reusing a row's name: no error")
	}
	if _, err := NewInsertBuilder("INSERT INTO t (a, b) VALUES", "(@a, @a)", Dollar); err == nil {
		t.Error("a row naming a parameter twice: no error")
	}
}

// TestStatementsFragments: a fragment is included as {{name}}, its
// {{payload X}} columns as X, or as NULL in {{name_without_payload}};
// constants are written in, comment lines dropped, and fragments are no
// statements.
func TestStatementsFragments(t *testing.T) {
	files := fstest.MapFS{
		"sql/_cols.sql":  {Data: []byte("-- the columns\no.seq, {{payload o.payload}},\n       o.part\n")},
		"sql/list.sql":   {Data: []byte("-- lists\nSELECT {{cols}}, {{window}} FROM {{table}} o WHERE o.seq > @after\n")},
		"sql/sizes.sql":  {Data: []byte("SELECT {{cols_without_payload}} FROM {{table}} o\n")},
		"sql/migrations": {Mode: 0o755 | 1<<31},
	}
	s, err := NewStatements(files, "sql", "app.outbox", Dollar, map[string]string{"window": "4"})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Files(); !reflect.DeepEqual(got, []string{"list.sql", "sizes.sql"}) {
		t.Fatalf("Files = %v", got)
	}
	q, err := s.Query("list.sql")
	if err != nil {
		t.Fatal(err)
	}
	if want := "SELECT o.seq, o.payload,\n       o.part, 4 FROM app.outbox o WHERE o.seq > $1"; q.SQL() != want {
		t.Fatalf("list.sql:\n%s\nwant\n%s", q.SQL(), want)
	}
	text, err := s.Text("sizes.sql")
	if err != nil {
		t.Fatal(err)
	}
	if want := "SELECT o.seq, NULL,\n       o.part FROM app.outbox o"; text != want {
		t.Fatalf("sizes.sql:\n%s\nwant\n%s", text, want)
	}
	if got := s.Render("CREATE {{table}} {{window}} {{cols}}"); got != "CREATE app.outbox 4 {{cols}}" {
		t.Fatalf("Render = %q: constants only, no fragments", got)
	}
	if _, err := s.Query("missing.sql"); err == nil {
		t.Fatal("Query(missing.sql): no error")
	}
}
