package dialecttest

import (
	"fmt"
	"sync"
	"testing"

	"github.com/jitoutbox/jitoutbox/dialects"
)

// testSharedDialect: one dialect value serves two databases at once. Its
// prepared statements (the read, the mark) are kept per database: a call on
// one never closes a statement the other is using ("sql: statement is
// closed" when the cache kept only the last DB's), and each database reads
// its own rows.
func testSharedDialect(t *testing.T, tgt Target) {
	d, err := tgt.New()
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	envs := []*env{setupWith(t, tgt, d), setupWith(t, tgt, d)}
	for i, e := range envs {
		e.insert(e.events(fmt.Sprintf("db%d-a", i), fmt.Sprintf("db%d-b", i))...)
	}
	const workers, rounds = 4, 40
	errs := make(chan error, workers*len(envs))
	var wg sync.WaitGroup
	for w := range workers * len(envs) {
		e := envs[w%len(envs)]
		want := fmt.Sprintf("db%d-a", w%len(envs))
		wg.Go(func() {
			for range rounds {
				res, err := e.d.Read(e.ctx, e.db, dialects.ReadRequest{Partitions: e.all(), Limit: 10, Now: e.readAt(0)})
				if err != nil {
					errs <- fmt.Errorf("Read: %w", err)
					return
				}
				if len(res.Records) != 2 || res.Records[0].AggregateID != want {
					errs <- fmt.Errorf("Read on the database of %s returned %d rows, first %+v", want, len(res.Records), res.Records)
					return
				}
				// A token that owns nothing: the mark runs and changes no row.
				if n, err := e.d.Mark(e.ctx, e.db, dialects.Mark{Token: "nobody", Seqs: []int64{res.Records[0].Seq}, At: e.at(0)}); err != nil || n != 0 {
					errs <- fmt.Errorf("Mark = %d, %v", n, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
