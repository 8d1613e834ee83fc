package dialecttest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
)

// suffix returns a random lower-case suffix for names shared with other
// tests (schemas, databases).
func suffix() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// outboxIn migrates the outbox table name in db and returns its env.
func outboxIn(t testing.TB, tgt Target, db *sql.DB, name string) *env {
	t.Helper()
	d, err := tgt.WithTable(name)
	if err != nil {
		t.Fatalf("WithTable(%s): %v", name, err)
	}
	if err := d.Migrate(t.Context(), db); err != nil {
		t.Fatalf("Migrate %s: %v", name, err)
	}
	e := newEnv(t, tgt, db, d)
	e.loadParts()
	return e
}

// createSchema creates the schema name (Target.Schema), dropped on
// cleanup.
func createSchema(t testing.TB, tgt Target, db *sql.DB, name string) {
	t.Helper()
	create, drop := tgt.Schema(name)
	if _, err := db.ExecContext(t.Context(), create); err != nil {
		t.Fatalf("%s: %v", create, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		if _, err := db.ExecContext(ctx, drop); err != nil {
			t.Errorf("%s: %v", drop, err)
		}
	})
}

// plainTable creates a table that is not an outbox table.
func plainTable(t testing.TB, db *sql.DB, name string) {
	t.Helper()
	if _, err := db.ExecContext(t.Context(), "CREATE TABLE "+name+" (id INTEGER)"); err != nil {
		t.Fatalf("create %s: %v", name, err)
	}
}

// findTables runs FindTables and fails the test on an error.
func findTables(t testing.TB, d dialects.Dialect, db *sql.DB, pattern string) []string {
	t.Helper()
	got, err := d.FindTables(t.Context(), db, pattern)
	if err != nil {
		t.Fatalf("FindTables(%q): %v", pattern, err)
	}
	return got
}

// unqualified returns names without the schema they share (a pattern
// without a dot finds the current schema's tables: one schema), checking
// that they have one where the dialect has schemas.
func unqualified(t testing.TB, tgt Target, names []string) []string {
	t.Helper()
	out := make([]string, len(names))
	schema := ""
	for i, n := range names {
		s, table, ok := strings.Cut(n, ".")
		if !ok {
			s, table = "", n
		}
		if (s == "") != (tgt.Schema == nil) || i > 0 && s != schema {
			t.Fatalf("FindTables returned %q: want every name qualified with the current schema (unqualified on a dialect without schemas)", names)
		}
		schema, out[i] = s, table
	}
	return out
}

// testFindTables: FindTables lists the outbox tables matching a pattern,
// sorted, as WithTable accepts them: never their side tables, never other
// tables whose names match, '_' only as itself; across schemas (databases)
// where the dialect has them; a malformed pattern is refused.
func testFindTables(t *testing.T, tgt Target) {
	e := setup(t, tgt) // the default table, "outbox"
	db, d := e.db, e.d
	outboxIn(t, tgt, db, "outbox_archive")
	outboxIn(t, tgt, db, "tenant_a_outbox")
	outboxIn(t, tgt, db, "tenant_b_outbox")
	outboxIn(t, tgt, db, "tenantxa_outbox") // '_' of a pattern must not match its 'x'
	plainTable(t, db, "outbox_notes")
	plainTable(t, db, "outboxes")
	plainTable(t, db, "tenant_c_outbox")
	plainTable(t, db, "tenant_d_outbox_migrations") // a side table's name without its outbox table

	for _, c := range []struct {
		pattern string
		want    []string
	}{
		{"outbox*", []string{"outbox", "outbox_archive"}},
		{"outbox", []string{"outbox"}},
		{"tenant_*_outbox", []string{"tenant_a_outbox", "tenant_b_outbox"}},
		{"tenant*outbox", []string{"tenant_a_outbox", "tenant_b_outbox", "tenantxa_outbox"}},
		{"*", []string{"outbox", "outbox_archive", "tenant_a_outbox", "tenant_b_outbox", "tenantxa_outbox"}},
		{"*_archive", []string{"outbox_archive"}},
		{"outbox_*", []string{"outbox_archive"}}, // not outbox_partitions, outbox_held, outbox_migrations...
		{"none*", nil},
	} {
		if got := unqualified(t, tgt, findTables(t, d, db, c.pattern)); !slices.Equal(got, c.want) {
			t.Errorf("FindTables(%q) = %q, want %q", c.pattern, got, c.want)
		}
	}
	// Each name is one WithTable takes, naming the table it found.
	for _, name := range findTables(t, d, db, "*") {
		dn, err := tgt.WithTable(name)
		if err != nil {
			t.Fatalf("WithTable(%q) of FindTables: %v", name, err)
		}
		if _, err := dn.Partitions(e.ctx, db); err != nil {
			t.Fatalf("Partitions of %q found by FindTables: %v", name, err)
		}
	}

	bad := []string{"", ".", "a.", ".b", "a.b.c", "outbox%", "tenant_%.outbox", "a b", "a;b", "a-b", "a'b", `a"b`, "é", "a?"}
	if tgt.Schema == nil {
		bad = append(bad, "main.outbox", "*.outbox")
	}
	for _, p := range bad {
		if got, err := d.FindTables(e.ctx, db, p); !errors.Is(err, dialects.ErrInvalidPattern) {
			t.Errorf("FindTables(%q) = %q, %v; want ErrInvalidPattern", p, got, err)
		}
	}
	if tgt.Schema != nil {
		testFindTablesSchemas(t, tgt, e)
	}
}

// testFindTablesSchemas: patterns with a schema part.
func testFindTablesSchemas(t *testing.T, tgt Target, e *env) {
	sfx := suffix()
	a, b, xa, other := "tnt"+sfx+"_a", "tnt"+sfx+"_b", "tnt"+sfx+"xa", "oth"+sfx
	for _, s := range []string{a, b, xa, other} {
		createSchema(t, tgt, e.db, s)
		outboxIn(t, tgt, e.db, s+".outbox")
	}
	outboxIn(t, tgt, e.db, a+".outbox_archive")
	plainTable(t, e.db, b+".outbox_notes")
	plainTable(t, e.db, other+".tnt_outbox")
	for _, c := range []struct {
		pattern string
		want    []string
	}{
		{"tnt" + sfx + "_*.outbox", []string{a + ".outbox", b + ".outbox"}},
		{"tnt" + sfx + "*.outbox", []string{a + ".outbox", b + ".outbox", xa + ".outbox"}},
		{a + ".outbox*", []string{a + ".outbox", a + ".outbox_archive"}},
		{"tnt" + sfx + "_*.*", []string{a + ".outbox", a + ".outbox_archive", b + ".outbox"}},
		{"*" + sfx + "*.outbox", []string{other + ".outbox", a + ".outbox", b + ".outbox", xa + ".outbox"}},
		{other + ".*", []string{other + ".outbox"}},
		{"*" + sfx + ".*_notes", nil},
	} {
		if got := findTables(t, e.d, e.db, c.pattern); !slices.Equal(got, c.want) {
			t.Errorf("FindTables(%q) = %q, want %q", c.pattern, got, c.want)
		}
	}
	// "*.outbox" finds the current schema's too, among others.
	current := findTables(t, e.d, e.db, "outbox")
	if all := findTables(t, e.d, e.db, "*.outbox"); len(current) != 1 || !slices.Contains(all, current[0]) || !slices.Contains(all, a+".outbox") {
		t.Errorf("FindTables(*.outbox) = %q: want %q and %s.outbox among them", all, current, a)
	}
	for _, name := range findTables(t, e.d, e.db, "*"+sfx+"*.*") {
		e2 := outboxIn(t, tgt, e.db, name) // Migrate again: a no-op on a table it made
		e2.insert(e2.events("x")...)
		if got := e2.readAll(0); len(got) != 1 {
			t.Fatalf("%s: read %d rows, want 1", name, len(got))
		}
	}
}

// countingQuerier counts the statements run through it.
type countingQuerier struct {
	dialects.Querier
	n atomic.Int64
}

func (c *countingQuerier) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	c.n.Add(1)
	return c.Querier.ExecContext(ctx, query, args...)
}

func (c *countingQuerier) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	c.n.Add(1)
	return c.Querier.QueryContext(ctx, query, args...)
}

func (c *countingQuerier) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	c.n.Add(1)
	return c.Querier.QueryRowContext(ctx, query, args...)
}

// activity runs Activity through c and returns the result and how many
// statements it ran, checking one entry per table, in order.
func activity(t testing.TB, d dialects.Dialect, c *countingQuerier, tables []string) ([]dialects.TableActivity, int64) {
	t.Helper()
	before := c.n.Load()
	got, err := d.Activity(t.Context(), c, tables)
	if err != nil {
		t.Fatalf("Activity: %v", err)
	}
	if len(got) != len(tables) {
		t.Fatalf("Activity of %d tables returned %d entries", len(tables), len(got))
	}
	for i := range got {
		if got[i].Table != tables[i] {
			t.Fatalf("Activity entry %d is %q, want %q", i, got[i].Table, tables[i])
		}
	}
	return got, c.n.Load() - before
}

// testActivity: Activity tells each table's next due time in one
// statement: zero for an empty or a published-only table, a pending row's
// due time (a fresh row, a retry, a scheduled row, the first due row before
// a later retry), an Err for a dropped table, a table at an old version and
// a refused name, and the others right in the same call. A table that
// failed is read alone on the next calls.
func testActivity(t *testing.T, tgt Target) {
	e := setup(t, tgt)
	db := e.db
	sfx := suffix()
	name := func(s string) string { return "act" + sfx + "_" + s }
	want := map[string]time.Time{}

	outboxIn(t, tgt, db, name("empty"))
	want[name("empty")] = time.Time{}

	due := outboxIn(t, tgt, db, name("due"))
	ev := due.event("agg", "a")
	due.insert(ev)
	want[name("due")] = due.get(ev.ID).NextAttemptAt

	retry := outboxIn(t, tgt, db, name("retry"))
	retry.insert(retry.events("a")...)
	s := retry.own("r")
	retry.fail(s.Token(), retry.failure(retry.readAll(0)[0], "boom", time.Hour, false, true))
	want[name("retry")] = retry.at(time.Hour)

	sched := outboxIn(t, tgt, db, name("sched"))
	later, sooner := sched.event("agg", "a"), sched.event("agg", "b")
	later.NotBefore, sooner.NotBefore = sched.at(3*time.Hour), sched.at(2*time.Hour)
	sched.insert(later, sooner)
	want[name("sched")] = sched.at(2 * time.Hour)

	mixed := outboxIn(t, tgt, db, name("mixed")) // a retry first, then a due row
	mixed.insert(mixed.events("a")...)
	s = mixed.own("r")
	mixed.fail(s.Token(), mixed.failure(mixed.readAll(0)[0], "boom", time.Hour, false, true))
	fresh := mixed.event("agg", "b")
	mixed.insert(fresh)
	want[name("mixed")] = mixed.get(fresh.ID).NextAttemptAt

	pub := outboxIn(t, tgt, db, name("pub"))
	pub.insert(pub.events("a", "b")...)
	s = pub.own("r")
	if n := pub.mark(s.Token(), seqs(pub.readAll(0)), 0); n != 2 {
		t.Fatalf("Mark: %d", n)
	}
	want[name("pub")] = time.Time{}

	blocked := outboxIn(t, tgt, db, name("blocked")) // a row behind a dead row: pending, shown as due
	evs := blocked.events("a", "a")
	blocked.insert(evs...)
	s = blocked.own("r")
	blocked.fail(s.Token(), blocked.failure(blocked.readAll(0)[0], "dead", 0, true, true))
	want[name("blocked")] = blocked.get(evs[1].ID).NextAttemptAt

	good := []string{name("empty"), name("due"), name("retry"), name("sched"), name("mixed"), name("pub"), name("blocked")}
	c := &countingQuerier{Querier: db}
	check := func(what string, got []dialects.TableActivity) {
		t.Helper()
		for _, a := range got {
			w, ok := want[a.Table]
			if !ok {
				continue
			}
			if a.Err != nil || !a.NextDue.Equal(w) {
				t.Errorf("%s: %s: NextDue %v, Err %v; want NextDue %v", what, a.Table, a.NextDue, a.Err, w)
			}
		}
	}
	now := e.now()
	got, n := activity(t, e.d, c, good)
	check("Activity", got)
	if n != 1 {
		t.Errorf("Activity of %d tables ran %d statements, want 1", len(good), n)
	}
	for _, a := range got {
		if d := a.Table == name("due") || a.Table == name("mixed") || a.Table == name("blocked"); d && a.NextDue.After(now) {
			t.Errorf("%s: NextDue %v after the database's now %v", a.Table, a.NextDue, now)
		}
	}

	gone := outboxIn(t, tgt, db, name("gone"))
	gone.insert(gone.events("a")...)
	if _, err := db.ExecContext(e.ctx, "DROP TABLE "+name("gone")); err != nil {
		t.Fatalf("drop: %v", err)
	}
	tables := append([]string{name("gone"), "bad-name"}, good...)
	tables = append(tables, name("due")) // twice: the same answer
	wantErr := map[string]error{name("gone"): dialects.ErrSchemaVersion, "bad-name": dialects.ErrInvalidTable}
	if tgt.MigrateTo != nil {
		old, err := tgt.WithTable(name("old"))
		if err != nil {
			t.Fatal(err)
		}
		tgt.MigrateTo(t, db, old, 8)
		tables = append(tables, name("old"))
		wantErr[name("old")] = dialects.ErrSchemaVersion
	}
	checkErrs := func(what string, got []dialects.TableActivity) {
		t.Helper()
		check(what, got)
		for _, a := range got {
			if w, ok := wantErr[a.Table]; ok && !errors.Is(a.Err, w) {
				t.Errorf("%s: %s: Err %v, want %v", what, a.Table, a.Err, w)
			}
		}
	}
	got, n = activity(t, e.d, c, tables)
	checkErrs("Activity with a dropped table", got)
	t.Logf("Activity with a dropped table: %d statements; %s: %v", n, name("gone"), got[0].Err)
	got, n = activity(t, e.d, c, tables)
	checkErrs("Activity again", got)
	if n != 2 {
		t.Errorf("Activity again ran %d statements, want 2 (the dropped table read alone)", n)
	}

	// On the *sql.DB itself, whose statement the dialect keeps prepared:
	// the same answers, before and after a table of the list is dropped.
	direct := func(tables []string) []dialects.TableActivity {
		t.Helper()
		got, err := e.d.Activity(e.ctx, db, tables)
		if err != nil || len(got) != len(tables) {
			t.Fatalf("Activity on the DB: %d entries, %v", len(got), err)
		}
		return got
	}
	outboxIn(t, tgt, db, name("gone2"))
	tables = append(slices.Clone(good), name("gone2"))
	want[name("gone2")] = time.Time{}
	check("Activity on the DB", direct(tables))
	check("Activity on the DB again", direct(tables))
	if _, err := db.ExecContext(e.ctx, "DROP TABLE "+name("gone2")); err != nil {
		t.Fatalf("drop: %v", err)
	}
	delete(want, name("gone2"))
	wantErr[name("gone2")] = dialects.ErrSchemaVersion
	checkErrs("Activity on the DB after a drop", direct(tables))
	checkErrs("Activity on the DB after a drop, again", direct(tables))
	checkErrs("Activity on the DB of the earlier list", direct(good))
}

// testActivityStatements: Activity over 50 tables is one statement. One
// table is a real outbox table with a pending row; the 49 others have only
// what the probes read (a table, its claim_idx and its <table>_migrations
// at the real one's version): a Migrate of 50 tables takes some 40 s under
// the race detector on SQLite.
func testActivityStatements(t *testing.T, tgt Target) {
	e := setup(t, tgt)
	e.insert(e.events("a")...)
	var version int
	if err := e.db.QueryRowContext(e.ctx, "SELECT max(version) FROM "+e.d.Table()+"_migrations").Scan(&version); err != nil {
		t.Fatal(err)
	}
	timeType := map[string]string{"postgres": "TIMESTAMPTZ", "mysql": "DATETIME(6)"}[e.d.Name()]
	if timeType == "" {
		timeType = "INTEGER"
	}
	sfx := suffix()
	tables := []string{e.d.Table()}
	for i := range 49 {
		n := fmt.Sprintf("n%s_%d", sfx, i)
		for _, stmt := range []string{
			"CREATE TABLE " + n + " (seq BIGINT PRIMARY KEY, state SMALLINT NOT NULL, next_attempt_at " + timeType + ")",
			"CREATE INDEX " + n + "_claim_idx ON " + n + " (state, seq)",
			"CREATE TABLE " + n + "_migrations (version INTEGER PRIMARY KEY)",
			"INSERT INTO " + n + "_migrations (version) VALUES (" + strconv.Itoa(version) + ")",
		} {
			if _, err := e.db.ExecContext(e.ctx, stmt); err != nil {
				t.Fatalf("%s: %v", stmt, err)
			}
		}
		tables = append(tables, n)
	}
	c := &countingQuerier{Querier: e.db}
	for round := range 2 { // rendered, then cached
		got, n := activity(t, e.d, c, tables)
		if n != 1 {
			t.Fatalf("round %d: Activity of %d tables ran %d statements, want 1", round, len(tables), n)
		}
		for i, a := range got {
			if a.Err != nil || a.NextDue.IsZero() != (i > 0) {
				t.Fatalf("round %d: %s: NextDue %v, Err %v", round, a.Table, a.NextDue, a.Err)
			}
		}
	}
}
