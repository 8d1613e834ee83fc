package dialecttest

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/dialects/internal/sqlkit"
)

// criticalMigration is the name (not the number: migrations are renumbered
// on merges) of the migration that adds the critical read's index.
const criticalMigration = "critical_index"

// critical returns events of aggregates aggIDs (type "agg") from
// time-critical transactions.
func (e *env) critical(aggIDs ...string) []dialects.Event {
	evs := e.events(aggIDs...)
	for i := range evs {
		evs[i].Critical = true
	}
	return evs
}

// readCritical runs ReadCritical at base+now and returns its rows
// (readCriticalResult).
func (e *env) readCritical(req dialects.CriticalRequest, now time.Duration) []dialects.Record {
	e.t.Helper()
	return e.readCriticalResult(req, now).Records
}

// readCriticalResult runs ReadCritical at base+now and checks what every
// result must satisfy: Seq order, the limit, the partitions, time-critical
// rows only, at most one row per aggregate, and a count of candidates
// between the rows returned and the window (0 with no rows).
func (e *env) readCriticalResult(req dialects.CriticalRequest, now time.Duration) dialects.CriticalResult {
	e.t.Helper()
	req.Now = e.readAt(now)
	res, err := e.d.ReadCritical(e.ctx, e.db, req)
	if err != nil {
		e.t.Fatalf("ReadCritical: %v", err)
	}
	recs := res.Records
	window := sqlkit.CriticalWindow(req)
	if len(recs) > 0 && (res.Candidates < len(recs) || res.Candidates > window) || len(recs) == 0 && res.Candidates != 0 {
		e.t.Fatalf("ReadCritical returned %d rows of %d candidates (window %d)", len(recs), res.Candidates, window)
	}
	if len(recs) > req.Limit {
		e.t.Fatalf("ReadCritical returned %d rows, limit %d", len(recs), req.Limit)
	}
	aggs := map[string]bool{}
	for i, r := range recs {
		if i > 0 && recs[i-1].Seq >= r.Seq {
			e.t.Fatalf("ReadCritical not in Seq order: %d then %d", recs[i-1].Seq, r.Seq)
		}
		if !slices.Contains(req.Partitions, r.Partition) {
			e.t.Fatalf("ReadCritical of partitions %v returned seq %d of partition %d", req.Partitions, r.Seq, r.Partition)
		}
		if !r.Critical {
			e.t.Fatalf("ReadCritical returned seq %d, not time-critical", r.Seq)
		}
		k := r.AggregateType + "/" + r.AggregateID
		if aggs[k] {
			e.t.Fatalf("ReadCritical returned two rows of %s", k)
		}
		aggs[k] = true
	}
	return res
}

// criticalAll reads every partition, limit 100, default window.
func (e *env) criticalAll(now time.Duration) []dialects.Record {
	e.t.Helper()
	return e.readCritical(dialects.CriticalRequest{Partitions: e.all(), Limit: 100}, now)
}

// testReadCritical: ReadCritical returns the pending, due, time-critical
// rows whose aggregate has no earlier pending row and no block on an
// earlier row, in Seq order, up to the limit, of the given partitions:
// exactly the rows a hand-over could have handed over.
func testReadCritical(t *testing.T, tgt Target) {
	e := setup(t, tgt)
	s := e.own("r")
	if got := e.criticalAll(0); len(got) != 0 {
		t.Fatalf("empty table: %d rows", len(got))
	}
	ord := e.events("A", "D", "R")         // ordinary rows: A's and R's come first
	crit := e.critical("A", "B", "C", "C") // A's waits for A's ordinary row; C's second for its first
	dead := e.critical("F", "F")           // F's first dies and blocks F
	retry := e.critical("G", "G")          // G's first backs off
	beforeInsert := e.now()
	e.insert(ord...)
	e.insert(crit...)
	e.insert(dead...)
	e.insert(retry...)
	r := e.readAll(0)
	bySeq := func(ev dialects.Event) dialects.Record {
		for _, rec := range r {
			if rec.ID == ev.ID {
				return rec
			}
		}
		t.Fatalf("%s not read", ev.AggregateID)
		return dialects.Record{}
	}
	e.fail(s.Token(), e.failure(bySeq(dead[0]), "poison", 0, true, true),
		e.failure(bySeq(retry[0]), "later", time.Minute, false, true))
	wantIDs(t, "critical", e.criticalAll(0), crit[1], crit[2])
	// A clock behind the inserts: rows never tried are due all the same
	// (they were due at their insert), the retry is not.
	wantIDs(t, "clock behind the inserts", e.criticalAbs(beforeInsert.Add(-time.Microsecond)), crit[1], crit[2])
	wantIDs(t, "limit 1", e.readCritical(dialects.CriticalRequest{Partitions: e.all(), Limit: 1}, 0), crit[1])
	wantIDs(t, "no partitions", e.readCritical(dialects.CriticalRequest{Limit: 10}, 0))
	cPart := crit[2].Partition
	wantIDs(t, "C's partition", e.readCritical(dialects.CriticalRequest{Partitions: []int{cPart}, Limit: 10}, 0), crit[2])
	// The retry comes due: the failed row itself is free (its block is on
	// itself), the row behind it still waits for it.
	wantIDs(t, "retry due", e.criticalAll(time.Minute), crit[1], crit[2], retry[0])
	// Once A's ordinary row is published, A's time-critical row is free;
	// once C's first is, C's second.
	if n := e.mark(s.Token(), []int64{bySeq(ord[0]).Seq, bySeq(crit[2]).Seq}, 0); n != 2 {
		t.Fatalf("Mark: %d", n)
	}
	wantIDs(t, "after marks", e.criticalAll(0), crit[0], crit[1], crit[3])
	// F's dead row blocks F's later row until skipped.
	n, err := e.d.Skip(e.ctx, e.db, dialects.RequeueFilter{IDs: []string{dead[0].ID}})
	wantN(t, "Skip", n, err, 1)
	wantIDs(t, "after skip", e.criticalAll(0), crit[0], crit[1], crit[3], dead[1])
	// ReadCritical writes nothing: Read returns the same rows as before.
	wantIDs(t, "Read", e.readAll(0), ord[1], ord[2], crit[0], crit[1], crit[3], dead[1])
}

// testReadCriticalWindow: ReadCritical looks at the first Window
// candidates (pending, due, time-critical rows of the partitions in Seq
// order) only, so that its work is bounded when many time-critical rows
// wait behind earlier rows of their aggregates; a free row past the window
// is left to Read.
func testReadCriticalWindow(t *testing.T, tgt Target) {
	e := setup(t, tgt)
	e.own("r")
	e.insert(e.events("H")...)
	held := e.critical("H", "H", "H")
	free := e.critical("I")
	e.insert(held...)
	e.insert(free...)
	e.insert(e.events("J")...) // ordinary rows are no candidates
	win := func(w int) []dialects.Record {
		return e.readCritical(dialects.CriticalRequest{Partitions: e.all(), Limit: 10, Window: w}, 0)
	}
	wantIDs(t, "window 3 (held rows only)", win(3))
	wantIDs(t, "window 4", win(4), free...)
	wantIDs(t, "default window", win(0), free...)
	// The count of candidates tells that rows were held back (the three
	// of H), and that none were when the window holds only the free row.
	candidates := func(parts []int, w int) int {
		t.Helper()
		return e.readCriticalResult(dialects.CriticalRequest{Partitions: parts, Limit: 10, Window: w}, 0).Candidates
	}
	if n := candidates(e.all(), 4); n != 4 {
		t.Errorf("window 4: %d candidates, want 4 (3 held, 1 free)", n)
	}
	if n := candidates(e.all(), 0); n != 4 {
		t.Errorf("default window: %d candidates, want 4 (ordinary rows are none)", n)
	}
	// Candidates are counted in the given partitions only.
	var others []int
	for _, p := range e.all() {
		if p != held[0].Partition {
			others = append(others, p)
		}
	}
	if free[0].Partition != held[0].Partition {
		wantIDs(t, "window 1 without H's partition",
			e.readCritical(dialects.CriticalRequest{Partitions: others, Limit: 10, Window: 1}, 0), free...)
		if n := candidates(others, 0); n != 1 {
			t.Errorf("without H's partition: %d candidates, want 1 (the free row alone)", n)
		}
	}
}

// testCriticalIndexMigration: on a table at the version before the
// critical read's index (the index dropped, its migration not recorded)
// Migrate builds the index over the rows in the table, and ReadCritical
// returns the rows it should. (ReadCritical itself may name the index: a
// relay needs a schema past its migration.)
func testCriticalIndexMigration(t *testing.T, tgt Target) {
	e := setup(t, tgt)
	s := e.own("r")
	idx := e.d.Table() + "_critical_idx"
	drop := "DROP INDEX " + idx
	if e.d.Name() == "mysql" {
		drop += " ON " + e.d.Table()
	}
	if _, err := e.db.ExecContext(e.ctx, drop); err != nil {
		t.Fatalf("drop the critical index: %v", err)
	}
	q := fmt.Sprintf("DELETE FROM %s_migrations WHERE name = %s", e.d.Table(), e.ph(1))
	if res, err := e.db.ExecContext(e.ctx, q, criticalMigration); err != nil {
		t.Fatalf("forget the migration: %v", err)
	} else if n, _ := res.RowsAffected(); n != 1 {
		t.Fatalf("forget the migration %q: %d rows", criticalMigration, n)
	}
	backlog := e.events("K", "K", "L")
	crit := e.critical("K", "M", "N")
	e.insert(backlog...)
	e.insert(crit...)
	r := e.readAll(0)
	if n := e.mark(s.Token(), []int64{r[2].Seq}, 0); n != 1 { // L's row: published rows are no candidates either
		t.Fatalf("Mark: %d", n)
	}
	want := []dialects.Event{crit[1], crit[2]}
	if err := e.d.Migrate(e.ctx, e.db); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	var n int
	q = fmt.Sprintf("SELECT COUNT(*) FROM %s_migrations WHERE name = %s", e.d.Table(), e.ph(1))
	if err := e.db.QueryRowContext(e.ctx, q, criticalMigration).Scan(&n); err != nil || n != 1 {
		t.Fatalf("migration %q recorded %d times, %v", criticalMigration, n, err)
	}
	wantIDs(t, "with the index", e.criticalAll(0), want...)
	wantIDs(t, "Read", e.readAll(0), backlog[0], backlog[1], crit[0], crit[1], crit[2])
	e.insert(e.critical("O")...)
	if got := e.criticalAll(0); len(got) != 3 || got[2].AggregateID != "O" {
		t.Fatalf("a row written after the migration: got %q", aggIDs(got))
	}
}
