// Package dialecttest is the conformance suite every jitoutbox dialect runs
// against its own database. A dialect package calls Exercise from a test:
//
//	func TestConformance(t *testing.T) {
//		dialecttest.Exercise(t, dialecttest.Target{
//			Open:      func(t testing.TB) *sql.DB { db, _ := testdb.SQLite(t); return db },
//			New:       func() (dialects.Dialect, error) { return sqlite.New() },
//			WithTable: func(n string) (dialects.Dialect, error) { return sqlite.New(sqlite.WithTable(n)) },
//		})
//	}
//
// Every subtest opens a fresh, isolated database.
package dialecttest

import (
	"database/sql"
	"testing"

	"github.com/jitoutbox/jitoutbox/dialects"
)

// Target is one database and dialect under test.
type Target struct {
	// Open returns a fresh, isolated, empty database (closed by t.Cleanup).
	Open func(t testing.TB) *sql.DB
	// New builds the dialect with default options.
	New func() (dialects.Dialect, error)
	// WithTable builds the dialect with a custom table name.
	WithTable func(name string) (dialects.Dialect, error)
}

// Exercise runs the whole conformance suite against tgt.
func Exercise(t *testing.T, tgt Target) {
	t.Run("Migrate", func(t *testing.T) { testMigrate(t, tgt) })
	t.Run("SchemaText", func(t *testing.T) { testSchemaText(t, tgt) })
	t.Run("InsertCommitRollback", func(t *testing.T) { testInsertCommitRollback(t, tgt) })
	t.Run("InsertSplit", func(t *testing.T) { testInsertSplit(t, tgt) })
	t.Run("RoundTrip", func(t *testing.T) { testRoundTrip(t, tgt) })
	if d, err := tgt.New(); err == nil {
		if _, ok := d.(dialects.LeasingInserter); ok {
			t.Run("InsertLeased", func(t *testing.T) { testInsertLeased(t, tgt) })
		}
	}
	t.Run("ClaimOrderLimitLease", func(t *testing.T) { testClaimOrderLimitLease(t, tgt) })
	t.Run("AggregateOrder", func(t *testing.T) { testAggregateOrder(t, tgt) })
	t.Run("ClaimIDs", func(t *testing.T) { testClaimIDs(t, tgt) })
	t.Run("ClaimWindow", func(t *testing.T) { testClaimWindow(t, tgt) })
	t.Run("ClaimPastHeldBackHead", func(t *testing.T) { testClaimPastHeldBackHead(t, tgt) })
	t.Run("ClaimFewAggregates", func(t *testing.T) { testClaimFewAggregates(t, tgt) })
	t.Run("ConcurrentClaims", func(t *testing.T) { testConcurrentClaims(t, tgt) })
	t.Run("OwnerOnly", func(t *testing.T) { testOwnerOnly(t, tgt) })
	t.Run("FailAndDead", func(t *testing.T) { testFailAndDead(t, tgt) })
	t.Run("Release", func(t *testing.T) { testRelease(t, tgt) })
	t.Run("Requeue", func(t *testing.T) { testRequeue(t, tgt) })
	t.Run("Cleanup", func(t *testing.T) { testCleanup(t, tgt) })
	t.Run("TryLock", func(t *testing.T) { testTryLock(t, tgt) })
	t.Run("Stats", func(t *testing.T) { testStats(t, tgt) })
	t.Run("WithTable", func(t *testing.T) { testWithTable(t, tgt) })
}
