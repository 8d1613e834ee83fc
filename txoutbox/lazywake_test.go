package txoutbox_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/jitoutbox/jitoutbox/txoutbox"
)

// lazyCounter is a notify.LazyNotifier counting both kinds of wake.
type lazyCounter struct{ now, lazy atomic.Int64 }

func (l *lazyCounter) Notify([]int) { l.now.Add(1) }
func (l *lazyCounter) NotifyLazy()  { l.lazy.Add(1) }

// TestWithoutLazyWake: ordinary commits tell neither the relay nor the
// notifier; time-critical commits still do. The default tells both.
func TestWithoutLazyWake(t *testing.T) {
	for _, off := range []bool{false, true} {
		db, _ := openSQLite(t)
		d := sqliteDialect(t, db)
		r := &fakeRelay{db: db, d: d, owned: map[int]bool{}} // owns nothing: critical commits notify
		n := &lazyCounter{}
		opts := []txoutbox.Option{txoutbox.WithRelay(r), txoutbox.WithNotifier(n)}
		if off {
			opts = append(opts, txoutbox.WithoutLazyWake())
		}
		ob, err := txoutbox.New(db, d, opts...)
		if err != nil {
			t.Fatal(err)
		}
		commit := func(txOpts ...txoutbox.TxOption) {
			t.Helper()
			tx, err := ob.Begin(context.Background(), nil, txOpts...)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tx.Add(validEvent()); err != nil {
				t.Fatal(err)
			}
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
		}
		for range 3 {
			commit()
		}
		commit(txoutbox.TimeCritical())
		got := r.snapshot()
		wantRelay, wantLazy := 4, int64(3)
		if off {
			wantRelay, wantLazy = 1, 0
		}
		if len(got) != wantRelay || !got[len(got)-1].Critical || n.lazy.Load() != wantLazy || n.now.Load() != 1 {
			t.Fatalf("WithoutLazyWake=%v: relay %+v, lazy %d, notify %d; want %d relay calls, %d lazy, 1 notify",
				off, got, n.lazy.Load(), n.now.Load(), wantRelay, wantLazy)
		}
		if st, err := d.Stats(context.Background(), db); err != nil || st.Pending != 4 {
			t.Fatalf("pending = %d (%v), want 4: every event is written", st.Pending, err)
		}
	}
}
