package dialecttest

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/internal/migrate"
)

func testMigrate(t *testing.T, tgt Target) {
	d, err := tgt.New()
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	db := tgt.Open(t)
	// Before Migrate there is no table: a typed error, not a driver error.
	if _, err := d.Partitions(t.Context(), db); !errors.Is(err, dialects.ErrSchemaVersion) {
		t.Fatalf("Partitions before Migrate: %v, want ErrSchemaVersion", err)
	}
	// Concurrent Migrate calls on a new database all succeed.
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() { errs[i] = d.Migrate(t.Context(), db) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("concurrent Migrate %d: %v", i, err)
		}
	}
	e := newEnv(t, tgt, db, d)
	if err := e.d.Migrate(e.ctx, e.db); err != nil {
		t.Fatalf("second Migrate: %v", err)
	}
	e.loadParts()
	if e.parts != dialects.DefaultPartitions {
		t.Fatalf("Partitions() = %d, want %d", e.parts, dialects.DefaultPartitions)
	}
	if e.d.Table() != dialects.DefaultTable {
		t.Fatalf("Table() = %q, want %q", e.d.Table(), dialects.DefaultTable)
	}
	switch e.d.Name() {
	case "postgres", "mysql", "sqlite":
	default:
		t.Fatalf("Name() = %q", e.d.Name())
	}
	if e.d.MaxInsertRows() <= 0 {
		t.Fatalf("MaxInsertRows() = %d", e.d.MaxInsertRows())
	}
	// The schema works after repeated Migrate calls.
	e.insert(e.events("a")...)
	if got := e.readAll(0); len(got) != 1 {
		t.Fatalf("Read after repeated Migrate: %d rows", len(got))
	}
	s := e.own("r")
	if v, err := s.View(e.ctx, e.at(0)); err != nil || len(v.Owners) != e.parts {
		t.Fatalf("View after repeated Migrate: %d partitions, %v", len(v.Owners), err)
	}
}

// testSchemaText applies Schema() by hand, statement by statement, the way
// a migration tool would, and checks the dialect works on it and that
// Migrate afterwards is a no-op.
func testSchemaText(t *testing.T, tgt Target) {
	d, err := tgt.New()
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	schema := d.Schema()
	if !strings.Contains(schema, d.Table()) || !strings.Contains(strings.ToUpper(schema), "CREATE TABLE") {
		t.Fatalf("Schema() lacks CREATE TABLE %s:\n%s", d.Table(), schema)
	}
	if strings.Contains(schema, "-- step:") || strings.Contains(schema, "{{") {
		t.Fatalf("Schema() has unrendered template text or Go steps:\n%s", schema)
	}
	db := tgt.Open(t)
	ctx := t.Context()
	stmts := migrate.SplitStatements(schema)
	if len(stmts) < 2 {
		t.Fatalf("Schema() has %d statements", len(stmts))
	}
	for _, s := range stmts {
		if _, err := db.ExecContext(ctx, s); err != nil {
			t.Fatalf("applying Schema() statement %q: %v", s, err)
		}
	}
	if err := d.Migrate(ctx, db); err != nil {
		t.Fatalf("Migrate over hand-applied schema: %v", err)
	}
	e := newEnv(t, tgt, db, d)
	e.loadParts()
	if e.parts != dialects.DefaultPartitions {
		t.Fatalf("hand-applied schema: %d partitions, want %d", e.parts, dialects.DefaultPartitions)
	}
	e.insert(e.events("a", "b")...)
	got := e.readAll(0)
	if len(got) != 2 {
		t.Fatalf("Read on hand-applied schema: %d rows, want 2", len(got))
	}
	s := e.own("r")
	if n := e.mark(s.Token(), seqs(got), 0); n != 2 {
		t.Fatalf("Mark on hand-applied schema: %d, want 2", n)
	}
}

func testPartitions(t *testing.T, tgt Target) {
	if tgt.WithPartitions == nil {
		t.Fatal("Target.WithPartitions is required")
	}
	for _, n := range []int{0, -1, dialects.MaxPartitions + 1} {
		if _, err := tgt.WithPartitions(n); !errors.Is(err, dialects.ErrInvalidPartitions) {
			t.Fatalf("WithPartitions(%d): %v, want ErrInvalidPartitions", n, err)
		}
	}
	d8, err := tgt.WithPartitions(8)
	if err != nil {
		t.Fatalf("WithPartitions(8): %v", err)
	}
	e := setupWith(t, tgt, d8)
	if e.parts != 8 {
		t.Fatalf("Partitions() = %d, want 8", e.parts)
	}
	if v, err := e.session("r").View(e.ctx, e.at(0)); err != nil || len(v.Owners) != 8 || len(v.Epochs) != 8 {
		t.Fatalf("View of an 8-partition table: %+v, %v", v, err)
	}
	// The default dialect accepts the table's count.
	def, err := tgt.New()
	if err != nil {
		t.Fatal(err)
	}
	if n, err := def.Partitions(e.ctx, e.db); err != nil || n != 8 {
		t.Fatalf("default dialect on an 8-partition table: %d, %v", n, err)
	}
	// Another count is refused, and Migrate does not change the table's.
	d16, err := tgt.WithPartitions(16)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d16.Partitions(e.ctx, e.db); !errors.Is(err, dialects.ErrPartitionMismatch) {
		t.Fatalf("WithPartitions(16) on an 8-partition table: %v, want ErrPartitionMismatch", err)
	}
	if err := d16.Migrate(e.ctx, e.db); !errors.Is(err, dialects.ErrPartitionMismatch) {
		t.Fatalf("Migrate with WithPartitions(16) on an 8-partition table: %v, want ErrPartitionMismatch", err)
	}
	if n, err := d8.Partitions(e.ctx, e.db); err != nil || n != 8 {
		t.Fatalf("after a mismatched Migrate: %d partitions, %v", n, err)
	}
	// One partition works.
	d1, err := tgt.WithPartitions(1)
	if err != nil {
		t.Fatal(err)
	}
	e1 := setupWith(t, tgt, d1)
	e1.insert(e1.events("a", "b")...)
	if got := e1.read([]int{0}, 0, 10, 0); len(got) != 2 {
		t.Fatalf("one partition: read %d rows", len(got))
	}
}

// testUpgrade migrates a version-1 table with pending, retrying, dead and
// published rows, and checks that nothing is lost.
func testUpgrade(t *testing.T, tgt Target) {
	if tgt.Legacy == nil {
		t.Skip("Target.Legacy not set")
	}
	d, err := tgt.New()
	if err != nil {
		t.Fatal(err)
	}
	db := tgt.Open(t)
	e := newEnv(t, tgt, db, d)
	e.parts = dialects.DefaultPartitions
	id := func() string { return newID() }
	row := func(agg string, st dialects.State, attempts int, next time.Duration, lastErr string) LegacyRow {
		r := LegacyRow{ID: id(), AggregateType: "agg", AggregateID: agg, CreatedAt: e.base, State: st,
			Attempts: attempts, NextAttemptAt: e.at(next), LastError: lastErr}
		if st == dialects.StatePublished {
			r.PublishedAt = e.at(time.Second)
		}
		return r
	}
	rows := []LegacyRow{
		row("a", dialects.StatePending, 0, 0, ""),
		row("r", dialects.StatePending, 2, time.Hour, "boom"), // retrying
		row("r", dialects.StatePending, 0, 0, ""),             // behind it
		row("d", dialects.StateDead, 5, 0, "fatal"),
		row("p", dialects.StatePublished, 0, 0, ""),
	}
	// More rows of one partition than the migration sets in one statement.
	for range 1001 {
		rows = append(rows, row("bulk", dialects.StatePending, 0, 0, ""))
	}
	tgt.Legacy(t, db, d, rows)

	if _, err := d.Partitions(e.ctx, db); !errors.Is(err, dialects.ErrSchemaVersion) {
		t.Fatalf("Partitions on a version-1 table: %v, want ErrSchemaVersion", err)
	}
	if err := d.Migrate(e.ctx, db); err != nil {
		t.Fatalf("Migrate from version 1: %v", err)
	}
	if err := d.Migrate(e.ctx, db); err != nil {
		t.Fatalf("second Migrate: %v", err)
	}
	e.loadParts()
	if e.parts != dialects.DefaultPartitions {
		t.Fatalf("upgraded table: %d partitions", e.parts)
	}
	if s := e.stats(); s.Pending != 1004 || s.Dead != 1 || s.Published != 1 {
		t.Fatalf("stats after upgrade: %+v, want 1004 pending, 1 dead, 1 published", s)
	}
	// Every pending and dead row has its aggregate's partition (e.read
	// checks it); the retrying row keeps its aggregate held back.
	got := e.readAll(0)
	want := []string{rows[0].ID}
	for _, r := range rows[5:] {
		want = append(want, r.ID)
	}
	if !equalStrings(ids(got), want) {
		t.Fatalf("Read after upgrade: %d rows, want %d (a and the bulk rows, in order)", len(got), len(want))
	}
	got = e.readAll(time.Hour)
	if len(got) != 1004 || got[1].ID != rows[1].ID || got[2].ID != rows[2].ID || got[1].Attempts != 2 {
		t.Fatalf("Read after the retry is due: %d rows; want a, then r's retry (attempts 2) and r's next row", len(got))
	}
	for _, r := range rows[:5] {
		g, err := d.Get(e.ctx, db, r.ID)
		if err != nil {
			t.Fatalf("Get(%s): %v", r.AggregateID, err)
		}
		if g.State != r.State || g.Attempts != r.Attempts || g.LastError != r.LastError ||
			!g.NextAttemptAt.Equal(r.NextAttemptAt) || !g.PublishedAt.Equal(r.PublishedAt) {
			t.Fatalf("row %s after upgrade: %+v, want %+v", r.AggregateID, g, r)
		}
		if r.State != dialects.StatePublished && g.Partition != dialects.PartitionOf("agg", r.AggregateID, e.parts) {
			t.Fatalf("row %s after upgrade: partition %d", r.AggregateID, g.Partition)
		}
	}
	// The dead row can be requeued, into its partition.
	n, err := d.Requeue(e.ctx, db, dialects.RequeueFilter{IDs: []string{rows[3].ID}}, e.at(0))
	wantN(t, "Requeue the upgraded dead row", n, err, 1)
	p := dialects.PartitionOf("agg", "d", e.parts)
	if got := e.read([]int{p}, 0, 10000, 0); !containsID(got, rows[3].ID) {
		t.Fatalf("requeued upgraded row not read in partition %d", p)
	}
	// The upgraded table takes new rows and sessions.
	s := e.own("r")
	e.insert(e.events("new")...)
	got = e.readAll(time.Hour)
	if n := e.mark(s.Token(), seqs(got), time.Hour); n != int64(len(got)) || len(got) != 1006 {
		t.Fatalf("Mark after upgrade: %d of %d rows (want 1006)", n, len(got))
	}
}

func containsID(recs []dialects.Record, id string) bool {
	for _, r := range recs {
		if r.ID == id {
			return true
		}
	}
	return false
}

// testRenumber migrates a table the way code of an earlier numbering did,
// writes rows, and checks that Migrate renumbers the recorded versions by
// name (versions 1..N in this code's numbering, each name once), applies
// what the old numbering lacked, and keeps the rows, which a relay of this
// version then reads and marks.
func testRenumber(t *testing.T, tgt Target) {
	if tgt.MigrateNamed == nil || len(tgt.OldNumberings) == 0 {
		t.Skip("Target.MigrateNamed or OldNumberings not set")
	}
	d, err := tgt.New()
	if err != nil {
		t.Fatal(err)
	}
	all, err := d.PendingMigrations(t.Context(), tgt.Open(t))
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, m := range all {
		want = append(want, fmt.Sprintf("%d:%s", m.Version, m.Name))
	}
	for _, names := range tgt.OldNumberings {
		t.Run(strings.Join(names[len(names)-1:], ""), func(t *testing.T) {
			db := tgt.Open(t)
			tgt.MigrateNamed(t, db, d, names...)
			e := newEnv(t, tgt, db, d)
			if got := e.versions(); len(got) != len(names) || got[len(got)-1] != fmt.Sprintf("%d:%s", len(names), names[len(names)-1]) {
				t.Fatalf("old numbering recorded %v", got)
			}
			// Code of this version needs the newest schema: the rows are the
			// previous release's writers'.
			e.parts = dialects.DefaultPartitions
			evs := e.events("a", "b", "a", "c")
			e.insertPrevious(evs...)
			p, err := d.PendingMigrations(e.ctx, db)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range p {
				if slices.Contains(names, m.Name) {
					t.Fatalf("PendingMigrations on the old numbering lists %03d_%s, which it applied", m.Version, m.Name)
				}
			}
			if len(p) != len(all)-len(names) {
				t.Fatalf("PendingMigrations on the old numbering: %d, want %d", len(p), len(all)-len(names))
			}
			if err := d.Migrate(e.ctx, db); err != nil {
				t.Fatalf("Migrate over the old numbering: %v", err)
			}
			if got := e.versions(); !equalStrings(got, want) {
				t.Fatalf("versions after Migrate = %v, want %v", got, want)
			}
			if p, err := d.PendingMigrations(e.ctx, db); err != nil || len(p) != 0 {
				t.Fatalf("PendingMigrations after Migrate: %v, %v", p, err)
			}
			got := e.readAll(0)
			wantIDs(t, "read after renumbering", got, evs...)
			s := e.own("r")
			if n := e.mark(s.Token(), seqs(got), 0); n != int64(len(evs)) {
				t.Fatalf("Mark after renumbering: %d, want %d", n, len(evs))
			}
		})
	}
}

// versions returns the version table as "version:name" in version order.
func (e *env) versions() []string {
	e.t.Helper()
	rows, err := e.db.QueryContext(e.ctx, "SELECT version, name FROM "+e.d.Table()+"_migrations ORDER BY version")
	if err != nil {
		e.t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var v int
		var name string
		if err := rows.Scan(&v, &name); err != nil {
			e.t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%d:%s", v, name))
	}
	if err := rows.Err(); err != nil {
		e.t.Fatal(err)
	}
	return out
}
