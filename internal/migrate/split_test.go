package migrate

import "testing"

func TestSplitStatementsKeepsDollarQuotedBodies(t *testing.T) {
	schema := "CREATE TABLE t (x INT);\nCREATE FUNCTION f(a INT) RETURNS INT LANGUAGE plpgsql AS $body$\nBEGIN\n  RETURN $1 + a;\nEND\n$body$;\nSELECT $$a;\nb$$;\nINSERT INTO t VALUES (1);\n"
	got := SplitStatements(schema)
	want := []string{
		"CREATE TABLE t (x INT)",
		"CREATE FUNCTION f(a INT) RETURNS INT LANGUAGE plpgsql AS $body$\nBEGIN\n  RETURN $1 + a;\nEND\n$body$",
		"SELECT $$a;\nb$$",
		"INSERT INTO t VALUES (1)",
	}
	if len(got) != len(want) {
		t.Fatalf("SplitStatements = %q", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("statement %d = %q, want %q", i, got[i], want[i])
		}
	}
}
