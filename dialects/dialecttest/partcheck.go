package dialecttest

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
)

// testPartitionCheckUpgrade migrates a table at the previous release's
// schema holding good rows and rows with a partition outside [0, P)
// (written before the check, by raw UPDATEs), and checks that: Migrate
// keeps every row; Stats counts the bad ones (BadPartition) and the
// Inspector reports them (column part) while reads never return them;
// the schema now refuses a partition outside [0, P) on INSERT and UPDATE;
// a writer and a relay of this version, after rows the previous release wrote,
// work on the upgraded table; headers larger than the
// 64 KiB a MySQL TEXT column held round-trip; Migrate again is a no-op.
func testPartitionCheckUpgrade(t *testing.T, tgt Target) {
	if tgt.Previous == nil {
		t.Skip("Target.Previous not set")
	}
	d, err := tgt.New()
	if err != nil {
		t.Fatal(err)
	}
	db := tgt.Open(t)
	tgt.Previous(t, db, d)
	e := newEnv(t, tgt, db, d)
	// Code of this version needs the newest schema: the rows before the
	// upgrade are the previous release's writers' (and its relay's dead row).
	e.parts = dialects.DefaultPartitions
	good := e.events("a", "b", "c")
	over, under := e.event("agg", "over"), e.event("agg", "under")
	dead := e.event("agg", "dead")
	e.insertPrevious(append(good, over, under, dead)...)
	if _, err := db.ExecContext(e.ctx, fmt.Sprintf("UPDATE %s SET state = 2, attempts = 1 WHERE id = %s", d.Table(), e.ph(1)),
		dead.ID); err != nil {
		t.Fatalf("dead row: %v", err)
	}
	setPart := func(id string, part int) error {
		q := fmt.Sprintf("UPDATE %s SET part = %s WHERE id = %s", d.Table(), e.ph(1), e.ph(2))
		_, err := db.ExecContext(e.ctx, q, part, id)
		return err
	}
	for _, c := range []struct {
		id   string
		part int
	}{{over.ID, e.parts + 3}, {under.ID, -1}, {dead.ID, e.parts}} {
		if err := setPart(c.id, c.part); err != nil {
			t.Fatalf("bad partition before the check: %v", err)
		}
	}
	if err := d.Migrate(e.ctx, db); err != nil {
		t.Fatalf("Migrate over rows with bad partitions: %v", err)
	}
	if err := d.Migrate(e.ctx, db); err != nil {
		t.Fatalf("second Migrate: %v", err)
	}
	e.loadParts()
	s := e.own("r")
	if st := e.stats(); st.Pending != 5 || st.Dead != 1 || st.BadPartition != 3 {
		t.Fatalf("Stats after the upgrade: %+v, want 5 pending, 1 dead, 3 with a bad partition", st)
	}
	rows, err := d.List(e.ctx, db, dialects.ListFilter{State: dialects.StatePending, Limit: 10})
	if err != nil || len(rows) != 5 {
		t.Fatalf("List pending: %d rows, %v", len(rows), err)
	}
	for _, r := range rows {
		bad := r.ID == over.ID || r.ID == under.ID
		if bad != (r.Bad != nil) {
			t.Fatalf("List: row %s: Bad = %v", r.AggregateID, r.Bad)
		}
		if bad && (!errors.Is(r.Bad, dialects.ErrBadRow) || r.Bad.Column != "part" || r.Bad.Raw != fmt.Sprint(r.Partition) ||
			!strings.Contains(r.Bad.Error(), fmt.Sprintf("outside [0, %d)", e.parts))) {
			t.Fatalf("List: row %s: Bad = %v (raw %q), want column part", r.AggregateID, r.Bad, r.Bad.Raw)
		}
	}
	if g, err := d.Get(e.ctx, db, dead.ID); err != nil || g.Bad == nil || g.Bad.Column != "part" || g.State != dialects.StateDead {
		t.Fatalf("Get of the dead row with a bad partition: %+v, %v", g, err)
	}
	wantIDs(t, "Read after the upgrade", e.readAll(0), good...)

	// The schema refuses partitions outside [0, P) from now on.
	for _, p := range []int{e.parts, -1} {
		ev := e.event("agg", "new-bad")
		ev.Partition = p
		tx, err := db.BeginTx(e.ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := d.Insert(e.ctx, tx, []dialects.Event{ev}); err == nil {
			_ = tx.Rollback()
			t.Fatalf("Insert with partition %d succeeded after the upgrade", p)
		}
		_ = tx.Rollback()
		if err := setPart(good[0].ID, p); err == nil {
			t.Fatalf("UPDATE to partition %d succeeded after the upgrade", p)
		}
	}
	if err := setPart(good[0].ID, e.parts-1); err != nil {
		t.Fatalf("UPDATE to the last partition: %v", err)
	}
	if err := setPart(good[0].ID, good[0].Partition); err != nil {
		t.Fatalf("UPDATE back: %v", err)
	}

	// The writer and the relay go on; headers past 64 KiB round-trip.
	big := e.event("agg", "big")
	big.Headers = map[string]string{"X-Big": strings.Repeat("h", 100<<10), "X-Quote": `"\`}
	e.insert(big)
	got := e.readAll(time.Second)
	if len(got) != 4 || got[3].ID != big.ID || got[3].Bad != nil || got[3].Headers["X-Big"] != big.Headers["X-Big"] ||
		got[3].Headers["X-Quote"] != big.Headers["X-Quote"] {
		t.Fatalf("Read after the upgrade: %d rows; want the 3 good ones and the big headers intact", len(got))
	}
	if n := e.mark(s.Token(), seqs(got), time.Second); n != 4 {
		t.Fatalf("Mark after the upgrade: %d, want 4", n)
	}
	if st := e.stats(); st.Pending != 2 || st.BadPartition != 3 {
		t.Fatalf("Stats at the end: %+v", st)
	}
}
