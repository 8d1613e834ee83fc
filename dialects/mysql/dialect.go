package mysql

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/dialects/internal/sqlkit"
	"github.com/jitoutbox/jitoutbox/internal/migrate"
)

//go:embed sql/*.sql sql/migrations/*.sql
var sqlFiles embed.FS

const (
	// maxParams is the MySQL/MariaDB prepared-statement parameter limit.
	maxParams = 65535
	// maxList is the most seqs or ids expanded into one IN (...) list;
	// larger batches are split.
	maxList = 10000
	// migrateWait is how long Migrate waits for another Migrate, in seconds.
	migrateWait = 60
)

// Server kinds, learnt from VERSION() by Partitions (see Dialect.server).
const (
	serverUnknown int32 = iota
	serverMariaDB       // INSERT ... RETURNING (MariaDB 10.5+)
	serverMySQL         // no RETURNING
)

// Dialect is the MySQL / MariaDB implementation of dialects.Dialect. It is
// safe for concurrent use.
type Dialect struct {
	table      string
	partitions int // configured; 0: the table's, whatever it is
	migrator   migrate.Migrator
	insert     *sqlkit.InsertBuilder
	handoff    *sqlkit.InsertBuilder // insert.sql, rows, insert_handoff_tail.sql (MariaDB)
	insp       *sqlkit.Inspector     // the Inspector methods' statements
	stmts      sqlkit.StmtCache      // the reads and small inserts, prepared: one round trip a call
	sess       sessionSQL

	st *sqlkit.Statements // sql/*.sql for the table

	// server says whether the servers this dialect has seen are MariaDB
	// (hand-over with INSERT ... RETURNING) or MySQL (INSERT, then SELECT
	// by id). MySQL is sticky: its path is correct on both, so a dialect
	// that ever saw MySQL never tries RETURNING again; unknown takes it too.
	server atomic.Int32

	database, partitionsQ, partitionsMeta, fillSelect, dupKeys                string
	migrateLock, migrateUnlock, fillUpdate                                    *sqlkit.Query
	handoffBusy, handoffRead, read, readAhead, readCritical                   *sqlkit.Query
	mark, del, unblock, fail, failBlock                                       *sqlkit.Query
	requeueIDs, requeueAggregate, requeueAll, skipIDs, skipAggregate, skipAll *sqlkit.Query
	cleanup, tryLockEnsure, tryLock, tryLockRead, stats                       *sqlkit.Query
	hold, now, nextDue, cancelSelect, cancelDelete, cancelHolds, releaseHolds *sqlkit.Query
	findTables                                                                *sqlkit.Query
	activity                                                                  *sqlkit.Activity
}

var _ dialects.Dialect = (*Dialect)(nil)

// New returns a MySQL / MariaDB dialect for the table named by WithTable
// (default dialects.DefaultTable).
func New(opts ...Option) (*Dialect, error) {
	c := config{table: dialects.DefaultTable}
	for _, o := range opts {
		if err := o(&c); err != nil {
			return nil, err
		}
	}
	d := &Dialect{table: c.table, partitions: c.partitions}
	createParts := c.partitions
	if createParts == 0 {
		createParts = dialects.DefaultPartitions
	}
	st, err := sqlkit.NewStatements(sqlFiles, "sql", c.table, sqlkit.Question,
		map[string]string{"partitions": strconv.Itoa(createParts)})
	if err != nil {
		panic(err.Error()) // build-time invariant
	}
	d.st = st
	// Every file is embedded and parsed by the golden test: a failure
	// here is a build-time invariant.
	load := func(name string) string {
		s, err := st.Text(name)
		if err != nil {
			panic("mysql: " + err.Error())
		}
		return s
	}
	query := func(name string) *sqlkit.Query {
		q, err := st.Query(name)
		if err != nil {
			panic("mysql: " + err.Error())
		}
		return q
	}
	migs, err := migrate.Load(sqlFiles, "sql/migrations", st.Render)
	if err != nil {
		panic("mysql: " + err.Error()) // build-time invariant
	}
	d.migrator = migrate.Migrator{
		Migrations:     migs,
		CreateVersions: load("versions_create.sql"),
		ReadVersions:   load("versions_read.sql"),
		InsertVersion:  load("versions_insert.sql"),
		LegacyExists:   load("legacy_exists.sql"),
		VersionsExists: load("versions_exists.sql"),
		MoveVersion:    load("versions_move.sql"),
		Steps: map[string]func(context.Context, dialects.Querier) error{
			"fill-partitions":        d.fillPartitions,
			"check-idempotency-keys": d.checkIdempotencyKeys,
		},
		Name: "mysql",
		// 009: deliver_at and the holds, which writers and relays of this
		// code use; 010: the read's due rule; 011: PostgreSQL's read_v5
		// and mark_v3 (both empty here, but one version across
		// databases: this code needs 11 everywhere).
		Needed: 11,
	}
	if d.insert, err = sqlkit.NewInsertBuilder(load("insert.sql"), load("insert_row.sql"), sqlkit.Question); err == nil {
		d.handoff, err = d.insert.WithTail(load("insert_handoff_tail.sql"))
	}
	if err != nil {
		panic("mysql: " + err.Error())
	}
	d.sess = sessionSQL{
		open: query("session_open.sql"), lock: query("session_lock.sql"), gc: query("session_gc.sql"),
		take: query("session_take.sql"), own: query("session_own.sql"), release: query("session_release.sql"),
		unlock: query("session_unlock.sql"), check: query("session_check.sql"), view: query("session_view.sql"),
		wait: query("session_wait.sql"), waitRelease: query("session_wait_release.sql"),
		close: query("session_close.sql"), closeRelay: query("session_close_relay.sql"),
		unlockTable: query("session_unlock_table.sql"), kick: query("session_kick.sql"),
		waitID: load("session_wait_id.sql"),
	}
	d.database = load("database.sql")
	d.migrateLock = query("migrate_lock.sql")
	d.migrateUnlock = query("migrate_unlock.sql")
	d.partitionsQ = load("partitions.sql")
	d.partitionsMeta = load("partitions_meta.sql")
	d.handoffBusy = query("insert_handoff_busy.sql")
	d.handoffRead = query("insert_handoff_read.sql")
	d.read = query("read.sql")
	d.readAhead = query("read_ahead.sql")
	d.readCritical = query("read_critical.sql")
	d.mark = query("mark.sql")
	d.del = query("delete.sql")
	d.unblock = query("unblock.sql")
	d.fail = query("fail.sql")
	d.failBlock = query("fail_block.sql")
	d.requeueIDs = query("requeue_ids.sql")
	d.requeueAggregate = query("requeue_aggregate.sql")
	d.requeueAll = query("requeue_all.sql")
	d.skipIDs = query("skip_ids.sql")
	d.skipAggregate = query("skip_aggregate.sql")
	d.skipAll = query("skip_all.sql")
	d.cleanup = query("cleanup.sql")
	d.tryLockEnsure = query("trylock_ensure.sql")
	d.tryLock = query("trylock.sql")
	d.tryLockRead = query("trylock_read.sql")
	d.stats = query("stats.sql")
	d.hold = query("hold.sql")
	d.now = query("now.sql")
	d.nextDue = query("next_due.sql")
	d.cancelSelect = query("cancel_select.sql")
	d.cancelDelete = query("cancel_delete.sql")
	d.cancelHolds = query("cancel_holds.sql")
	d.releaseHolds = query("release_holds.sql")
	d.fillSelect = load("fill_select.sql")
	d.dupKeys = load("idempotency_duplicates.sql")
	d.fillUpdate = query("fill_update.sql")
	d.findTables = query("find_tables.sql")
	d.activity = d.newActivity(st)
	insp, err := d.newInspector()
	if err != nil {
		return nil, err
	}
	d.insp = insp
	return d, nil
}

// Name returns "mysql".
func (d *Dialect) Name() string { return "mysql" }

// Table returns the outbox table name.
func (d *Dialect) Table() string { return d.table }

// Schema returns the DDL of every migration in order, statements separated
// by ";\n". Run it on one connection: migration 002 keeps conditional DDL
// in session variables. To upgrade a table that has rows, use Migrate:
// migration 002 sets the partition of existing rows in Go.
func (d *Dialect) Schema() string { return d.migrator.Schema() }

// MaxInsertRows is the most events one INSERT carries.
func (d *Dialect) MaxInsertRows() int { return maxParams / d.insert.Columns() }

// lockPrefix returns the prefix of the GET_LOCK names of d's table in q's
// database: "jitoutbox.<namespace>.". GET_LOCK names are server-wide, so
// the namespace hashes the database name with an unqualified table name.
func (d *Dialect) lockPrefix(ctx context.Context, q dialects.Querier) (string, error) {
	name := d.table
	if !strings.Contains(name, ".") {
		var db string
		if err := q.QueryRowContext(ctx, d.database).Scan(&db); err != nil {
			return "", err
		}
		name = db + "." + name
	}
	return "jitoutbox." + strconv.Itoa(int(sqlkit.LockNamespace(name))) + ".", nil
}

// Migrate applies the missing migrations on one connection under a
// GET_LOCK lock; it is idempotent and safe to run from several processes
// at once. MySQL commits each DDL statement at once: a migration cut short
// is not recorded and runs again from its start (its statements are
// idempotent). A table made before versioned migrations counts as version 1.
func (d *Dialect) Migrate(ctx context.Context, db *sql.DB) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("mysql: migrate: %w", err)
	}
	defer conn.Close()
	prefix, err := d.lockPrefix(ctx, conn)
	if err != nil {
		return fmt.Errorf("mysql: migrate: %w", err)
	}
	name := prefix + "migrate"
	lock, lockArgs, err := d.migrateLock.Bind(sql.Named("name", name), sql.Named("timeout", migrateWait))
	if err != nil {
		return fmt.Errorf("mysql: migrate: lock: %w", err)
	}
	unlock, unlockArgs, err := d.migrateUnlock.Bind(sql.Named("name", name))
	if err != nil {
		return fmt.Errorf("mysql: migrate: unlock: %w", err)
	}
	if err := d.migrator.RunNamedLock(ctx, conn, migrate.Stmt{SQL: lock, Args: lockArgs},
		migrate.Stmt{SQL: unlock, Args: unlockArgs}, migrateWait); err != nil {
		return err
	}
	// On conn: a pool of one connection has no other while Migrate holds it.
	if _, err := d.Partitions(ctx, conn); err != nil {
		return err
	}
	return nil
}

// fillPartitions is migration 002's Go step: it sets the partition of the
// pending and dead rows of a table made by an earlier version.
func (d *Dialect) fillPartitions(ctx context.Context, q dialects.Querier) error {
	var n int
	if err := q.QueryRowContext(ctx, d.partitionsMeta).Scan(&n); err != nil {
		return err
	}
	return sqlkit.FillPartitions(ctx, q, n, d.fillSelect, func(ctx context.Context, part int, seqs []int64) error {
		_, err := sqlkit.Exec(ctx, q, d.fillUpdate, sql.Named("part", part), sql.Named("seqs", seqs))
		return err
	})
}

// Partitions reads the table's partition count; see dialects.Dialect. It
// also learns whether the server is MariaDB (see Dialect.server).
func (d *Dialect) Partitions(ctx context.Context, q dialects.Querier) (int, error) {
	var n int
	var v sql.NullInt64
	var version string
	if err := q.QueryRowContext(ctx, d.partitionsQ).Scan(&n, &v, &version); err != nil {
		// Error 1146: no such table; 1054: unknown column.
		msg := err.Error()
		return 0, sqlkit.PartitionsReadError(ctx, "mysql", d.table, err,
			strings.Contains(msg, "Error 1146") || strings.Contains(msg, "Error 1054"))
	}
	if strings.Contains(strings.ToLower(version), "mariadb") {
		d.server.CompareAndSwap(serverUnknown, serverMariaDB)
	} else {
		d.server.Store(serverMySQL)
	}
	return sqlkit.CheckPartitions(d.table, n, v, d.migrator.Required(), d.partitions)
}

// insertArgs returns the bind arguments of events' rows for b
// (insert_row.sql).
func insertArgs(b *sqlkit.InsertBuilder, events []dialects.Event) ([]any, error) {
	args := make([]any, 0, len(events)*b.Columns())
	for i := range events {
		e := &events[i]
		h, err := sqlkit.EncodeHeaders(e.Headers)
		if err != nil {
			return nil, err
		}
		created := sqlkit.UTC(e.CreatedAt)
		delay, notBefore := sqlkit.ScheduleArgs(e)
		args, err = b.AppendRow(args, sql.Named("id", e.ID), sql.Named("aggregate_type", e.AggregateType),
			sql.Named("aggregate_id", e.AggregateID), sql.Named("event_type", e.EventType),
			sql.Named("payload", sqlkit.Payload(e.Payload)), sql.Named("content_type", e.ContentType),
			sql.Named("headers", h), sql.Named("idempotency_key", sqlkit.NullString(e.IdempotencyKey)),
			sql.Named("critical", e.Critical), sql.Named("created_at", created), sql.Named("delay", delay),
			sql.Named("not_before", notBefore), sql.Named("deliver_delay", delay),
			sql.Named("deliver_not_before", notBefore), sql.Named("part", e.Partition))
		if err != nil {
			return nil, err
		}
	}
	return args, nil
}

// insertEvents writes events with as few multi-row INSERTs as the parameter limit
// allows, in slice order, then the holds of their ordered scheduled events.
func (d *Dialect) insertEvents(ctx context.Context, q dialects.Execer, events []dialects.Event) error {
	all := events
	max := d.MaxInsertRows()
	for len(events) > 0 {
		n := min(len(events), max)
		args, err := insertArgs(d.insert, events[:n])
		if err != nil {
			return err
		}
		if _, err := d.execIn(ctx, q, n, d.insert.SQL(n), args...); err != nil {
			return fmt.Errorf("mysql: insert %d events: %w", n, err)
		}
		events = events[n:]
	}
	return d.holdAggregates(ctx, q, all)
}

// aggKey is an aggregate within its partition.
type aggKey struct {
	part    int
	typ, id string
}

// insertHandoff writes events with one INSERT and returns those whose
// aggregate was free before it (freeEvents). Events that do not fit in one
// statement are written by Insert and none is returned.
func (d *Dialect) insertHandoff(ctx context.Context, q dialects.Querier, events []dialects.Event) ([]dialects.Record, error) {
	n := len(events)
	if n == 0 {
		return nil, nil
	}
	if n > d.MaxInsertRows() {
		return nil, d.insertEvents(ctx, q, events)
	}
	free, err := d.freeEvents(ctx, q, events)
	if err != nil {
		return nil, err
	}
	if len(free) == 0 {
		return nil, d.insertEvents(ctx, q, events)
	}
	args, err := insertArgs(d.insert, events)
	if err != nil {
		return nil, err
	}
	var recs []dialects.Record
	switch {
	case n == 1:
		// One row: its seq is the INSERT's last insert id, on either
		// server, and the INSERT runs as an Exec: database/sql runs every
		// query in a transaction with a goroutine of its own (to close
		// its rows if the transaction ends first), an Exec without one.
		var res sql.Result
		if res, err = d.execIn(ctx, q, n, d.insert.SQL(n), args...); err == nil {
			var seq int64
			if seq, err = res.LastInsertId(); err == nil {
				recs = sqlkit.HandoffRecordsOf([]sqlkit.Inserted{{Seq: seq, ID: events[0].ID, Free: true}}, free)
			}
		}
	case d.server.Load() == serverMariaDB:
		var rows *sql.Rows
		if rows, err = d.queryIn(ctx, q, n, d.handoff.SQL(n), args...); err == nil {
			recs, err = sqlkit.HandoffRecords(rows, free)
		}
	default:
		if _, err = d.execIn(ctx, q, n, d.insert.SQL(n), args...); err == nil {
			ids := make([]string, len(free))
			for i := range free {
				ids[i] = free[i].ID
			}
			var rows *sql.Rows
			if rows, err = d.queryNamed(ctx, q, len(ids), d.handoffRead, sql.Named("ids", ids)); err == nil {
				recs, err = sqlkit.HandoffRecords(rows, free)
			}
		}
	}
	if err != nil {
		return nil, fmt.Errorf("mysql: insert %d events: %w", n, err)
	}
	if err := d.holdAggregates(ctx, q, events); err != nil {
		return nil, err
	}
	return recs, nil
}

// freeEvents returns the events whose aggregate has no pending row and no
// block visible to q (insert_handoff_busy.sql).
func (d *Dialect) freeEvents(ctx context.Context, q dialects.Querier, events []dialects.Event) ([]dialects.Event, error) {
	seen := make(map[aggKey]bool, len(events))
	var aggs [][]any
	for i := range events {
		k := aggKey{events[i].Partition, events[i].AggregateType, events[i].AggregateID}
		if !seen[k] {
			seen[k] = true
			aggs = append(aggs, []any{k.part, k.typ, k.id})
		}
	}
	rows, err := d.queryNamed(ctx, q, len(aggs), d.handoffBusy, sql.Named("aggs", aggs))
	if err != nil {
		return nil, fmt.Errorf("mysql: insert: look for pending rows: %w", err)
	}
	defer rows.Close()
	busy := make(map[aggKey]bool)
	for rows.Next() {
		var b aggKey
		if err := rows.Scan(&b.part, &b.typ, &b.id); err != nil {
			return nil, fmt.Errorf("mysql: insert: look for pending rows: %w", err)
		}
		busy[b] = true
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("mysql: insert: look for pending rows: %w", err)
	}
	var free []dialects.Event
	for i := range events {
		if !busy[aggKey{events[i].Partition, events[i].AggregateType, events[i].AggregateID}] {
			free = append(free, events[i])
		}
	}
	return free, nil
}

// Read returns pending, due, unblocked rows of req.Partitions in Seq order
// and, for a read from the start, its horizon (read.sql, or read_ahead.sql
// after a Seq; prepared per partition count).
func (d *Dialect) Read(ctx context.Context, db *sql.DB, req dialects.ReadRequest) (dialects.ReadResult, error) {
	if req.Limit <= 0 || len(req.Partitions) == 0 {
		return dialects.ReadResult{}, nil
	}
	q, named := d.read, []sql.NamedArg{sql.Named("parts", req.Partitions), sql.Named("after", req.After),
		sql.Named("now", sqlkit.UTC(req.Now)), sql.Named("limit", req.Limit)}
	if req.After > 0 {
		q, named = d.readAhead, append(named, sql.Named("window", sqlkit.ReadAheadWindow*req.Limit), sql.Named("horizon", req.Horizon))
	}
	res, err := sqlkit.RunRead(ctx, &d.stmts, db, q, false, req.Limit, named...)
	if err != nil {
		return dialects.ReadResult{}, fmt.Errorf("mysql: read: %w", err)
	}
	return res, nil
}

// ReadCritical returns the time-critical rows of req.Partitions that no
// earlier row of their aggregate holds back, and how many candidates it
// looked at (read_critical.sql, prepared
// per partition count).
func (d *Dialect) ReadCritical(ctx context.Context, db *sql.DB, req dialects.CriticalRequest) (dialects.CriticalResult, error) {
	if req.Limit <= 0 || len(req.Partitions) == 0 {
		return dialects.CriticalResult{}, nil
	}
	res, err := sqlkit.RunCritical(ctx, &d.stmts, db, d.readCritical, false, req.Limit, sql.Named("parts", req.Partitions),
		sql.Named("now", sqlkit.UTC(req.Now)), sql.Named("window", sqlkit.CriticalWindow(req)), sql.Named("limit", req.Limit))
	if err != nil {
		return dialects.CriticalResult{}, fmt.Errorf("mysql: read critical: %w", err)
	}
	return res, nil
}
