package dialecttest

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
)

// testIdempotencyKeys checks migration 003: a key is unique per table,
// events without a key never collide, and a duplicate is reported as
// dialects.ErrDuplicateIdempotencyKey by Insert and InsertHandoff.
func testIdempotencyKeys(t *testing.T, tgt Target) {
	e := setup(t, tgt)
	withKey := func(agg, key string) dialects.Event {
		ev := e.event("idem", agg)
		ev.IdempotencyKey = key
		return ev
	}
	// Many events without a key: NULLs do not collide.
	e.insert(e.events("n1", "n2", "n3")...)
	e.insert(e.events("n4")...)
	e.insert(withKey("a", "k1"))

	try := func(what string, handoff bool, evs ...dialects.Event) error {
		t.Helper()
		tx, err := e.db.BeginTx(e.ctx, nil)
		if err != nil {
			t.Fatalf("%s: begin: %v", what, err)
		}
		defer tx.Rollback() //nolint:errcheck // harmless after Commit
		if handoff {
			_, err = e.d.InsertHandoff(e.ctx, tx, evs)
		} else {
			err = e.d.Insert(e.ctx, tx, evs)
		}
		if err != nil {
			return err
		}
		return tx.Commit()
	}
	for _, handoff := range []bool{false, true} {
		what := fmt.Sprintf("handoff=%v", handoff)
		if err := try(what, handoff, withKey("b", "k1")); !errors.Is(err, dialects.ErrDuplicateIdempotencyKey) {
			t.Fatalf("%s: key already in the table: %v, want ErrDuplicateIdempotencyKey", what, err)
		}
		// Twice in one batch.
		if err := try(what, handoff, withKey("c", "k2"), withKey("c", "k2")); !errors.Is(err, dialects.ErrDuplicateIdempotencyKey) {
			t.Fatalf("%s: key twice in a batch: %v, want ErrDuplicateIdempotencyKey", what, err)
		}
	}
	// Nothing of the refused batches was written; other errors are not
	// reported as duplicates.
	if got := e.readAll(0); len(got) != 5 {
		t.Fatalf("rows after refused duplicates: %d, want 5", len(got))
	}
	// Another unique violation (an event id already in the table) is not
	// a duplicate key.
	again := withKey("d", "k3")
	again.ID = e.readAll(0)[0].ID
	if err := try("same id", false, again); err == nil || errors.Is(err, dialects.ErrDuplicateIdempotencyKey) {
		t.Fatalf("insert of an event id already in the table: %v, want an error other than ErrDuplicateIdempotencyKey", err)
	}
	// A key that differs only in case is another key.
	e.insert(withKey("e", "K1"))
}

// testIdempotencyKeyRace runs two transactions with the same key at once:
// the second waits for the first (or, on SQLite, for the write lock); if
// the first commits, the second fails with ErrDuplicateIdempotencyKey; if
// it rolls back, the second commits.
func testIdempotencyKeyRace(t *testing.T, tgt Target) {
	e := setup(t, tgt)
	for _, firstCommits := range []bool{true, false} {
		key := fmt.Sprintf("race-%v", firstCommits)
		first, err := e.db.BeginTx(e.ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		ev1 := e.event("race", "1")
		ev1.IdempotencyKey = key
		if err := e.d.Insert(e.ctx, first, []dialects.Event{ev1}); err != nil {
			t.Fatalf("first insert: %v", err)
		}
		second := make(chan error, 1)
		go func() {
			tx, err := e.db.BeginTx(e.ctx, nil)
			if err != nil {
				second <- err
				return
			}
			ev2 := e.event("race", "2")
			ev2.IdempotencyKey = key
			if err := e.d.Insert(e.ctx, tx, []dialects.Event{ev2}); err != nil {
				_ = tx.Rollback()
				second <- err
				return
			}
			second <- tx.Commit()
		}()
		select {
		case err := <-second:
			t.Fatalf("second transaction ended while the first held the key: %v", err)
		case <-time.After(200 * time.Millisecond): // it waits, as it should
		}
		if firstCommits {
			err = first.Commit()
		} else {
			err = first.Rollback()
		}
		if err != nil {
			t.Fatalf("end first: %v", err)
		}
		err = <-second
		switch {
		case firstCommits && !errors.Is(err, dialects.ErrDuplicateIdempotencyKey):
			t.Fatalf("second after the first committed: %v, want ErrDuplicateIdempotencyKey", err)
		case !firstCommits && err != nil:
			t.Fatalf("second after the first rolled back: %v, want success", err)
		}
		var n int
		q := fmt.Sprintf("SELECT COUNT(*) FROM %s WHERE idempotency_key = %s", e.d.Table(), e.ph(1))
		if err := e.db.QueryRowContext(e.ctx, q, key).Scan(&n); err != nil || n != 1 {
			t.Fatalf("rows with key %q: %d (%v), want 1", key, n, err)
		}
	}
}

// testIdempotencyUpgrade upgrades a version-1 table whose rows share
// idempotency keys: Migrate fails with ErrDuplicateIdempotencyKey naming
// the key, the table is not at the new version (writers refuse it), and
// after the shared keys are resolved Migrate succeeds and the kept key
// deduplicates.
func testIdempotencyUpgrade(t *testing.T, tgt Target) {
	if tgt.Legacy == nil {
		t.Skip("Target.Legacy not set")
	}
	d, err := tgt.New()
	if err != nil {
		t.Fatal(err)
	}
	db := tgt.Open(t)
	e := newEnv(t, tgt, db, d)
	var rows []LegacyRow
	for i := range 4 {
		rows = append(rows, LegacyRow{ID: newID(), AggregateType: "agg",
			AggregateID: fmt.Sprint(i), CreatedAt: e.base, NextAttemptAt: e.base})
	}
	tgt.Legacy(t, db, d, rows)
	set := fmt.Sprintf("UPDATE %s SET idempotency_key = %s WHERE id = %s", d.Table(), e.ph(1), e.ph(2))
	for i, key := range []string{"shared", "shared", "shared", "own"} {
		if _, err := db.ExecContext(e.ctx, set, key, rows[i].ID); err != nil {
			t.Fatalf("set key: %v", err)
		}
	}
	err = d.Migrate(e.ctx, db)
	if !errors.Is(err, dialects.ErrDuplicateIdempotencyKey) || !strings.Contains(err.Error(), `"shared" (3 rows)`) {
		t.Fatalf("Migrate over shared keys: %v, want ErrDuplicateIdempotencyKey naming \"shared\"", err)
	}
	if _, err := d.Partitions(e.ctx, db); !errors.Is(err, dialects.ErrSchemaVersion) {
		t.Fatalf("Partitions after the failed Migrate: %v, want ErrSchemaVersion", err)
	}
	// The fix the error suggests: the first row keeps the key.
	clear := fmt.Sprintf("UPDATE %s SET idempotency_key = NULL WHERE id IN (%s, %s)", d.Table(), e.ph(1), e.ph(2))
	if _, err := db.ExecContext(e.ctx, clear, rows[1].ID, rows[2].ID); err != nil {
		t.Fatalf("clear keys: %v", err)
	}
	if err := d.Migrate(e.ctx, db); err != nil {
		t.Fatalf("Migrate after resolving the keys: %v", err)
	}
	e.loadParts()
	dup := e.event("agg", "new")
	dup.IdempotencyKey = "shared"
	tx, err := db.BeginTx(e.ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback() //nolint:errcheck // test clean-up
	if err := d.Insert(e.ctx, tx, []dialects.Event{dup}); !errors.Is(err, dialects.ErrDuplicateIdempotencyKey) {
		t.Fatalf("insert of a kept key after the upgrade: %v, want ErrDuplicateIdempotencyKey", err)
	}
}
