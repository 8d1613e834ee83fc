package inbox_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jitoutbox/jitoutbox/inbox"
)

// TestCleanupBounded: Cleanup deletes the ids older than the retention
// window, in batches, and keeps the newer ones; the table then holds only
// the window's ids. An id deleted by Cleanup is applied again on a late
// redelivery, which is why Retention must exceed the redelivery horizon.
func TestCleanupBounded(t *testing.T) {
	cfg := inbox.Config{Retention: time.Hour, CleanupBatch: 7, OnOutOfOrder: func(context.Context, inbox.Message, int64) inbox.Decision { return inbox.Reject }}
	eachDB(t, cfg, func(t *testing.T, e *env) {
		ctx := context.Background()
		var old []inbox.Message
		for i := range 30 {
			m := newMsg(fmt.Sprintf("old-%d", i%10), int64(i+1), "x")
			old = append(old, m)
			if _, err := e.handle(m); err != nil {
				t.Fatal(err)
			}
		}
		e.clock.now = e.clock.now.Add(50 * time.Minute)
		for i := range 5 {
			if _, err := e.handle(newMsg(fmt.Sprintf("new-%d", i), 100+int64(i), "x")); err != nil {
				t.Fatal(err)
			}
		}
		if n, err := e.in.Cleanup(ctx, e.db); err != nil || n != 0 {
			t.Fatalf("cleanup inside the window: %d, %v", n, err)
		}
		e.clock.now = e.clock.now.Add(11 * time.Minute) // the old ones are 61 minutes old
		n, err := e.in.Cleanup(ctx, e.db)
		if err != nil || n != 30+10 {
			t.Fatalf("cleanup: deleted %d (want 30 ids and 10 aggregates), %v", n, err)
		}
		if p, a := e.processed(), e.count(`SELECT COUNT(*) FROM inbox_aggregates`); p != 5 || a != 5 {
			t.Fatalf("after cleanup: %d ids, %d aggregates; want 5 and 5", p, a)
		}
		if res, err := e.handle(old[0]); err != nil || res != inbox.Applied {
			t.Fatalf("an id past retention: %v, %v", res, err)
		}
	})
}

// TestMigrate: Migrate is idempotent and safe to run concurrently; Schema
// shows the DDL.
func TestMigrate(t *testing.T) {
	eachDB(t, inbox.Config{}, func(t *testing.T, e *env) {
		var wg sync.WaitGroup
		errs := make([]error, 3)
		for i := range errs {
			wg.Go(func() { errs[i] = e.in.Migrate(context.Background(), e.db) })
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		if n := e.count(`SELECT COUNT(*) FROM inbox_migrations`); n != 1 {
			t.Fatalf("%d versions recorded, want 1", n)
		}
		if s := e.in.Schema(); len(s) == 0 || s[len(s)-2:] != ";\n" {
			t.Fatalf("Schema: %q", s)
		}
	})
}

// TestConfig: New refuses what cannot work, naming the fix.
func TestConfig(t *testing.T) {
	for _, c := range []inbox.Config{
		{},
		{Dialect: "oracle"},
		{Dialect: inbox.SQLite, Table: "in box"},
		{Dialect: inbox.SQLite, Table: "a_very_long_table_name_that_leaves_no_room_for_suffixes"},
		{Dialect: inbox.SQLite, Retention: -time.Hour},
		{Dialect: inbox.SQLite, CleanupBatch: -1},
	} {
		if _, err := inbox.New(c); !errors.Is(err, inbox.ErrInvalidConfig) {
			t.Errorf("New(%+v): %v", c, err)
		}
	}
	if _, err := inbox.New(inbox.Config{Dialect: inbox.MySQL, Table: "app.consumer_inbox"}); err != nil {
		t.Fatal(err)
	}
}
