package main

import (
	"bytes"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/internal/testdb"
	"github.com/jitoutbox/jitoutbox/txoutbox"
)

// uniqueTable returns a fresh table name. PostgreSQL advisory locks are
// database-wide and keyed by the unqualified table name, so tests running
// at the same time in other schemas of the database would otherwise
// contend for the same partition locks.
func uniqueTable() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return "outbox_" + hex.EncodeToString(b[:])
}

// ownAll opens an ownership session named relay that takes every
// partition; it is closed on cleanup.
func ownAll(t *testing.T, db *sql.DB, d dialects.Dialect, relay string) dialects.Session {
	t.Helper()
	s, err := d.OpenSession(t.Context(), db, relay, time.Minute)
	if err != nil {
		t.Fatalf("OpenSession: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	n, err := d.Partitions(t.Context(), db)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := s.Take(t.Context(), allParts(n), time.Now()); err != nil || len(got) != n {
		t.Fatalf("Take = %v, %v; want all %d partitions", got, err, n)
	}
	return s
}

func allParts(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// readAll reads every pending, unblocked row of every partition.
func readAll(t *testing.T, db *sql.DB, d dialects.Dialect, now time.Time) []dialects.Record {
	t.Helper()
	n, err := d.Partitions(t.Context(), db)
	if err != nil {
		t.Fatal(err)
	}
	res, err := d.Read(t.Context(), db, dialects.ReadRequest{Partitions: allParts(n), Limit: 1000, Now: now})
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	return res.Records
}

// fail records a failed attempt of r that blocks its aggregate: dead, or
// backing off until next.
func fail(t *testing.T, db *sql.DB, d dialects.Dialect, s dialects.Session, r dialects.Record, msg string, next time.Time, dead bool) {
	t.Helper()
	f := dialects.Failure{Seq: r.Seq, Partition: r.Partition, AggregateType: r.AggregateType, AggregateID: r.AggregateID,
		Error: msg, NextAttemptAt: next, Dead: dead, Block: true}
	if err := d.Fail(t.Context(), db, s.Token(), []dialects.Failure{f}); err != nil {
		t.Fatalf("Fail: %v", err)
	}
}

// add commits one event per aggregate id given, in order, and returns
// their ids.
func add(t *testing.T, db *sql.DB, d dialects.Dialect, aggIDs ...string) []string {
	t.Helper()
	ob, err := txoutbox.New(db, d)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := ob.Begin(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, a := range aggIDs {
		id, err := tx.Add(txoutbox.Event{AggregateType: "order", AggregateID: a, EventType: "order.changed", Payload: []byte(`{}`)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	return ids
}

// TestSkipAndStatus: status lists blocked aggregates with their reason and
// head row, and the partitions with their live relays; skip unblocks an
// aggregate behind a dead event by -id, by aggregate and with -all.
func TestSkipAndStatus(t *testing.T) { consoleTargets(t, testSkipAndStatus) }

func testSkipAndStatus(t *testing.T, tgt testdb.Target) {
	db, d, g, gj := migratedTable(t, tgt)

	// No relay yet: every partition is free.
	var st statusJSON
	ctl(t, &st, append(gj, "status")...)
	p := st.Partitions
	if p == nil || p.Count != dialects.DefaultPartitions || len(p.Free) != p.Count || len(p.Relays) != 0 || len(p.Owners) != p.Count {
		t.Fatalf("status without relays: partitions %+v", p)
	}

	// a, b, c each get a head event and a later one; a's and b's heads die,
	// c's backs off.
	ids := add(t, db, d, "a", "b", "c", "a", "b", "c")
	now := time.Now()
	sess := ownAll(t, db, d, "ctl-relay")
	recs := readAll(t, db, d, now)
	if len(recs) != 6 {
		t.Fatalf("read %d rows, want 6", len(recs))
	}
	next := now.Add(time.Hour)
	fail(t, db, d, sess, recs[0], "poison a", now, true)
	fail(t, db, d, sess, recs[1], "poison b", now, true)
	fail(t, db, d, sess, recs[2], "broker down", next, false)

	st = statusJSON{}
	ctl(t, &st, append(gj, "status")...)
	if len(st.Blockers) != 3 {
		t.Fatalf("blockers %+v, want 3", st.Blockers)
	}
	for i, w := range []struct{ agg, reason, head, err string }{
		{"a", "dead", ids[0], "poison a"}, {"b", "dead", ids[1], "poison b"}, {"c", "backing-off", ids[2], "broker down"},
	} {
		b := st.Blockers[i]
		if b.AggregateID != w.agg || b.Reason != w.reason || b.Head == nil || b.Head.ID != w.head ||
			b.Head.LastError != w.err || b.Head.Attempts != 1 || b.Pending != map[bool]int64{true: 1, false: 2}[w.reason == "dead"] {
			t.Fatalf("Blockers[%d] = %+v (head %+v), want %+v", i, b, b.Head, w)
		}
	}
	if h := st.Blockers[2].Head; h.NextAttemptAt == nil || h.NextAttemptAt.Sub(next).Abs() > time.Second {
		t.Fatalf("backing-off head's next attempt %v, want %v", h.NextAttemptAt, next)
	}
	p = st.Partitions
	if p == nil || len(p.Relays) != 1 || p.Relays[0].Name != "ctl-relay" || p.Relays[0].Token != sess.Token() ||
		len(p.Relays[0].Partitions) != p.Count || len(p.Free) != 0 || p.Relays[0].StartedAt.IsZero() {
		t.Fatalf("status with one relay: partitions %+v", p)
	}
	for _, o := range p.Owners {
		if !o.Live || o.Owner != sess.Token() || o.Epoch < 1 {
			t.Fatalf("owner of partition %d: %+v", o.Partition, o)
		}
	}

	// Human status shows the same.
	var out bytes.Buffer
	if err := run(t.Context(), append(g, "status"), &out, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"order/a", "order/c", "backing-off", "poison a", "broker down", ids[2],
		"partitions", "64: 64 owned by 1 live relay, 0 free", "ctl-relay", sess.Token(), "0-63", "free partitions: none",
	} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("human status lacks %q:\n%s", want, out.String())
		}
	}

	// skip by id: a's later event flows; a's head stays dead.
	var sk map[string]int64
	ctl(t, &sk, append(gj, "skip", "-id", ids[0])...)
	if sk["skipped"] != 1 {
		t.Fatalf("skip -id = %v", sk)
	}
	if got := idsOf(readAll(t, db, d, now)); !slices.Equal(got, []string{ids[3]}) {
		t.Fatalf("read after skip of a: %v, want a's later event %s", got, ids[3])
	}
	// skip by aggregate: b's later event flows too.
	ctl(t, &sk, append(gj, "skip", "-aggregate-type", "order", "-aggregate-id", "b")...)
	if sk["skipped"] != 1 {
		t.Fatalf("skip -aggregate = %v", sk)
	}
	if got := idsOf(readAll(t, db, d, now)); !slices.Equal(got, []string{ids[3], ids[4]}) {
		t.Fatalf("read after skip of b: %v", got)
	}
	// Nothing dead is blocking any more; a backing-off aggregate is not skipped.
	ctl(t, &sk, append(gj, "skip", "-all")...)
	if sk["skipped"] != 0 {
		t.Fatalf("skip -all with no dead blocks = %v", sk)
	}
	st = statusJSON{}
	ctl(t, &st, append(gj, "status")...)
	if st.Dead != 2 || len(st.Blockers) != 1 || st.Blockers[0].AggregateID != "c" {
		t.Fatalf("status after skips: dead %d, blockers %+v", st.Dead, st.Blockers)
	}
	out.Reset()
	if err := run(t.Context(), append(g, "skip", "-all"), &out, &out); err != nil || !strings.Contains(out.String(), "skipped 0 dead events") {
		t.Fatalf("human skip: %v %q", err, out.String())
	}

	// The relay leaves: its partitions are free again.
	if err := sess.Close(); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := run(t.Context(), append(g, "status"), &out, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"64: 0 owned by 0 live relays, 64 free", "live relays: none (pending events wait until a relay runs)"} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("human status after the relay left lacks %q:\n%s", want, out.String())
		}
	}
}

func idsOf(recs []dialects.Record) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = r.ID
	}
	return out
}

func TestRanges(t *testing.T) {
	for _, c := range []struct {
		in   []int
		want string
	}{
		{nil, "none"}, {[]int{3}, "3"}, {[]int{0, 1, 2, 3}, "0-3"}, {[]int{0, 1, 3, 5, 6}, "0-1,3,5-6"},
	} {
		if got := ranges(c.in); got != c.want {
			t.Errorf("ranges(%v) = %q, want %q", c.in, got, c.want)
		}
	}
}

// migratedTable migrates a new outbox table on tgt with the CLI and returns
// the database, the table's dialect, the CLI's global flags for it, and the
// same with -json.
func migratedTable(t *testing.T, tgt testdb.Target) (db *sql.DB, d dialects.Dialect, g, gj []string) {
	t.Helper()
	db, dsn := tgt.Open(t)
	tbl := uniqueTable()
	g = []string{"-dsn", dsn, "-dialect", tgt.Dialect, "-table", tbl}
	gj = append(slices.Clone(g), "-json")
	ctl(t, nil, append(g, "migrate")...)
	d, err := newDialect(tgt.Dialect, tbl)
	if err != nil {
		t.Fatal(err)
	}
	return db, d, g, gj
}
