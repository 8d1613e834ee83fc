package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/dialects/internal/sqlkit"
	"github.com/jitoutbox/jitoutbox/internal/migrate"
)

//go:embed sql/*.sql sql/migrations/*.sql
var sqlFiles embed.FS

// maxVariables is SQLITE_MAX_VARIABLE_NUMBER of modern SQLite builds
// (including modernc.org/sqlite).
const maxVariables = 32766

// MaxOpenConns is the largest connection pool to give a SQLite *sql.DB:
// SQLite runs one writer at a time, and more connections only add writers
// that starve in the busy handler (see the package doc); the second lets a
// read run beside a write.
const MaxOpenConns = 2

// Dialect is the SQLite implementation of dialects.Dialect. It is safe for
// concurrent use.
type Dialect struct {
	table      string
	partitions int // configured; 0: the table's, whatever it is
	migrator   migrate.Migrator
	insert     *sqlkit.InsertBuilder
	handoff    *sqlkit.InsertBuilder // insert_handoff.sql, rows, insert_handoff_tail.sql
	insp       *sqlkit.Inspector     // the Inspector methods' statements
	stmts      sqlkit.StmtCache      // the read and the mark, prepared once
	sess       sessionSQL

	st *sqlkit.Statements // sql/*.sql for the table

	partitionsQ, partitionsMeta, fillSelect, dupKeys         string
	fillUpdate, read, readAhead, readCritical                *sqlkit.Query
	mark, markDelete, markUnblock, fail, failBlock           *sqlkit.Query
	requeueIDs, requeueAggregate, requeueAll, requeueUnblock *sqlkit.Query
	skipIDs, skipAggregate, skipAll, cleanup, tryLock, stats *sqlkit.Query
	hold, nextDue, cancel, cancelHolds, releaseHolds         *sqlkit.Query
	findTables                                               *sqlkit.Query
	activity                                                 *sqlkit.Activity
}

var _ dialects.Dialect = (*Dialect)(nil)

// New returns a SQLite dialect for the table named by WithTable (default
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
	st, err := sqlkit.NewStatements(sqlFiles, "sql", c.table, sqlkit.QuestionNumbered,
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
			panic("sqlite: " + err.Error())
		}
		return s
	}
	query := func(name string) *sqlkit.Query {
		q, err := st.Query(name)
		if err != nil {
			panic("sqlite: " + err.Error())
		}
		return q
	}
	migs, err := migrate.Load(sqlFiles, "sql/migrations", st.Render)
	if err != nil {
		panic("sqlite: " + err.Error()) // build-time invariant
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
		Name: "sqlite",
		// 010, 011: one version across databases (docs/schema.md).
		Needed: 11,
	}
	// The rows bind with '?' (a name appears once in a row): the
	// statements' ?N numbering would not follow the rows.
	if d.insert, err = sqlkit.NewInsertBuilder(load("insert.sql"), load("insert_row.sql"), sqlkit.Question); err != nil {
		panic("sqlite: " + err.Error())
	}
	handoff, err := sqlkit.NewInsertBuilder(load("insert_handoff.sql"), load("insert_row.sql"), sqlkit.Question)
	if err == nil {
		d.handoff, err = handoff.WithTail(load("insert_handoff_tail.sql"))
	}
	if err != nil {
		panic("sqlite: " + err.Error())
	}
	d.sess = sessionSQL{
		open: query("session_open.sql"), gc: query("session_gc.sql"), take: query("session_take.sql"),
		renew: query("session_renew.sql"), check: query("session_check.sql"),
		release: query("session_release.sql"), view: query("session_view.sql"),
		close: query("session_close.sql"), closeRelay: query("session_close_relay.sql"),
		watch: query("session_watch.sql"), file: load("session_file.sql"),
	}
	d.partitionsQ = load("partitions.sql")
	d.partitionsMeta = load("partitions_meta.sql")
	d.fillSelect = load("fill_select.sql")
	d.dupKeys = load("idempotency_duplicates.sql")
	d.fillUpdate = query("fill_update.sql")
	d.read = query("read.sql")
	d.readAhead = query("read_ahead.sql")
	d.readCritical = query("read_critical.sql")
	d.mark = query("mark.sql")
	d.markDelete = query("mark_delete.sql")
	d.markUnblock = query("mark_unblock.sql")
	d.fail = query("fail.sql")
	d.failBlock = query("fail_block.sql")
	d.requeueIDs = query("requeue_ids.sql")
	d.requeueAggregate = query("requeue_aggregate.sql")
	d.requeueAll = query("requeue_all.sql")
	d.requeueUnblock = query("requeue_unblock.sql")
	d.skipIDs = query("skip_ids.sql")
	d.skipAggregate = query("skip_aggregate.sql")
	d.skipAll = query("skip_all.sql")
	d.cleanup = query("cleanup.sql")
	d.tryLock = query("trylock.sql")
	d.stats = query("stats.sql")
	d.hold = query("hold.sql")
	d.nextDue = query("next_due.sql")
	d.cancel = query("cancel.sql")
	d.cancelHolds = query("cancel_holds.sql")
	d.releaseHolds = query("release_holds.sql")
	d.findTables = query("find_tables.sql")
	d.activity = d.newActivity(st)
	insp, err := d.newInspector()
	if err != nil {
		return nil, err
	}
	d.insp = insp
	return d, nil
}

// micros converts a time to the stored form: unix microseconds.
func micros(t time.Time) int64 { return t.UnixMicro() }

// Name returns "sqlite".
func (d *Dialect) Name() string { return "sqlite" }

// Table returns the outbox table name.
func (d *Dialect) Table() string { return d.table }

// Schema returns the DDL of every migration in order, statements separated
// by ";\n", for a database that has none of it (migration 002 rebuilds the
// table, which cannot be repeated). To upgrade a table that has rows, use
// Migrate: migration 002 sets the partition of existing rows in Go.
func (d *Dialect) Schema() string { return d.migrator.Schema() }

// MaxInsertRows is the most events one INSERT carries.
func (d *Dialect) MaxInsertRows() int { return maxVariables / d.insert.Columns() }

// Migrate applies the missing migrations in one BEGIN IMMEDIATE transaction
// on one connection: the write lock is taken before the applied versions
// are read, so concurrent Migrate calls run one after the other (the later
// ones wait for the busy timeout) whatever the DSN's _txlock. It is
// idempotent. A table made before versioned migrations counts as version 1.
func (d *Dialect) Migrate(ctx context.Context, db *sql.DB) error {
	if err := d.migrator.RunImmediate(ctx, db); err != nil {
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
		_, err := sqlkit.Exec(ctx, q, d.fillUpdate, sql.Named("part", part), sql.Named("seqs", sqlkit.JSONInts(seqs)))
		return err
	})
}

// Partitions reads the table's partition count; see dialects.Dialect.
func (d *Dialect) Partitions(ctx context.Context, q dialects.Querier) (int, error) {
	var n int
	var v sql.NullInt64
	if err := q.QueryRowContext(ctx, d.partitionsQ).Scan(&n, &v); err != nil {
		// Anything but a missing table or column (a locked or unreadable
		// file) is retried by the relay.
		msg := err.Error()
		return 0, sqlkit.PartitionsReadError(ctx, "sqlite", d.table, err,
			strings.Contains(msg, "no such table") || strings.Contains(msg, "no such column"))
	}
	return sqlkit.CheckPartitions(d.table, n, v, d.migrator.Required(), d.partitions)
}

// insertEvents writes events with as few multi-row INSERTs as the parameter limit
// allows, in slice order, then the holds of their ordered scheduled events.
func (d *Dialect) insertEvents(ctx context.Context, q dialects.Execer, events []dialects.Event) error {
	now := clock()
	all := events
	max := d.MaxInsertRows()
	for len(events) > 0 {
		n := min(len(events), max)
		args, err := d.insertArgs(d.insert, events[:n], now, 0)
		if err != nil {
			return err
		}
		if _, err := q.ExecContext(ctx, d.insert.SQL(n), args...); err != nil {
			return fmt.Errorf("sqlite: insert %d events: %w", n, err)
		}
		events = events[n:]
	}
	return d.holdAggregates(ctx, q, all, now)
}

// insertArgs returns the bind arguments of events' rows (insert_row.sql)
// for b, inserted at now, with room for extra more.
func (d *Dialect) insertArgs(b *sqlkit.InsertBuilder, events []dialects.Event, now time.Time, extra int) ([]any, error) {
	args := make([]any, 0, len(events)*b.Columns()+extra)
	for i := range events {
		e := &events[i]
		h, err := sqlkit.EncodeHeaders(e.Headers)
		if err != nil {
			return nil, err
		}
		created := micros(sqlkit.UTC(e.CreatedAt))
		crit := 0
		if e.Critical {
			crit = 1
		}
		// Due at SQLite's clock (the process's), not the writer's
		// registration time; a scheduled row at its deliver_at.
		next, deliver := micros(now), any(nil)
		if at, ok := sqlkit.DeliverAt(e, now); ok {
			next, deliver = micros(at), micros(at)
		}
		args, err = b.AppendRow(args, sql.Named("id", e.ID), sql.Named("aggregate_type", e.AggregateType),
			sql.Named("aggregate_id", e.AggregateID), sql.Named("event_type", e.EventType),
			sql.Named("payload", sqlkit.Payload(e.Payload)), sql.Named("content_type", e.ContentType),
			sql.Named("headers", h), sql.Named("idempotency_key", sqlkit.NullString(e.IdempotencyKey)),
			sql.Named("critical", crit), sql.Named("created_at", created), sql.Named("next_attempt_at", next),
			sql.Named("deliver_at", deliver), sql.Named("part", e.Partition))
		if err != nil {
			return nil, err
		}
	}
	return args, nil
}

// insertHandoff writes events with one INSERT ... RETURNING and returns, as
// records in Seq order, those whose aggregate has no pending row and no
// block visible to the transaction (insert_handoff_tail.sql). Events that
// do not fit in one statement are written by Insert and none is returned.
func (d *Dialect) insertHandoff(ctx context.Context, q dialects.Querier, events []dialects.Event) ([]dialects.Record, error) {
	n := len(events)
	if n == 0 {
		return nil, nil
	}
	if n*d.handoff.Columns()+1 > maxVariables {
		return nil, d.insertEvents(ctx, q, events)
	}
	now := clock()
	args, err := d.insertArgs(d.handoff, events, now, 1)
	if err != nil {
		return nil, err
	}
	ids := make([]string, n)
	for i := range events {
		ids[i] = events[i].ID
	}
	js, err := sqlkit.JSONStrings(ids)
	if err != nil {
		return nil, err
	}
	if args, err = d.handoff.AppendTail(args, sql.Named("ids", js)); err != nil {
		return nil, err
	}
	rows, err := q.QueryContext(ctx, d.handoff.SQL(n), args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: insert %d events: %w", n, err)
	}
	recs, err := sqlkit.HandoffRecords(rows, events)
	if err != nil {
		return nil, fmt.Errorf("sqlite: insert %d events: %w", n, err)
	}
	if err := d.holdAggregates(ctx, q, events, now); err != nil {
		return nil, err
	}
	return recs, nil
}

// Read returns pending, due, unblocked rows of req.Partitions in Seq order
// and, for a read from the start, its horizon (read.sql, or read_ahead.sql
// after a Seq; prepared).
func (d *Dialect) Read(ctx context.Context, db *sql.DB, req dialects.ReadRequest) (dialects.ReadResult, error) {
	if req.Limit <= 0 || len(req.Partitions) == 0 {
		return dialects.ReadResult{}, nil
	}
	q, args := d.read, []sql.NamedArg{sql.Named("parts", jsonParts(req.Partitions)), sql.Named("after", req.After),
		sql.Named("now", micros(sqlkit.UTC(req.Now))), sql.Named("limit", req.Limit)}
	if req.After > 0 {
		q, args = d.readAhead, append(args, sql.Named("window", sqlkit.ReadAheadWindow*req.Limit), sql.Named("horizon", req.Horizon))
	}
	res, err := sqlkit.RunRead(ctx, &d.stmts, db, q, false, req.Limit, args...)
	if err != nil {
		return dialects.ReadResult{}, fmt.Errorf("sqlite: read: %w", err)
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
	res, err := sqlkit.RunCritical(ctx, &d.stmts, db, d.readCritical, false, req.Limit, sql.Named("parts", jsonParts(req.Partitions)),
		sql.Named("now", micros(sqlkit.UTC(req.Now))), sql.Named("window", sqlkit.CriticalWindow(req)), sql.Named("limit", req.Limit))
	if err != nil {
		return dialects.CriticalResult{}, fmt.Errorf("sqlite: read critical: %w", err)
	}
	return res, nil
}

// jsonParts renders partitions as a JSON array ("[0,5,7]"), bound as one
// parameter and read with json_each.
func jsonParts(parts []int) string {
	b := make([]byte, 0, 2+len(parts)*4)
	b = append(b, '[')
	for i, p := range parts {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(p), 10)
	}
	return string(append(b, ']'))
}
