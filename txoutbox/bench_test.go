package txoutbox_test

import (
	"context"
	"database/sql"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/relay"
	"github.com/jitoutbox/jitoutbox/txoutbox"
)

// countingDialect counts the relay's reads of its partitions: one per
// relay cycle that looks at the table.
type countingDialect struct {
	dialects.Dialect
	reads atomic.Int64
}

func (c *countingDialect) Read(ctx context.Context, db *sql.DB, req dialects.ReadRequest) (dialects.ReadResult, error) {
	c.reads.Add(1)
	return c.Dialect.Read(ctx, db, req)
}

// BenchmarkCommitLazyWake and BenchmarkCommitWithoutLazyWake commit
// ordinary (not time-critical) transactions of one event on SQLite with a
// relay running in the process (WithRelay; poll every 5 s, lazy delay 250
// ms), and report the relay's reads per 1,000 commits (reads/1k-commits)
// beside ns/op: the load a lazy wake adds, against the latency of waiting
// for the poll. Idle cost is the same in both modes (one read per poll
// interval): without commits there is no wake to turn off.
//
//	go test ./txoutbox/ -run '^$' -bench 'CommitLazyWake|CommitWithoutLazyWake' -benchtime 3s
func BenchmarkCommitLazyWake(b *testing.B)        { benchCommit(b, false) }
func BenchmarkCommitWithoutLazyWake(b *testing.B) { benchCommit(b, true) }

func benchCommit(b *testing.B, noLazy bool) {
	db, _ := openSQLite(b)
	d := &countingDialect{Dialect: sqliteDialect(b, db)}
	r, err := relay.New(db, d, relay.PublisherFunc(func(context.Context, []relay.Message, []error) {}), relay.Config{PollInterval: 5 * time.Second, LazyDelay: 250 * time.Millisecond})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	defer func() {
		cancel()
		<-done
	}()
	opts := []txoutbox.Option{txoutbox.WithRelay(r)}
	if noLazy {
		opts = append(opts, txoutbox.WithoutLazyWake())
	}
	ob, err := txoutbox.New(db, d, opts...)
	if err != nil {
		b.Fatal(err)
	}
	ev := validEvent()
	time.Sleep(500 * time.Millisecond) // let the relay take its partitions and do its first read
	start := d.reads.Load()
	b.ResetTimer()
	for b.Loop() {
		tx, err := ob.Begin(ctx, nil)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := tx.Add(ev); err != nil {
			b.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(d.reads.Load()-start)*1000/float64(b.N), "reads/1k-commits")
}
