package sqlite_test

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/dialects/sqlite"
)

func event(id, agg string, parts int, at time.Time) dialects.Event {
	return dialects.Event{ID: id, AggregateType: "order", AggregateID: agg, EventType: "x", CreatedAt: at,
		Partition: dialects.PartitionOf("order", agg, parts)}
}

func readIDs(t *testing.T, recs []dialects.Record, err error) []string {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]string, len(recs))
	for i, r := range recs {
		ids[i] = r.ID
	}
	return ids
}

// TestBlocks walks one aggregate through a retry, a dead letter, a requeue
// and a skip, and checks the hand-over, the read and the marks on the way.
func TestBlocks(t *testing.T) {
	ctx := context.Background()
	d, db := migrated(t, sqlite.WithPartitions(1))
	s := openSession(t, d, db, "r", time.Minute)
	// Rows are due at SQLite's clock of their INSERT: the reads run a
	// second ahead of it.
	now := time.Now().Add(time.Second)
	if _, err := s.Take(ctx, []int{0}, now); err != nil {
		t.Fatal(err)
	}
	all := []int{0}
	read := func(at time.Time) []string {
		res, err := d.Read(ctx, db, dialects.ReadRequest{Partitions: all, Limit: 100, Now: at})
		return readIDs(t, res.Records, err)
	}

	// Rows of one aggregate inserted together are free together; rows of an
	// aggregate with a pending row are not.
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := d.InsertHandoff(ctx, tx, []dialects.Event{event("a1", "a", 1, now), event("a2", "a", 1, now), event("b1", "b", 1, now)})
	if got := readIDs(t, recs, err); !slices.Equal(got, []string{"a1", "a2", "b1"}) {
		t.Fatalf("handoff %v", got)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	recs, err = d.InsertHandoff(ctx, db, []dialects.Event{event("a3", "a", 1, now), event("c1", "c", 1, now)})
	if got := readIDs(t, recs, err); !slices.Equal(got, []string{"c1"}) {
		t.Fatalf("handoff behind a pending row %v", got)
	}
	if got := read(now); !slices.Equal(got, []string{"a1", "a2", "b1", "a3", "c1"}) {
		t.Fatalf("read %v", got)
	}

	// a1 fails: a2 and a3 wait behind it until it is due; a2's failure in
	// the same call does not move the block off a1.
	seq := seqsOf(t, d, db, "a1", "a2", "b1", "c1")
	retry := now.Add(time.Minute)
	if err := d.Fail(ctx, db, s.Token(), []dialects.Failure{
		{Seq: seq["a2"], Partition: 0, AggregateType: "order", AggregateID: "a", Error: "later", NextAttemptAt: retry, Block: true},
		{Seq: seq["a1"], Partition: 0, AggregateType: "order", AggregateID: "a", Error: "boom", NextAttemptAt: retry, Block: true},
	}); err != nil {
		t.Fatal(err)
	}
	if got := read(now); !slices.Equal(got, []string{"b1", "c1"}) {
		t.Fatalf("read behind a retry %v", got)
	}
	var blockSeq int64
	if err := db.QueryRowContext(ctx, `SELECT seq FROM outbox_blocked`).Scan(&blockSeq); err != nil || blockSeq != seq["a1"] {
		t.Fatalf("block on seq %d, %v; want a1's %d", blockSeq, err, seq["a1"])
	}
	recs, err = d.InsertHandoff(ctx, db, []dialects.Event{event("b2", "b", 1, now)})
	if got := readIDs(t, recs, err); len(got) != 0 {
		t.Fatalf("handoff behind a pending row %v", got)
	}
	if n, err := d.Mark(ctx, db, dialects.Mark{Token: s.Token(), Seqs: []int64{seq["b1"], seq["c1"]}, Delete: true}); err != nil || n != 2 {
		t.Fatalf("mark = %d, %v", n, err)
	}
	if got := read(retry); !slices.Equal(got, []string{"a1", "a2", "a3", "b2"}) {
		t.Fatalf("read once due %v", got)
	}
	// a1 dies: its aggregate stays blocked whatever the time.
	if err := d.Fail(ctx, db, s.Token(), []dialects.Failure{
		{Seq: seq["a1"], Partition: 0, AggregateType: "order", AggregateID: "a", Error: "dead", NextAttemptAt: retry, Dead: true, Block: true},
	}); err != nil {
		t.Fatal(err)
	}
	if got := read(retry.Add(time.Hour)); !slices.Equal(got, []string{"b2"}) {
		t.Fatalf("read behind a dead row %v", got)
	}
	bl, err := d.Blockers(ctx, db, retry, 10)
	if err != nil || len(bl) != 1 || bl[0].Head.ID != "a1" || bl[0].Reason != dialects.BlockDead || bl[0].Pending != 2 || bl[0].Dead != 1 {
		t.Fatalf("blockers %+v, %v", bl, err)
	}
	// A failure of another token changes nothing.
	if err := d.Fail(ctx, db, "someone-else", []dialects.Failure{
		{Seq: seq["a2"], Error: "x", NextAttemptAt: retry, Dead: true, Block: true},
	}); err != nil {
		t.Fatal(err)
	}
	if r, err := d.Get(ctx, db, "a2"); err != nil || r.State != dialects.StatePending || r.Attempts != 1 {
		t.Fatalf("a2 after a foreign failure: %+v, %v", r, err)
	}

	// Skip lets the rest flow; the dead row stays dead.
	if n, err := d.Skip(ctx, db, dialects.RequeueFilter{IDs: []string{"a1"}}); err != nil || n != 1 {
		t.Fatalf("skip = %d, %v", n, err)
	}
	if got := read(retry); !slices.Equal(got, []string{"a2", "a3", "b2"}) {
		t.Fatalf("read after skip %v", got)
	}
	// Requeue puts it back first, with attempts reset.
	if n, err := d.Requeue(ctx, db, dialects.RequeueFilter{AggregateType: "order", AggregateID: "a"}, retry); err != nil || n != 1 {
		t.Fatalf("requeue = %d, %v", n, err)
	}
	if got := read(retry); !slices.Equal(got, []string{"a1", "a2", "a3", "b2"}) {
		t.Fatalf("read after requeue %v", got)
	}
	// Marking a2 (failed before) removes a retry block with it.
	if n, err := d.Mark(ctx, db, dialects.Mark{Token: s.Token(), Seqs: []int64{seq["a1"], seq["a2"]},
		Unblock: []int64{seq["a2"]}, At: retry}); err != nil || n != 2 {
		t.Fatalf("mark = %d, %v", n, err)
	}
	var blocks int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM outbox_blocked`).Scan(&blocks); err != nil || blocks != 0 {
		t.Fatalf("blocks left: %d, %v", blocks, err)
	}
	if st, err := d.Stats(ctx, db); err != nil || st.Pending != 2 || st.Published != 2 || st.Dead != 0 {
		t.Fatalf("stats %+v, %v", st, err)
	}
}

// seqsOf looks up the seqs of event ids.
func seqsOf(t *testing.T, d *sqlite.Dialect, db *sql.DB, ids ...string) map[string]int64 {
	t.Helper()
	out := make(map[string]int64, len(ids))
	for _, id := range ids {
		r, err := d.Get(context.Background(), db, id)
		if err != nil {
			t.Fatal(err)
		}
		out[id] = r.Seq
	}
	return out
}

// TestReadPlan checks on a 100,000-row backlog that the read walks the
// pending rows in seq order and stops at its limit instead of sorting the
// backlog.
func TestReadPlan(t *testing.T) {
	if testing.Short() {
		t.Skip("100,000-row backlog")
	}
	ctx := context.Background()
	const parts = 64
	d, db := migrated(t, sqlite.WithPartitions(parts))
	now := time.Now()
	events := make([]dialects.Event, 0, 1000)
	for i := range 100_000 {
		events = append(events, event(fmt.Sprintf("e%d", i), fmt.Sprintf("a%d", i%5000), parts, now))
		if len(events) == cap(events) {
			if err := d.Insert(ctx, db, events); err != nil {
				t.Fatal(err)
			}
			events = events[:0]
		}
	}
	mine := make([]int, 0, parts/4)
	for p := 0; p < parts; p += 4 {
		mine = append(mine, p)
	}
	text := strings.Join(queryPlan(t, db, d, "read.sql", sql.Named("parts", "[0,4,8]"), sql.Named("after", 0),
		sql.Named("now", now.UnixMicro()), sql.Named("limit", 500)), "\n")
	if !strings.Contains(text, "outbox_claim_idx") || strings.Contains(text, "TEMP B-TREE") {
		t.Fatalf("read plan does not walk claim_idx in seq order:\n%s", text)
	}
	start := time.Now()
	res, err := d.Read(ctx, db, dialects.ReadRequest{Partitions: mine, Limit: 500, Now: time.Now()})
	if err != nil || len(res.Records) != 500 {
		t.Fatalf("read %d, %v", len(res.Records), err)
	}
	t.Logf("plan:\n%s\nread of 500 of 100,000 in a quarter of the partitions: %v", text, time.Since(start))
}

// TestReadCriticalPlan checks on a backlog of ordinary rows that the
// critical read finds its candidates in critical_idx (only the pending
// time-critical rows), not by walking the backlog.
func TestReadCriticalPlan(t *testing.T) {
	ctx := context.Background()
	const parts = 64
	d, db := migrated(t, sqlite.WithPartitions(parts))
	now := time.Now()
	events := make([]dialects.Event, 0, 1000)
	for i := range 20_000 {
		ev := event(fmt.Sprintf("e%d", i), fmt.Sprintf("a%d", i%500), parts, now)
		ev.Critical = i%5000 == 0
		events = append(events, ev)
		if len(events) == cap(events) {
			if err := d.Insert(ctx, db, events); err != nil {
				t.Fatal(err)
			}
			events = events[:0]
		}
	}
	// A relay's owned partitions, and the one a wake names.
	for _, parts := range []string{"[0,4,8]", "[4]"} {
		text := strings.Join(queryPlan(t, db, d, "read_critical.sql", sql.Named("parts", parts),
			sql.Named("now", now.UnixMicro()), sql.Named("limit", 500), sql.Named("window", dialects.CriticalWindow)), "\n")
		if !strings.Contains(text, "outbox_critical_idx") {
			t.Fatalf("partitions %s: the critical read does not read critical_idx:\n%s", parts, text)
		}
		t.Logf("partitions %s, plan:\n%s", parts, text)
	}
}
