// Package dialecttest is the conformance suite every jitoutbox dialect runs
// against its own database. A dialect package calls Exercise from a test:
//
//	func TestConformance(t *testing.T) {
//		dialecttest.Exercise(t, dialecttest.Target{
//			Open:           func(t testing.TB) *sql.DB { db, _ := testdb.SQLite(t); return db },
//			New:            func() (dialects.Dialect, error) { return sqlite.New() },
//			WithTable:      func(n string) (dialects.Dialect, error) { return sqlite.New(sqlite.WithTable(n)) },
//			WithPartitions: func(n int) (dialects.Dialect, error) { return sqlite.New(sqlite.WithPartitions(n)) },
//			Legacy:         createLegacyTable,
//			Leases:         true,
//			Lease:          2 * time.Second,
//		})
//	}
//
// Every subtest opens a fresh, isolated database. The SQL the suite runs
// itself is plain and uses e.ph for bind parameters, so that it is the same
// on every database.
package dialecttest

import (
	"database/sql"
	"testing"
	"time"

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
	// WithPartitions builds the dialect with a partition count.
	WithPartitions func(n int) (dialects.Dialect, error)
	// Legacy creates d's table as version 1 left it (the SQL of the 001
	// migration, with no migrations table) and writes rows into it with
	// the columns of that version. Nil skips the upgrade test.
	Legacy func(t testing.TB, db *sql.DB, d dialects.Dialect, rows []LegacyRow)
	// Previous migrates the database to the schema of the previous
	// release (its newest migration) with d's options, as d.Migrate would
	// have then. Where relays of this version call what a later migration
	// guarantees (PostgreSQL: the versioned functions of 008), Previous
	// also installs it, so that the suite drives the old schema with this
	// version's relay. Nil skips the test of the migrations added since.
	Previous func(t testing.TB, db *sql.DB, d dialects.Dialect)
	// MigrateNamed migrates the database the way code of an earlier
	// numbering did: d's migrations named names, applied in that order
	// and recorded as versions 1, 2, 3... Nil skips the renumbering test.
	MigrateNamed func(t testing.TB, db *sql.DB, d dialects.Dialect, names ...string)
	// MigrateTo migrates the database to d's migrations up to version, as
	// Migrate would have then. Nil skips the upgrade test from version 8.
	MigrateTo func(t testing.TB, db *sql.DB, d dialects.Dialect, version int)
	// OldNumberings are the migration names, in version order, that code
	// of an earlier numbering recorded (one list per deployed state).
	OldNumberings [][]string
	// Leases is true for dialects whose sessions keep leases renewed by
	// Check (SQLite) instead of locks that die with a connection: a
	// session then dies by not calling Check for Lease, and WaitChange
	// returns ErrRelaysChanged when the relays change (nil only on lock
	// dialects, whose wait ends when a watched lock is freed).
	Leases bool
	// Lease is the lease given to OpenSession (default 30s). Lease
	// dialects should give a short one: the suite moves its clock past it.
	Lease time.Duration
	// SerialWriters is true when the database runs one write transaction
	// at a time (SQLite): seqs then commit in order, and the test of a lower
	// seq committing after a higher one is skipped.
	SerialWriters bool
	// KillSession ends s the way a crash of its process would (lock
	// dialects: the server terminates the session's connection), without
	// calling any method of s. Required unless Leases.
	KillSession func(t testing.TB, db *sql.DB, s dialects.Session)
	// LockHolders returns a query, with its arguments, whose rows (one
	// integer column) are the server connections (PostgreSQL backend pids,
	// MariaDB/MySQL connection ids) holding a lock of d's table, its
	// sessions' member locks and partition locks, each once. Nil skips the
	// tests that count them (lease dialects hold no locks).
	LockHolders func(t testing.TB, db *sql.DB, d dialects.Dialect) (query string, args []any)
	// MaxTableName is the longest table name WithTable accepts (the
	// dialect's MaxTableName); 0 skips the test of the limit.
	MaxTableName int
	// Schema returns the statements that create an empty schema
	// (PostgreSQL) or database (MySQL) named name and drop it with its
	// tables, for the tests of FindTables across schemas. Nil where table
	// names have no schema part (SQLite): FindTables is then tested on the
	// tables of one file.
	Schema func(name string) (create, drop string)
	// IdentLimit is the database's identifier limit behind MaxTableName;
	// 0 when the dialect derives no limit from it (a longer name is then
	// refused with ErrInvalidTable, not a *dialects.TableNameError).
	IdentLimit int
}

// LegacyRow is one row written by Target.Legacy into a version-1 table.
// Its payload is "p" (text/plain) and its event type AggregateType +
// ".happened"; columns not listed here keep their defaults (NULL).
type LegacyRow struct {
	ID            string
	AggregateType string
	AggregateID   string
	CreatedAt     time.Time
	State         dialects.State
	Attempts      int
	NextAttemptAt time.Time
	LastError     string    // "" for NULL
	PublishedAt   time.Time // zero for NULL
}

func (tgt Target) lease() time.Duration {
	if tgt.Lease > 0 {
		return tgt.Lease
	}
	return 30 * time.Second
}

// Exercise runs the whole conformance suite against tgt.
func Exercise(t *testing.T, tgt Target) {
	t.Run("Migrate", func(t *testing.T) { testMigrate(t, tgt) })
	t.Run("SchemaText", func(t *testing.T) { testSchemaText(t, tgt) })
	t.Run("Partitions", func(t *testing.T) { testPartitions(t, tgt) })
	t.Run("Upgrade", func(t *testing.T) { testUpgrade(t, tgt) })
	t.Run("Renumber", func(t *testing.T) { testRenumber(t, tgt) })
	t.Run("InsertCommitRollback", func(t *testing.T) { testInsertCommitRollback(t, tgt) })
	t.Run("InsertSplit", func(t *testing.T) { testInsertSplit(t, tgt) })
	t.Run("RoundTrip", func(t *testing.T) { testRoundTrip(t, tgt) })
	t.Run("InsertHandoff", func(t *testing.T) { testInsertHandoff(t, tgt) })
	t.Run("SessionTakeRelease", func(t *testing.T) { testSessionTakeRelease(t, tgt) })
	t.Run("SessionView", func(t *testing.T) { testSessionView(t, tgt) })
	t.Run("SessionTakeConcurrent", func(t *testing.T) { testSessionTakeConcurrent(t, tgt) })
	t.Run("SessionDeath", func(t *testing.T) { testSessionDeath(t, tgt) })
	t.Run("WaitChange", func(t *testing.T) { testWaitChange(t, tgt) })
	t.Run("WaitChangeOnJoin", func(t *testing.T) { testWaitChangeOnJoin(t, tgt) })
	t.Run("WaitChangeAloneJoin", func(t *testing.T) { testWaitChangeAloneJoin(t, tgt) })
	t.Run("Nudge", func(t *testing.T) { testNudge(t, tgt) })
	t.Run("WaitChangeJoinedBefore", func(t *testing.T) { testWaitChangeJoinedBefore(t, tgt) })
	t.Run("WaitChangeAloneDeath", func(t *testing.T) { testWaitChangeAloneDeath(t, tgt) })
	t.Run("WaitChangeCancelled", func(t *testing.T) { testWaitChangeCancelled(t, tgt) })
	t.Run("SharedDialect", func(t *testing.T) { testSharedDialect(t, tgt) })
	t.Run("LockerSessions", func(t *testing.T) { testLockerSessions(t, tgt) })
	t.Run("LockerOneConnection", func(t *testing.T) { testLockerOneConnection(t, tgt) })
	t.Run("LockerClosed", func(t *testing.T) { testLockerClosed(t, tgt) })
	t.Run("LockerKilled", func(t *testing.T) { testLockerKilled(t, tgt) })
	t.Run("LockerDroppedTable", func(t *testing.T) { testLockerDroppedTable(t, tgt) })
	t.Run("LockerFailedClose", func(t *testing.T) { testLockerFailedClose(t, tgt) })
	t.Run("LockerConcurrent", func(t *testing.T) { testLockerConcurrent(t, tgt) })
	t.Run("ReadPartitionsOrderLimit", func(t *testing.T) { testReadPartitionsOrderLimit(t, tgt) })
	t.Run("ReadLateCommit", func(t *testing.T) { testReadLateCommit(t, tgt) })
	t.Run("ReadBlocks", func(t *testing.T) { testReadBlocks(t, tgt) })
	t.Run("ReadAheadHoldsEarlierPending", func(t *testing.T) { testReadAheadHoldsEarlierPending(t, tgt) })
	t.Run("ReadHorizon", func(t *testing.T) { testReadHorizon(t, tgt) })
	t.Run("ReadCritical", func(t *testing.T) { testReadCritical(t, tgt) })
	t.Run("ReadCriticalWindow", func(t *testing.T) { testReadCriticalWindow(t, tgt) })
	t.Run("CriticalIndexMigration", func(t *testing.T) { testCriticalIndexMigration(t, tgt) })
	t.Run("Fencing", func(t *testing.T) { testFencing(t, tgt) })
	t.Run("MarkDeleteUnblock", func(t *testing.T) { testMarkDeleteUnblock(t, tgt) })
	t.Run("FailAndDead", func(t *testing.T) { testFailAndDead(t, tgt) })
	t.Run("DeadBlockRequeueSkip", func(t *testing.T) { testDeadBlockRequeueSkip(t, tgt) })
	t.Run("Requeue", func(t *testing.T) { testRequeue(t, tgt) })
	t.Run("Cleanup", func(t *testing.T) { testCleanup(t, tgt) })
	t.Run("TryLock", func(t *testing.T) { testTryLock(t, tgt) })
	t.Run("Stats", func(t *testing.T) { testStats(t, tgt) })
	t.Run("WithTable", func(t *testing.T) { testWithTable(t, tgt) })
	t.Run("TableNameLimit", func(t *testing.T) { testTableNameLimit(t, tgt) })
	t.Run("PendingMigrations", func(t *testing.T) { testPendingMigrations(t, tgt) })
	t.Run("IdempotencyKeys", func(t *testing.T) { testIdempotencyKeys(t, tgt) })
	t.Run("IdempotencyKeyRace", func(t *testing.T) { testIdempotencyKeyRace(t, tgt) })
	t.Run("IdempotencyUpgrade", func(t *testing.T) { testIdempotencyUpgrade(t, tgt) })
	t.Run("BadRows", func(t *testing.T) { testBadRows(t, tgt) })
	t.Run("PartitionCheckUpgrade", func(t *testing.T) { testPartitionCheckUpgrade(t, tgt) })
	t.Run("ScheduleDelay", func(t *testing.T) { testScheduleDelay(t, tgt) })
	t.Run("ScheduleHold", func(t *testing.T) { testScheduleHold(t, tgt) })
	t.Run("ScheduleHoldReplaced", func(t *testing.T) { testScheduleHoldReplaced(t, tgt) })
	t.Run("NextDue", func(t *testing.T) { testNextDue(t, tgt) })
	t.Run("Cancel", func(t *testing.T) { testCancel(t, tgt) })
	t.Run("ScheduleStats", func(t *testing.T) { testScheduleStats(t, tgt) })
	t.Run("ScheduleUpgrade", func(t *testing.T) { testScheduleUpgrade(t, tgt) })
	t.Run("FindTables", func(t *testing.T) { testFindTables(t, tgt) })
	t.Run("Activity", func(t *testing.T) { testActivity(t, tgt) })
	t.Run("ActivityStatements", func(t *testing.T) { testActivityStatements(t, tgt) })
}
