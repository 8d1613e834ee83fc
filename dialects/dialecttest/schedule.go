package dialecttest

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
)

// delay is the suite's scheduling delay: long enough that the statements
// between an insert and the reads "before due" run within it.
const delay = 400 * time.Millisecond

// readAbs reads every partition at the absolute time now (a time on the
// database's clock), in Seq order.
func (e *env) readAbs(now time.Time) []dialects.Record {
	e.t.Helper()
	res, err := e.d.Read(e.ctx, e.db, dialects.ReadRequest{Partitions: e.all(), Limit: 1000, Now: now})
	if err != nil {
		e.t.Fatalf("Read: %v", err)
	}
	return res.Records
}

// readAheadAbs reads every partition after seq at the absolute time now.
func (e *env) readAheadAbs(after int64, now time.Time) []dialects.Record {
	e.t.Helper()
	res, err := e.d.Read(e.ctx, e.db, dialects.ReadRequest{Partitions: e.all(), After: after, Limit: 1000, Now: now})
	if err != nil {
		e.t.Fatalf("Read ahead: %v", err)
	}
	return res.Records
}

// criticalAbs runs ReadCritical on every partition at the absolute time now.
func (e *env) criticalAbs(now time.Time) []dialects.Record {
	e.t.Helper()
	res, err := e.d.ReadCritical(e.ctx, e.db, dialects.CriticalRequest{Partitions: e.all(), Limit: 100, Now: now})
	if err != nil {
		e.t.Fatalf("ReadCritical: %v", err)
	}
	return res.Records
}

// scheduled returns an event of aggregate id scheduled delay after its
// insert.
func (e *env) scheduled(id string, delay time.Duration) dialects.Event {
	ev := e.event("agg", id)
	ev.Delay = delay
	return ev
}

// get returns the inspected row of an event id.
func (e *env) get(id string) dialects.Row {
	e.t.Helper()
	r, err := e.d.Get(e.ctx, e.db, id)
	if err != nil {
		e.t.Fatalf("Get(%s): %v", id, err)
	}
	return r
}

// waitUntil sleeps until the database's clock is past t.
func (e *env) waitUntil(t time.Time) {
	e.t.Helper()
	for {
		now := e.now()
		if now.After(t) {
			return
		}
		time.Sleep(t.Sub(now) + time.Millisecond)
	}
}

// testScheduleDelay: a Delay counts from the database's time of the INSERT
// (a writer clock far ahead delays nothing); NotBefore in the past is due
// at once; with both, the later. DeliverAt reads back on the record and
// the inspected row, and is zero for a plain event.
func testScheduleDelay(t *testing.T, tgt Target) {
	e := setup(t, tgt)
	before := e.now()
	d := e.scheduled("d", delay)
	d.CreatedAt = before.Add(time.Hour) // the writer's clock says nothing about due times
	past := e.event("agg", "past")
	past.NotBefore = before.Add(-time.Hour)
	both := e.event("agg", "both")
	both.NotBefore, both.Delay = before.Add(2*time.Second), delay
	plain := e.event("agg", "plain")
	plain.CreatedAt = before.Add(time.Hour)
	e.insert(d, past, both, plain)
	after := e.now()

	gd, gp, gb := e.get(d.ID), e.get(past.ID), e.get(both.ID)
	if gd.DeliverAt.Before(before.Add(delay)) || gd.DeliverAt.After(after.Add(delay)) || !gd.NextAttemptAt.Equal(gd.DeliverAt) {
		t.Fatalf("d: DeliverAt %v, NextAttemptAt %v, want both in [%v, %v]", gd.DeliverAt, gd.NextAttemptAt,
			before.Add(delay), after.Add(delay))
	}
	if gp.DeliverAt.Before(before) || gp.DeliverAt.After(after) {
		t.Fatalf("NotBefore in the past: DeliverAt %v, want the insert's time in [%v, %v]", gp.DeliverAt, before, after)
	}
	if want := sqlkitUTC(both.NotBefore); !gb.DeliverAt.Equal(want) {
		t.Fatalf("NotBefore after now+Delay: DeliverAt %v, want %v", gb.DeliverAt, want)
	}
	if g := e.get(plain.ID); !g.DeliverAt.IsZero() || g.NextAttemptAt.Before(before) || g.NextAttemptAt.After(after) {
		t.Fatalf("plain: DeliverAt %v, NextAttemptAt %v, want zero and the insert's time", g.DeliverAt, g.NextAttemptAt)
	}

	wantIDs(t, "before d is due", e.readAbs(after), past, plain)
	got := e.readAbs(gd.DeliverAt)
	wantIDs(t, "when d is due", got, d, past, plain)
	if !got[0].DeliverAt.Equal(gd.DeliverAt) || !got[1].DeliverAt.Equal(gp.DeliverAt) || !got[2].DeliverAt.IsZero() {
		t.Fatalf("Read DeliverAt: %v %v %v", got[0].DeliverAt, got[1].DeliverAt, got[2].DeliverAt)
	}
	wantIDs(t, "when both is due", e.readAbs(gb.DeliverAt), d, past, both, plain)
	wantIDs(t, "just before both is due", e.readAbs(gb.DeliverAt.Add(-time.Microsecond)), d, past, plain)
}

// testScheduleHold: a scheduled event holds the later events of its
// aggregate until it is due, then they flow in Seq order; an Unordered one
// does not; with two scheduled events, the later events wait for the
// latest due time. ReadCritical and reads ahead keep the hold; InsertHandoff
// hands over neither the scheduled event nor those behind it.
func testScheduleHold(t *testing.T, tgt Target) {
	e := setup(t, tgt)
	e.own("r")
	d := e.scheduled("a", delay)
	ev := e.event("agg", "a")
	ev.Critical = true
	other := e.event("agg", "other")
	recs := e.handoff(true, d, ev, other)
	wantIDs(t, "handed over", recs, other)
	now := e.now()
	dueAt := e.get(d.ID).DeliverAt
	if !dueAt.After(now) {
		t.Fatalf("d due at %v, before the read at %v: raise the suite's delay", dueAt, now)
	}
	wantIDs(t, "held", e.readAbs(now), other)
	wantIDs(t, "held from ReadCritical", e.criticalAbs(now))
	wantIDs(t, "held from a read ahead", e.readAheadAbs(1, now), other)
	// A later event of the aggregate is neither handed over nor read.
	late := e.event("agg", "a")
	wantIDs(t, "handed over behind a hold", e.handoff(true, late))
	wantIDs(t, "late held", e.readAbs(now), other)
	// Read once d is due and late was written (on a loaded machine its
	// INSERT may come after d's due time: it is not due before it).
	at := dueAt
	if w := e.get(late.ID).NextAttemptAt; w.After(at) {
		at = w
	}
	wantIDs(t, "due: in order", e.readAbs(at), d, ev, other, late)
	wantIDs(t, "critical when due", e.criticalAbs(dueAt))

	// Unordered: the later events flow past it.
	u := e.scheduled("u", delay)
	u.Unordered = true
	ue := e.event("agg", "u")
	recs = e.handoff(true, u, ue)
	wantIDs(t, "unordered handed over", recs, ue)
	now = e.now()
	got := e.readAbs(now)
	if containsID(got, u.ID) || !containsID(got, ue.ID) {
		t.Fatalf("Unordered: read %v, want ue without u", ids(got))
	}
	if got := e.readAbs(e.get(u.ID).DeliverAt); !containsID(got, u.ID) {
		t.Fatalf("Unordered: u not read when due")
	}

	// Two scheduled events: the later ones wait for the latest.
	d1, d2 := e.scheduled("two", delay), e.scheduled("two", 2*delay)
	e.insert(d1)
	e2 := e.event("agg", "two")
	e.insert(d2, e2)
	due1, due2 := e.get(d1.ID).DeliverAt, e.get(d2.ID).DeliverAt
	if got := e.readAbs(due1); !containsID(got, d1.ID) || containsID(got, d2.ID) || containsID(got, e2.ID) {
		t.Fatalf("at d1's due time: read %v, want d1 without d2 and e2", ids(got))
	}
	if got := e.readAbs(due2.Add(-time.Microsecond)); containsID(got, e2.ID) {
		t.Fatalf("e2 read before d2 is due")
	}
	if got := e.readAbs(due2); !containsID(got, d2.ID) || !containsID(got, e2.ID) {
		t.Fatalf("at d2's due time: read %v, want d2 and e2", ids(got))
	}
}

// testScheduleHoldReplaced: a hold that ended is replaced by the next
// scheduled event's, not extended from its old seq.
func testScheduleHoldReplaced(t *testing.T, tgt Target) {
	e := setup(t, tgt)
	s := e.own("r")
	d1 := e.scheduled("a", time.Millisecond)
	e.insert(d1)
	e.waitUntil(e.get(d1.ID).DeliverAt)
	got := e.readAbs(e.now())
	wantIDs(t, "d1 due", got, d1)
	e.mark(s.Token(), seqs(got), 0)
	// d2 after d1's hold ended; e2 behind it waits for d2 only.
	d2 := e.scheduled("a", delay)
	e2 := e.event("agg", "a")
	e.insert(d2, e2)
	wantIDs(t, "held by d2", e.readAbs(e.now()))
	wantIDs(t, "d2 due", e.readAbs(e.get(d2.ID).DeliverAt), d2, e2)
	// A plain row of an aggregate whose hold ended flows at once.
	e3 := e.scheduled("b", time.Millisecond)
	e.insert(e3)
	e.waitUntil(e.get(e3.ID).DeliverAt)
	p := e.event("agg", "b")
	e.insert(p)
	if got := e.readAbs(e.now()); !containsID(got, p.ID) || !containsID(got, e3.ID) {
		t.Fatalf("a row behind an ended hold is not read: %v", ids(got))
	}
}

// testNextDue: NextDue returns the earliest distinct due times after a
// time of the scheduled pending rows of the given partitions only, up to
// its limit; none without such rows; due and plain rows do not count.
func testNextDue(t *testing.T, tgt Target) {
	e := setup(t, tgt)
	now := e.now()
	if got, err := e.d.NextDue(e.ctx, e.db, e.all(), now, 8); err != nil || len(got) != 0 {
		t.Fatalf("NextDue of an empty table: %v, %v", got, err)
	}
	a0, a1 := e.aggIn(0, 1, "p0-")[0], e.aggIn(1, 1, "p1-")[0]
	past := e.event("agg", a0)
	past.NotBefore = now.Add(-time.Minute)
	late, soon := e.scheduled(a0, time.Hour), e.scheduled(a1, time.Minute)
	// twin is due with soon (same NotBefore): one time for both.
	twin := e.scheduled(a1, 0)
	twin.NotBefore = now.Add(time.Hour)
	twin2 := e.scheduled(a0, 0)
	twin2.NotBefore = twin.NotBefore
	e.insert(past, e.event("agg", a1), late, soon, twin, twin2)
	now = e.now()
	dueLate, dueSoon, dueTwin := e.get(late.ID).DeliverAt, e.get(soon.ID).DeliverAt, e.get(twin.ID).DeliverAt
	first, second := dueLate, dueTwin
	if dueTwin.Before(dueLate) {
		first, second = dueTwin, dueLate
	}
	check := func(what string, parts []int, after time.Time, limit int, want ...time.Time) {
		t.Helper()
		got, err := e.d.NextDue(e.ctx, e.db, parts, after, limit)
		if err != nil {
			t.Fatalf("NextDue %s: %v", what, err)
		}
		if len(got) != len(want) {
			t.Fatalf("NextDue %s: %v, want %v", what, got, want)
		}
		for i := range got {
			if !got[i].Equal(want[i]) {
				t.Fatalf("NextDue %s: %v, want %v", what, got, want)
			}
		}
	}
	check("all", e.all(), now, 8, dueSoon, first, second)
	check("all, limit 1", e.all(), now, 1, dueSoon)
	check("partition 0", []int{0}, now, 8, first, second)
	check("partition 1", []int{1}, now, 8, dueSoon, dueTwin)
	check("partitions 2, 3", []int{2, 3}, now, 8)
	check("no partitions", nil, now, 8)
	check("after soon", e.all(), dueSoon, 8, first, second)
	check("after all", e.all(), second, 8)
	// A row already due is found when after is before its time: the relay
	// passes the time its last read covered.
	check("from before soon", []int{1}, dueSoon.Add(-time.Microsecond), 1, dueSoon)
}

// testCancel: Cancel deletes a scheduled row not yet due and lifts its
// aggregate's hold; it leaves a due, a plain and an unknown one alone;
// with two scheduled rows, cancelling one keeps the hold; in a transaction
// rolled back it cancels nothing.
func testCancel(t *testing.T, tgt Target) {
	e := setup(t, tgt)
	d, ev := e.scheduled("a", time.Hour), e.event("agg", "a")
	due := e.event("agg", "due")
	due.NotBefore = e.now().Add(-time.Second)
	plain := e.event("agg", "plain")
	keep1, keep2, kev := e.scheduled("k", time.Hour), e.scheduled("k", time.Hour), e.event("agg", "k")
	rb, rbe := e.scheduled("rb", time.Hour), e.event("agg", "rb")
	e.insert(d, ev, due, plain, keep1, keep2, kev, rb, rbe)
	wantIDs(t, "before Cancel", e.readAbs(e.now()), due, plain)

	tx, err := e.db.BeginTx(e.ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := e.d.Cancel(e.ctx, tx, []string{rb.ID})
	if err != nil || !equalStrings(got, []string{rb.ID}) {
		_ = tx.Rollback()
		t.Fatalf("Cancel in a transaction: %v, %v", got, err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if r := e.get(rb.ID); r.State != dialects.StatePending {
		t.Fatalf("rolled-back Cancel: row state %v", r.State)
	}

	got, err = e.d.Cancel(e.ctx, e.db, []string{d.ID, due.ID, plain.ID, "00000000-0000-7000-8000-000000000000", keep1.ID})
	if err != nil {
		t.Fatalf("Cancel: %v", err)
	}
	if !equalStrings(sortedStrings(got), sortedStrings([]string{d.ID, keep1.ID})) {
		t.Fatalf("Cancel returned %q, want d and keep1", got)
	}
	if _, err := e.d.Get(e.ctx, e.db, d.ID); err == nil {
		t.Fatalf("cancelled row still there")
	}
	for _, id := range []string{due.ID, plain.ID, keep2.ID, rb.ID} {
		e.get(id)
	}
	// a's hold is lifted: ev flows; keep2 still holds kev; rb holds rbe.
	wantIDs(t, "after Cancel", e.readAbs(e.now()), ev, due, plain)
	if got, err := e.d.Cancel(e.ctx, e.db, []string{d.ID}); err != nil || len(got) != 0 {
		t.Fatalf("second Cancel: %v, %v", got, err)
	}
	if got, err := e.d.Cancel(e.ctx, e.db, nil); err != nil || len(got) != 0 {
		t.Fatalf("Cancel of nothing: %v, %v", got, err)
	}
}

// testScheduleStats: Stats counts the scheduled rows not yet due and their
// earliest due time; ReleaseHolds deletes the ended holds of drained
// aggregates only.
func testScheduleStats(t *testing.T, tgt Target) {
	e := setup(t, tgt)
	s := e.own("r")
	if st := e.stats(); st.Scheduled != 0 || !st.NextDue.IsZero() {
		t.Fatalf("Stats of an empty table: %+v", st)
	}
	later := e.scheduled("l", time.Hour)
	e.insert(later)
	if st := e.stats(); st.Scheduled != 1 || !st.NextDue.Equal(e.get(later.ID).DeliverAt) || !st.OldestPending.IsZero() {
		t.Fatalf("Stats with one scheduled row (not yet due: not waiting, no oldest pending): %+v", st)
	}
	quick, drained := e.scheduled("q", time.Millisecond), e.scheduled("dr", time.Millisecond)
	plain := e.event("agg", "q")
	e.insert(quick, drained, plain)
	e.waitUntil(e.get(drained.ID).DeliverAt.Add(time.Millisecond))
	e.waitUntil(e.get(quick.ID).DeliverAt.Add(time.Millisecond))
	st := e.stats()
	if st.Scheduled != 1 || !st.NextDue.Equal(e.get(later.ID).DeliverAt) {
		t.Fatalf("Stats after two are due: %+v", st)
	}
	// A due scheduled row waits from its due time, a plain one from its
	// registration.
	oldest := e.get(plain.ID).CreatedAt
	for _, id := range []string{quick.ID, drained.ID} {
		if at := e.get(id).DeliverAt; at.Before(oldest) {
			oldest = at
		}
	}
	if !st.OldestPending.Equal(oldest) {
		t.Fatalf("OldestPending %v, want %v", st.OldestPending, oldest)
	}
	// drained is published; q still has a pending row; l's hold runs.
	if n := e.mark(s.Token(), []int64{e.get(drained.ID).Seq}, 0); n != 1 {
		t.Fatalf("Mark: %d", n)
	}
	n, err := e.d.ReleaseHolds(e.ctx, e.db, e.now(), 100)
	wantN(t, "ReleaseHolds", n, err, 1)
	n, err = e.d.ReleaseHolds(e.ctx, e.db, e.now(), 100)
	wantN(t, "ReleaseHolds again", n, err, 0)
	if got := e.readAbs(e.now()); !containsID(got, quick.ID) || len(got) != 2 {
		t.Fatalf("read after ReleaseHolds: %v", ids(got))
	}
}

func sortedStrings(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

func sqlkitUTC(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

// insertPrevious writes evs as the previous release's writers do, with
// plain SQL naming only the columns they name (no deliver_at), due at
// their CreatedAt: rows of a table not yet migrated to this version.
func (e *env) insertPrevious(evs ...dialects.Event) {
	e.t.Helper()
	q := fmt.Sprintf("INSERT INTO %s (id, aggregate_type, aggregate_id, event_type, payload, content_type, created_at, "+
		"next_attempt_at, part) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)", e.d.Table(),
		e.ph(1), e.ph(2), e.ph(3), e.ph(4), e.ph(5), e.ph(6), e.ph(7), e.ph(8), e.ph(9))
	for _, ev := range evs {
		at := e.timeArg(ev.CreatedAt)
		if _, err := e.db.ExecContext(e.ctx, q, ev.ID, ev.AggregateType, ev.AggregateID, ev.EventType, ev.Payload,
			ev.ContentType, at, at, ev.Partition); err != nil {
			e.t.Fatalf("insert as the previous release: %v", err)
		}
	}
}

// timeArg is t as the dialect stores it, for raw SQL.
func (e *env) timeArg(t time.Time) any {
	if e.d.Name() == "sqlite" {
		return t.UnixMicro()
	}
	return t.UTC()
}

// testScheduleUpgrade: rows written at version 8 by the previous release's
// writers are read and marked after Migrate to this version, and a
// scheduled event written then holds its aggregate's later rows.
func testScheduleUpgrade(t *testing.T, tgt Target) {
	if tgt.MigrateTo == nil {
		t.Skip("Target.MigrateTo not set")
	}
	d, err := tgt.New()
	if err != nil {
		t.Fatal(err)
	}
	db := tgt.Open(t)
	tgt.MigrateTo(t, db, d, 8)
	e := newEnv(t, tgt, db, d)
	if _, err := d.Partitions(e.ctx, db); !errors.Is(err, dialects.ErrSchemaVersion) {
		t.Fatalf("Partitions at version 8: %v, want ErrSchemaVersion", err)
	}
	e.parts = dialects.DefaultPartitions
	old := e.events("a", "b", "a")
	e.insertPrevious(old...)
	if err := d.Migrate(e.ctx, db); err != nil {
		t.Fatalf("Migrate from 8: %v", err)
	}
	e.loadParts()
	got := e.readAll(0)
	wantIDs(t, "rows of version 8", got, old...)
	for _, r := range got {
		if !r.DeliverAt.IsZero() {
			t.Fatalf("row of version 8: DeliverAt %v", r.DeliverAt)
		}
	}
	s := e.own("r")
	if n := e.mark(s.Token(), seqs(got[:1]), 0); n != 1 {
		t.Fatalf("Mark: %d", n)
	}
	sd, se := e.scheduled("a", delay), e.event("agg", "a")
	e.insert(sd, se)
	wantIDs(t, "held after the upgrade", e.readAbs(e.now()), old[1], old[2])
	wantIDs(t, "due after the upgrade", e.readAbs(e.get(sd.ID).DeliverAt), old[1], old[2], sd, se)
}
