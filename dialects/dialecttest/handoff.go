package dialecttest

import (
	"testing"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
)

// handoff runs InsertHandoff in a transaction that is committed or rolled
// back, and returns its records. With e.pooled the transaction is passed as
// txoutbox's Begin passes it (dialects.PooledTx).
func (e *env) handoff(commit bool, evs ...dialects.Event) []dialects.Record {
	e.t.Helper()
	tx, err := e.db.BeginTx(e.ctx, nil)
	if err != nil {
		e.t.Fatalf("begin: %v", err)
	}
	var q dialects.Querier = tx
	if e.pooled {
		q = dialects.PooledTx{Tx: tx, DB: e.db}
	}
	recs, err := e.d.InsertHandoff(e.ctx, q, evs)
	if err != nil {
		_ = tx.Rollback()
		e.t.Fatalf("InsertHandoff: %v", err)
	}
	if commit {
		err = tx.Commit()
	} else {
		err = tx.Rollback()
	}
	if err != nil {
		e.t.Fatalf("end transaction: %v", err)
	}
	for i, r := range recs {
		if i > 0 && recs[i-1].Seq >= r.Seq {
			e.t.Fatalf("InsertHandoff records not in Seq order: %d then %d", recs[i-1].Seq, r.Seq)
		}
		if r.Seq <= 0 || r.Attempts != 0 {
			e.t.Fatalf("InsertHandoff record %s: seq %d attempts %d", r.AggregateID, r.Seq, r.Attempts)
		}
	}
	return recs
}

// testInsertHandoff: InsertHandoff returns the events whose aggregate has
// no pending row and no block (rows of one aggregate inserted together are
// free together), in Seq order with their Seq, as Read returns them; the
// others are written and left to Read; a rollback leaves nothing. The
// same on a dialects.PooledTx, which a dialect may run prepared statements
// on.
func testInsertHandoff(t *testing.T, tgt Target) {
	t.Run("Tx", func(t *testing.T) { testInsertHandoffOn(t, tgt, false) })
	t.Run("PooledTx", func(t *testing.T) { testInsertHandoffOn(t, tgt, true) })
}

// testInsertHandoffOn is testInsertHandoff on a plain or pooled transaction.
func testInsertHandoffOn(t *testing.T, tgt Target, pooled bool) {
	e := setup(t, tgt)
	e.pooled = pooled
	s := e.own("r")
	if recs, err := e.d.InsertHandoff(e.ctx, e.db, nil); err != nil || len(recs) != 0 {
		t.Fatalf("InsertHandoff of nothing: %v, %v", recs, err)
	}

	// busy has a pending row; dead has a dead, blocking row; skipped has a
	// dead row whose block was skipped; done has a published row.
	pre := e.events("busy", "dead", "skipped", "done")
	e.insert(pre...)
	r := e.readAll(0)
	e.fail(s.Token(), e.failure(r[1], "x", 0, true, true), e.failure(r[2], "x", 0, true, true))
	n, err := e.d.Skip(e.ctx, e.db, dialects.RequeueFilter{IDs: []string{pre[2].ID}})
	wantN(t, "Skip", n, err, 1)
	if n := e.mark(s.Token(), seqs(r[3:]), 0); n != 1 {
		t.Fatalf("Mark: %d", n)
	}

	created := time.Date(2024, 12, 31, 23, 59, 58, 987654000, time.UTC)
	f1 := e.event("agg", "free")
	f1.Payload, f1.ContentType = []byte(`{"a": 1}`), "application/json"
	f1.Headers, f1.IdempotencyKey, f1.Critical, f1.CreatedAt = map[string]string{"k": "ü"}, "idem", true, created
	f2 := e.event("agg", "free")
	f2.Payload, f2.ContentType = []byte{0, 0xff}, "application/octet-stream"
	in := []dialects.Event{
		e.event("agg", "busy"), f1, e.event("agg", "dead"), f2,
		e.event("agg", "skipped"), e.event("agg", "done"), e.event("other", "free"),
	}
	// Rolled back: returns what it would hand over, writes nothing.
	before := e.stats()
	e.handoff(false, in...)
	if s := e.stats(); s != before {
		t.Fatalf("rolled-back InsertHandoff changed the table: %+v, was %+v", s, before)
	}
	got := e.handoff(true, in...)
	free := []dialects.Event{in[1], in[3], in[4], in[5], in[6]}
	wantIDs(t, "InsertHandoff free events", got, free...)
	for i, rec := range got {
		checkRecord(t, rec, free[i])
	}
	// Every event was written; Read returns the free ones with the same
	// Seq, and the one behind the pending row after it.
	read := e.readAll(0)
	bySeq := map[int64]string{}
	for _, rec := range read {
		bySeq[rec.Seq] = rec.ID
	}
	for _, rec := range got {
		if bySeq[rec.Seq] != rec.ID {
			t.Fatalf("handed-over %s has seq %d; Read has %q there", rec.AggregateID, rec.Seq, bySeq[rec.Seq])
		}
	}
	wantIDs(t, "Read after InsertHandoff", read, pre[0], in[0], in[1], in[3], in[4], in[5], in[6])
	// Once busy's rows are published and dead's row requeued and published,
	// their aggregates are free again.
	if n := e.mark(s.Token(), seqs(read), 0); n != int64(len(read)) {
		t.Fatalf("Mark: %d of %d", n, len(read))
	}
	wantIDs(t, "dead aggregate still blocked", e.handoff(true, e.event("agg", "dead")))
	n, err = e.d.Requeue(e.ctx, e.db, dialects.RequeueFilter{AggregateType: "agg", AggregateID: "dead"}, e.at(0))
	wantN(t, "Requeue", n, err, 1)
	read = e.readAll(0)
	wantAggs(t, "requeued first", read, "dead", "dead", "dead")
	if read[0].ID != pre[1].ID {
		t.Fatalf("requeued row not first: %s", read[0].ID)
	}
	if n := e.mark(s.Token(), seqs(read), 0); n != 3 {
		t.Fatalf("Mark: %d", n)
	}
	last := []dialects.Event{e.event("agg", "busy"), e.event("agg", "dead")}
	wantIDs(t, "freed aggregates", e.handoff(true, last...), last...)
}
