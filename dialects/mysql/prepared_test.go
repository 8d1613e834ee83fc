package mysql

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
)

// TestPooledTxPreparesOnce: on a dialects.PooledTx, the hand-over's
// statements are prepared once per connection (the server's
// Com_stmt_prepare stays put once the pool's statements are prepared), on
// both paths; on a plain *sql.Tx the driver prepares them at every call.
// The pool has one connection, which the transaction holds: preparing on
// the pool must not wait for it.
func TestPooledTxPreparesOnce(t *testing.T) {
	db, d := migratedInternal(t, WithPartitions(4))
	db.SetMaxOpenConns(1)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	n := 0
	handoff := func(server int32, pooled bool) (prepares int64) {
		t.Helper()
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback() //nolint:errcheck // no-op after Commit
		count := func() int64 {
			var name string
			var v int64
			if err := tx.QueryRowContext(ctx, "SHOW SESSION STATUS LIKE 'Com_stmt_prepare'").Scan(&name, &v); err != nil {
				t.Fatal(err)
			}
			return v
		}
		var q dialects.Querier = tx
		if pooled {
			q = dialects.PooledTx{Tx: tx, DB: db}
		}
		var evs []dialects.Event
		for range 2 {
			n++
			agg := fmt.Sprint("a", n)
			evs = append(evs, dialects.Event{ID: fmt.Sprintf("00000000-0000-7000-8000-%012d", n), AggregateType: "o",
				AggregateID: agg, EventType: "e", CreatedAt: time.Now(), Partition: dialects.PartitionOf("o", agg, 4)})
		}
		before := count()
		recs, err := d.InsertHandoff(ctx, q, evs)
		if err != nil || len(recs) != len(evs) || recs[0].ID != evs[0].ID || recs[1].ID != evs[1].ID {
			t.Fatalf("server %d, pooled %v: hand-over = %+v, %v", server, pooled, recs, err)
		}
		prepares = count() - before
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		return prepares
	}
	for _, server := range []int32{serverMariaDB, serverMySQL} {
		if server == serverMariaDB && d.server.Load() != serverMariaDB {
			continue // a MySQL server: RETURNING is not there
		}
		d.server.Store(server)
		if p := handoff(server, false); p == 0 {
			t.Fatalf("server %d: a plain transaction's hand-over prepared nothing: the count does not see prepares", server)
		}
		handoff(server, true) // the pool's statements are prepared after it
		d.stmts.Wait()
		if p := handoff(server, true); p != 0 {
			t.Fatalf("server %d: the second pooled hand-over prepared %d statements, want 0", server, p)
		}
	}
}

// TestPadList: a mark's list is padded to a power of two (maxList at
// most) with its last seq, and left alone when it has that length.
func TestPadList(t *testing.T) {
	for _, c := range []struct {
		in   []int64
		want []int64
	}{
		{[]int64{7}, []int64{7}},
		{[]int64{7, 9}, []int64{7, 9}},
		{[]int64{7, 9, 11}, []int64{7, 9, 11, 11}},
		{[]int64{1, 2, 3, 4, 5}, []int64{1, 2, 3, 4, 5, 5, 5, 5}},
	} {
		if got := padList(c.in); !slices.Equal(got, c.want) {
			t.Errorf("padList(%v) = %v, want %v", c.in, got, c.want)
		}
	}
	big := make([]int64, maxList-1)
	for i := range big {
		big[i] = int64(i)
	}
	if got := padList(big); len(got) != maxList || got[maxList-1] != big[len(big)-1] {
		t.Errorf("padList of %d: %d seqs, last %d", len(big), len(got), got[len(got)-1])
	}
}
