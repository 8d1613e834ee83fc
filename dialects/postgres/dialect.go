package postgres

import (
	"context"
	"database/sql"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/dialects/internal/sqlkit"
	"github.com/jitoutbox/jitoutbox/internal/migrate"
)

//go:embed sql/*.sql sql/migrations/*.sql sql/functions/*.sql
var sqlFiles embed.FS

// maxParams is PostgreSQL's bind-parameter limit per statement.
const maxParams = 65535

// Dialect is the PostgreSQL implementation of dialects.Dialect. It is safe
// for concurrent use.
type Dialect struct {
	table      string
	partitions int // configured; 0: the table's, whatever it is
	migrator   migrate.Migrator
	insert     *sqlkit.InsertBuilder
	handoff    *sqlkit.InsertBuilder // insert_handoff.sql, rows, insert_handoff_tail.sql
	insp       *sqlkit.Inspector     // the Inspector methods' statements
	stmts      sqlkit.StmtCache      // the read and the mark, prepared: one round trip a call

	sess sessionSQL

	st *sqlkit.Statements // sql/*.sql for the table

	tableOID, migrateLock, partitionsQ, partitionsMeta, fillSelect, dupKeys string
	read, readCritical, mark, fail, fillUpdate                              *sqlkit.Query
	requeueIDs, requeueAggregate, requeueAll                                *sqlkit.Query
	skipIDs, skipAggregate, skipAll, cleanup, tryLock, stats                *sqlkit.Query
	hold, now, nextDue, cancel, releaseHolds                                *sqlkit.Query
	findTables                                                              *sqlkit.Query
	activity                                                                *sqlkit.Activity
}

var _ dialects.Dialect = (*Dialect)(nil)

// New returns a PostgreSQL dialect for the table named by WithTable (default
// dialects.DefaultTable).
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
	st, err := sqlkit.NewStatements(sqlFiles, "sql", c.table, sqlkit.Dollar,
		map[string]string{"partitions": strconv.Itoa(createParts), "member_key_mod": strconv.Itoa(memberKeyMod)})
	if err != nil {
		panic(err.Error()) // build-time invariant
	}
	d.st = st
	// Every file is embedded and parsed by the golden test: a failure
	// here is a build-time invariant.
	load := func(name string) string {
		s, err := st.Text(name)
		if err != nil {
			panic("postgres: " + err.Error())
		}
		return s
	}
	query := func(name string) *sqlkit.Query {
		q, err := st.Query(name)
		if err != nil {
			panic("postgres: " + err.Error())
		}
		return q
	}
	migs, err := migrate.Load(sqlFiles, "sql/migrations", st.Render)
	if err != nil {
		panic("postgres: " + err.Error()) // build-time invariant
	}
	fns, err := migrate.LoadFunctions(sqlFiles, "sql/functions", st.Render)
	if err != nil {
		panic("postgres: " + err.Error()) // build-time invariant
	}
	d.migrator = migrate.Migrator{
		Migrations:     migs,
		Functions:      fns,
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
		Name: "postgres",
		// 009: deliver_at and the holds, which writers of this code
		// use; 011: read_v5 and mark_v3, which its relays call (one
		// version across databases: this code needs 11 everywhere).
		Needed: 11,
	}
	if d.insert, err = sqlkit.NewInsertBuilder(load("insert.sql"), load("insert_row.sql"), sqlkit.Dollar); err != nil {
		panic("postgres: " + err.Error())
	}
	handoff, err := sqlkit.NewInsertBuilder(load("insert_handoff.sql"), load("insert_row.sql"), sqlkit.Dollar)
	if err == nil {
		d.handoff, err = handoff.WithTail(load("insert_handoff_tail.sql"))
	}
	if err != nil {
		panic("postgres: " + err.Error())
	}
	d.sess = sessionSQL{
		open: query("session_open.sql"), gc: query("session_gc.sql"), kick: query("session_kick.sql"), take: query("session_take.sql"),
		release: query("session_release.sql"), check: query("session_check.sql"), view: query("session_view.sql"),
		close: query("session_close.sql"), unlock: query("session_unlock.sql"), wait: query("session_wait.sql"),
		waitPID: load("session_wait_pid.sql"), waitCancel: query("session_wait_cancel.sql"),
	}
	d.tableOID = load("table_oid.sql")
	d.migrateLock = load("migrate_lock.sql")
	d.partitionsQ = load("partitions.sql")
	d.partitionsMeta = load("partitions_meta.sql")
	d.read = query("read.sql")
	d.readCritical = query("read_critical.sql")
	d.mark = query("mark.sql")
	d.fail = query("fail.sql")
	d.requeueIDs = query("requeue_ids.sql")
	d.requeueAggregate = query("requeue_aggregate.sql")
	d.requeueAll = query("requeue_all.sql")
	d.skipIDs = query("skip_ids.sql")
	d.skipAggregate = query("skip_aggregate.sql")
	d.skipAll = query("skip_all.sql")
	d.cleanup = query("cleanup.sql")
	d.tryLock = query("trylock.sql")
	d.stats = query("stats.sql")
	d.hold = query("hold.sql")
	d.now = query("now.sql")
	d.nextDue = query("next_due.sql")
	d.cancel = query("cancel.sql")
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

// Name returns "postgres".
func (d *Dialect) Name() string { return "postgres" }

// Table returns the outbox table name.
func (d *Dialect) Table() string { return d.table }

// Schema returns the DDL of every migration in order, then the functions
// relays call (sql/functions/), statements separated by ";\n". To upgrade
// a table that has rows, use Migrate: migration 002 sets the partition of
// existing rows in Go.
func (d *Dialect) Schema() string { return d.migrator.Schema() }

// MaxInsertRows is the most events one INSERT carries.
func (d *Dialect) MaxInsertRows() int { return maxParams / d.insert.Columns() }

// Migrate applies the missing migrations, then installs the functions
// relays call (CREATE OR REPLACE), in one transaction under an advisory
// lock; it is idempotent and safe to run from several processes
// at once. A table made before versioned migrations counts as version 1.
func (d *Dialect) Migrate(ctx context.Context, db *sql.DB) error {
	if err := d.migrator.RunInTx(ctx, db, d.migrateLock); err != nil {
		return err
	}
	if _, err := d.Partitions(ctx, db); err != nil {
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
		_, err := sqlkit.Exec(ctx, q, d.fillUpdate, sql.Named("part", part), sql.Named("seqs", intArray(seqs)))
		return err
	})
}

// Partitions reads the table's partition count; see dialects.Dialect.
func (d *Dialect) Partitions(ctx context.Context, q dialects.Querier) (int, error) {
	var n int
	var v sql.NullInt64
	if err := q.QueryRowContext(ctx, d.partitionsQ).Scan(&n, &v); err != nil {
		// SQLSTATE class 42: a table, column or function of this version
		// is missing.
		return 0, sqlkit.PartitionsReadError(ctx, "postgres", d.table, err, strings.HasPrefix(sqlkit.SQLState(err), "42"))
	}
	return sqlkit.CheckPartitions(d.table, n, v, d.migrator.Required(), d.partitions)
}

// lockNamespaces returns the first keys of the two-key advisory locks of the
// table's partitions and relay sessions: a hash of the table's OID, so
// same-named tables in different schemas never share locks.
func (d *Dialect) lockNamespaces(ctx context.Context, q dialects.Querier) (part, member int32, err error) {
	var oid int64
	if err := q.QueryRowContext(ctx, d.tableOID).Scan(&oid); err != nil {
		return 0, 0, fmt.Errorf("postgres: look up table %s: %w", d.table, err)
	}
	part = sqlkit.LockNamespace("oid:" + strconv.FormatInt(oid, 10))
	return part, part ^ 0x40000000, nil
}

// payloadArgs splits a payload between the payload and payload_json
// columns: valid UTF-8 JSON of a JSON event goes to payload_json.
func payloadArgs(e *dialects.Event) (bin, js any) {
	if e.IsJSON() && len(e.Payload) > 0 && utf8.Valid(e.Payload) && json.Valid(e.Payload) {
		return nil, string(e.Payload)
	}
	return sqlkit.Payload(e.Payload), nil
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
		if _, err := q.ExecContext(ctx, d.insert.SQL(n), args...); err != nil {
			return fmt.Errorf("postgres: insert %d events: %w", n, err)
		}
		events = events[n:]
	}
	return d.holdAggregates(ctx, q, all)
}

// insertArgs returns the bind arguments of events' rows for b
// (insert_row.sql, which insert.sql and insert_handoff.sql share).
func insertArgs(b *sqlkit.InsertBuilder, events []dialects.Event) ([]any, error) {
	args := make([]any, 0, len(events)*b.Columns())
	for i := range events {
		e := &events[i]
		h, err := sqlkit.EncodeHeaders(e.Headers)
		if err != nil {
			return nil, err
		}
		bin, js := payloadArgs(e)
		created := sqlkit.UTC(e.CreatedAt)
		delay, notBefore := sqlkit.ScheduleArgs(e)
		args, err = b.AppendRow(args, sql.Named("id", e.ID), sql.Named("aggregate_type", e.AggregateType),
			sql.Named("aggregate_id", e.AggregateID), sql.Named("event_type", e.EventType),
			sql.Named("payload", bin), sql.Named("payload_json", js), sql.Named("content_type", e.ContentType),
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

// insertHandoff writes events with one INSERT and returns, as records in
// Seq order, those whose aggregate has no pending row and no block visible
// to the transaction (insert_handoff.sql). Events that do not fit in one
// statement are written by Insert and none is returned.
func (d *Dialect) insertHandoff(ctx context.Context, q dialects.Querier, events []dialects.Event) ([]dialects.Record, error) {
	n := len(events)
	if n == 0 {
		return nil, nil
	}
	cols := d.handoff.Columns()
	if n*cols > maxParams {
		return nil, d.insertEvents(ctx, q, events)
	}
	args, err := insertArgs(d.handoff, events)
	if err != nil {
		return nil, err
	}
	rows, err := q.QueryContext(ctx, d.handoff.SQL(n), args...)
	if err != nil {
		return nil, fmt.Errorf("postgres: insert %d events: %w", n, err)
	}
	recs, err := sqlkit.HandoffRecords(rows, events)
	if err != nil {
		return nil, fmt.Errorf("postgres: insert %d events: %w", n, err)
	}
	if err := d.holdAggregates(ctx, q, events); err != nil {
		return nil, err
	}
	return recs, nil
}

// Read returns pending, due, unblocked rows of req.Partitions in Seq order
// and, for a read from the start, its horizon (read.sql, prepared).
func (d *Dialect) Read(ctx context.Context, db *sql.DB, req dialects.ReadRequest) (dialects.ReadResult, error) {
	if req.Limit <= 0 || len(req.Partitions) == 0 {
		return dialects.ReadResult{}, nil
	}
	res, err := sqlkit.RunRead(ctx, &d.stmts, db, d.read, true, req.Limit, sql.Named("parts", partArray(req.Partitions)),
		sql.Named("after", req.After), sql.Named("horizon", req.Horizon), sql.Named("now", sqlkit.UTC(req.Now)), sql.Named("limit", req.Limit))
	if err != nil {
		return dialects.ReadResult{}, fmt.Errorf("postgres: read: %w", err)
	}
	return res, nil
}

// ReadCritical returns the time-critical rows of req.Partitions that no
// earlier row of their aggregate holds back, and how many candidates it
// looked at (read_critical.sql, prepared).
func (d *Dialect) ReadCritical(ctx context.Context, db *sql.DB, req dialects.CriticalRequest) (dialects.CriticalResult, error) {
	if req.Limit <= 0 || len(req.Partitions) == 0 {
		return dialects.CriticalResult{}, nil
	}
	res, err := sqlkit.RunCritical(ctx, &d.stmts, db, d.readCritical, true, req.Limit, sql.Named("parts", partArray(req.Partitions)),
		sql.Named("now", sqlkit.UTC(req.Now)), sql.Named("window", sqlkit.CriticalWindow(req)), sql.Named("limit", req.Limit))
	if err != nil {
		return dialects.CriticalResult{}, fmt.Errorf("postgres: read critical: %w", err)
	}
	return res, nil
}

// partArray renders partitions as a PostgreSQL array literal.
func partArray(parts []int) string {
	b := make([]byte, 0, 2+len(parts)*4)
	b = append(b, '{')
	for i, p := range parts {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(p), 10)
	}
	return string(append(b, '}'))
}

// intArray renders seqs as a PostgreSQL array literal ("{1,2,3}"), bound as
// one text parameter (no driver-specific array type needed).
func intArray(seqs []int64) string {
	b := make([]byte, 0, 2+len(seqs)*8)
	b = append(b, '{')
	for i, s := range seqs {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, s, 10)
	}
	return string(append(b, '}'))
}

// textArray renders ss as a PostgreSQL array literal with every element
// double-quoted and escaped, bound as one text parameter.
func textArray(ss []string) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, s := range ss {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('"')
		for j := 0; j < len(s); j++ {
			if s[j] == '"' || s[j] == '\\' {
				b.WriteByte('\\')
			}
			b.WriteByte(s[j])
		}
		b.WriteByte('"')
	}
	b.WriteByte('}')
	return b.String()
}

// affected returns a function that turns an Exec result into a row count,
// wrapping errors with op.
func affected(op string) func(sql.Result, error) (int64, error) {
	return func(res sql.Result, err error) (int64, error) {
		if err != nil {
			return 0, fmt.Errorf("postgres: %s: %w", op, err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return 0, fmt.Errorf("postgres: %s: rows affected: %w", op, err)
		}
		return n, nil
	}
}

// Mark marks (or deletes) m.Seqs in partitions m.Token owns with one call
// of the <table>_mark function (prepared; no wait for the WAL flush).
func (d *Dialect) Mark(ctx context.Context, db *sql.DB, m dialects.Mark) (int64, error) {
	if len(m.Seqs) == 0 {
		return 0, nil
	}
	var unblock, at any
	if len(m.Unblock) > 0 {
		unblock = intArray(m.Unblock)
	}
	if !m.Delete {
		at = sqlkit.UTC(m.At)
	}
	query, args, err := d.mark.Bind(sql.Named("token", m.Token), sql.Named("seqs", intArray(m.Seqs)),
		sql.Named("unblock", unblock), sql.Named("at", at))
	if err != nil {
		return 0, fmt.Errorf("postgres: mark: %w", err)
	}
	stmt, err := d.stmts.Stmt(ctx, db, query)
	if err != nil {
		return 0, fmt.Errorf("postgres: mark: prepare: %w", err)
	}
	var n int64
	if err := stmt.QueryRowContext(ctx, args...).Scan(&n); err != nil {
		if ctx.Err() == nil {
			d.stmts.Forget(db, query) // e.g. the function was dropped and created again
		}
		return 0, fmt.Errorf("postgres: mark: %w", err)
	}
	return n, nil
}

// failJSON is one failure as fail.sql reads it.
type failJSON struct {
	Seq   int64     `json:"seq"`
	Part  int       `json:"part"`
	AT    string    `json:"at"`
	AI    string    `json:"ai"`
	Err   string    `json:"err"`
	Next  time.Time `json:"next"`
	Dead  bool      `json:"dead"`
	Block bool      `json:"block"`
}

// Fail records failed attempts and blocks with one statement (fail.sql).
func (d *Dialect) Fail(ctx context.Context, db *sql.DB, token string, failures []dialects.Failure) error {
	if len(failures) == 0 {
		return nil
	}
	fs := make([]failJSON, len(failures))
	for i, f := range failures {
		fs[i] = failJSON{Seq: f.Seq, Part: f.Partition, AT: f.AggregateType, AI: f.AggregateID,
			Err: sqlkit.TruncateError(f.Error), Next: sqlkit.UTC(f.NextAttemptAt), Dead: f.Dead, Block: f.Block}
	}
	b, err := json.Marshal(fs)
	if err != nil {
		return fmt.Errorf("postgres: fail: %w", err)
	}
	if _, err := sqlkit.Exec(ctx, db, d.fail, sql.Named("token", token), sql.Named("failures", string(b))); err != nil {
		return fmt.Errorf("postgres: fail: %w", err)
	}
	return nil
}

// Requeue moves dead rows selected by f back to pending and removes their
// blocks. IDs must be UUIDs.
func (d *Dialect) Requeue(ctx context.Context, db *sql.DB, f dialects.RequeueFilter, now time.Time) (int64, error) {
	sel, err := sqlkit.RequeueSelector(f)
	if err != nil {
		return 0, err
	}
	n := sql.Named("now", sqlkit.UTC(now))
	switch sel {
	case sqlkit.SelectIDs:
		return count(ctx, db, "requeue", d.requeueIDs, n, sql.Named("ids", textArray(f.IDs)))
	case sqlkit.SelectAggregate:
		return count(ctx, db, "requeue", d.requeueAggregate, n,
			sql.Named("aggregate_type", f.AggregateType), sql.Named("aggregate_id", f.AggregateID))
	default:
		return count(ctx, db, "requeue", d.requeueAll, n)
	}
}

// Skip removes the blocks of dead rows selected by f. IDs must be UUIDs.
func (d *Dialect) Skip(ctx context.Context, db *sql.DB, f dialects.RequeueFilter) (int64, error) {
	sel, err := sqlkit.RequeueSelector(f)
	if err != nil {
		return 0, err
	}
	switch sel {
	case sqlkit.SelectIDs:
		return count(ctx, db, "skip", d.skipIDs, sql.Named("ids", textArray(f.IDs)))
	case sqlkit.SelectAggregate:
		return count(ctx, db, "skip", d.skipAggregate,
			sql.Named("aggregate_type", f.AggregateType), sql.Named("aggregate_id", f.AggregateID))
	default:
		return count(ctx, db, "skip", d.skipAll)
	}
}

// count runs a statement that returns one count.
func count(ctx context.Context, db *sql.DB, op string, query *sqlkit.Query, args ...sql.NamedArg) (int64, error) {
	var n int64
	if err := sqlkit.QueryRow(ctx, db, query, args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("postgres: %s: %w", op, err)
	}
	return n, nil
}

// Cleanup deletes up to limit rows published before `before`.
func (d *Dialect) Cleanup(ctx context.Context, db *sql.DB, before time.Time, limit int) (int64, error) {
	if limit <= 0 {
		return 0, nil
	}
	return affected("cleanup")(sqlkit.Exec(ctx, db, d.cleanup, sql.Named("before", sqlkit.UTC(before)), sql.Named("limit", limit)))
}

// TryLock takes or renews the named lease for owner.
func (d *Dialect) TryLock(ctx context.Context, db *sql.DB, name, owner string, now, until time.Time) (bool, error) {
	var got string
	err := sqlkit.QueryRow(ctx, db, d.tryLock, sql.Named("name", name), sql.Named("owner", owner),
		sql.Named("now", sqlkit.UTC(now)), sql.Named("until", sqlkit.UTC(until))).Scan(&got)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("postgres: trylock %q: %w", name, err)
	}
	return got == owner, nil
}

// Stats reads counts, the oldest pending and published times and the
// blocked aggregates in one query (sql/stats.sql) whose cost is bounded by
// the pending and dead rows, not by the published rows kept.
func (d *Dialect) Stats(ctx context.Context, db *sql.DB) (dialects.Stats, error) {
	return sqlkit.ReadStats(ctx, db, d.stats, "postgres")
}
