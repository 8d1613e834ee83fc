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
)

//go:embed sql/*.sql
var sqlFiles embed.FS

// maxParams is PostgreSQL's bind-parameter limit per statement.
const maxParams = 65535

// Dialect is the PostgreSQL implementation of dialects.Dialect. It is safe
// for concurrent use.
type Dialect struct {
	table  string
	schema string
	insert *sqlkit.InsertBuilder
	insp   *sqlkit.Inspector // the Inspector methods' statements
	stmts  sqlkit.StmtCache  // the claim and the mark, prepared: one round trip a call

	leased *sqlkit.InsertBuilder // insert_leased.sql, rows, insert_leased_tail.sql

	migrateLock, claim, markPublished, del, fail, release string
	requeueIDs, requeueAggregate, requeueAll              string
	cleanup, tryLock, stats                               string
}

var (
	_ dialects.Dialect         = (*Dialect)(nil)
	_ dialects.LeasingInserter = (*Dialect)(nil)
)

// New returns a PostgreSQL dialect for the table named by WithTable (default
// dialects.DefaultTable).
func New(opts ...Option) (*Dialect, error) {
	c := config{table: dialects.DefaultTable}
	for _, o := range opts {
		if err := o(&c); err != nil {
			return nil, err
		}
	}
	d := &Dialect{table: c.table}
	load := func(name string) string {
		b, err := sqlFiles.ReadFile("sql/" + name)
		if err != nil {
			panic("jitoutbox/postgres: missing embedded " + name) // build-time invariant
		}
		return sqlkit.Render(string(b), c.table)
	}
	d.schema = load("schema.sql")
	d.insert = sqlkit.NewInsertBuilder(load("insert.sql"), load("insert_row.sql"),
		func(i int) string { return "$" + strconv.Itoa(i+1) })
	d.leased = sqlkit.NewInsertBuilder(load("insert_leased.sql"), load("insert_leased_row.sql"),
		func(i int) string { return "$" + strconv.Itoa(i+1) }).WithTail(load("insert_leased_tail.sql"))
	d.migrateLock = load("migrate_lock.sql")
	d.claim = load("claim.sql")
	d.markPublished = load("mark_published.sql")
	d.del = load("delete.sql")
	d.fail = load("fail.sql")
	d.release = load("release.sql")
	d.requeueIDs = load("requeue_ids.sql")
	d.requeueAggregate = load("requeue_aggregate.sql")
	d.requeueAll = load("requeue_all.sql")
	d.cleanup = load("cleanup.sql")
	d.tryLock = load("trylock.sql")
	d.stats = load("stats.sql")
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

// Schema returns the DDL that Migrate applies, statements separated by ";\n".
func (d *Dialect) Schema() string { return d.schema }

// MaxInsertRows is the most events one INSERT carries.
func (d *Dialect) MaxInsertRows() int { return maxParams / d.insert.Columns() }

// Migrate applies Schema in one transaction under an advisory lock; it is
// idempotent and safe to run from several processes at once.
func (d *Dialect) Migrate(ctx context.Context, db *sql.DB) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("jitoutbox/postgres: migrate: begin: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // no-op after Commit
	if _, err := tx.ExecContext(ctx, d.migrateLock); err != nil {
		return fmt.Errorf("jitoutbox/postgres: migrate: lock: %w", err)
	}
	for _, stmt := range sqlkit.SplitStatements(d.schema) {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("jitoutbox/postgres: migrate: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("jitoutbox/postgres: migrate: commit: %w", err)
	}
	return nil
}

// payloadArgs splits a payload between the payload and payload_json
// columns: valid UTF-8 JSON of a JSON event goes to payload_json.
func payloadArgs(e *dialects.Event) (bin, js any) {
	if e.IsJSON() && len(e.Payload) > 0 && utf8.Valid(e.Payload) && json.Valid(e.Payload) {
		return nil, string(e.Payload)
	}
	return sqlkit.Payload(e.Payload), nil
}

// Insert writes events with as few multi-row INSERTs as the parameter limit
// allows, in slice order.
func (d *Dialect) Insert(ctx context.Context, q dialects.Execer, events []dialects.Event) error {
	max := d.MaxInsertRows()
	for len(events) > 0 {
		n := min(len(events), max)
		args, err := insertArgs(events[:n], d.insert.Columns(), 0)
		if err != nil {
			return err
		}
		if _, err := q.ExecContext(ctx, d.insert.SQL(n), args...); err != nil {
			return fmt.Errorf("jitoutbox/postgres: insert %d events: %w", n, err)
		}
		events = events[n:]
	}
	return nil
}

// insertArgs returns the bind arguments of events' rows (cols each, the
// same for insert_row.sql and insert_leased_row.sql), with room for extra
// more.
func insertArgs(events []dialects.Event, cols, extra int) ([]any, error) {
	args := make([]any, 0, len(events)*cols+extra)
	for i := range events {
		e := &events[i]
		h, err := sqlkit.EncodeHeaders(e.Headers)
		if err != nil {
			return nil, err
		}
		bin, js := payloadArgs(e)
		created := sqlkit.UTC(e.CreatedAt)
		args = append(args, e.ID, e.AggregateType, e.AggregateID, e.EventType, bin, js,
			e.ContentType, h, sqlkit.NullString(e.IdempotencyKey), e.Critical, created, created)
	}
	return args, nil
}

// InsertLeased writes events with one INSERT and leases to owner, until
// leaseUntil, each event whose aggregate has no pending row visible to the
// transaction (insert_leased.sql). It returns the leased events as records
// in Seq order. Events that do not fit in one statement are written by
// Insert, unleased.
func (d *Dialect) InsertLeased(ctx context.Context, q dialects.Querier, events []dialects.Event, owner string, leaseUntil time.Time) ([]dialects.Record, error) {
	n := len(events)
	if n == 0 {
		return nil, nil
	}
	cols := d.leased.Columns()
	if (n+1)*cols > maxParams {
		return nil, d.Insert(ctx, q, events)
	}
	args, err := insertArgs(events, cols, 2)
	if err != nil {
		return nil, err
	}
	args = append(args, owner, sqlkit.UTC(leaseUntil))
	rows, err := q.QueryContext(ctx, d.leased.SQL(n), args...)
	if err != nil {
		return nil, fmt.Errorf("jitoutbox/postgres: insert %d events: %w", n, err)
	}
	recs, err := sqlkit.LeasedRecords(rows, events)
	if err != nil {
		return nil, fmt.Errorf("jitoutbox/postgres: insert %d events: %w", n, err)
	}
	return recs, nil
}

// Claim leases up to req.Limit claimable rows to req.Owner with one
// autocommit statement: the <table>_claim function (schema.sql) locks the
// claim row, then runs one UPDATE ... FROM (SELECT ... FOR UPDATE SKIP
// LOCKED) RETURNING statement with a fresh snapshot.
func (d *Dialect) Claim(ctx context.Context, db *sql.DB, req dialects.ClaimRequest) ([]dialects.Record, error) {
	if req.Limit <= 0 {
		return nil, nil
	}
	var ids any // NULL: scan
	if len(req.IDs) > 0 {
		ids = textArray(req.IDs)
	}
	stmt, err := d.stmts.Stmt(ctx, db, d.claim)
	if err != nil {
		return nil, fmt.Errorf("jitoutbox/postgres: claim: prepare: %w", err)
	}
	var window any // NULL: examine every candidate
	if req.Window > 0 && len(req.IDs) == 0 {
		window = req.Window
	}
	rows, err := stmt.QueryContext(ctx, req.Owner, sqlkit.UTC(req.LeaseUntil), sqlkit.UTC(req.Now), req.Limit, ids, window)
	if err != nil {
		if ctx.Err() == nil {
			d.stmts.Forget(d.claim) // e.g. the function was dropped and created again
		}
		return nil, fmt.Errorf("jitoutbox/postgres: claim: %w", err)
	}
	recs, err := sqlkit.ScanRecords(rows, true, req.Limit)
	if err != nil {
		return nil, fmt.Errorf("jitoutbox/postgres: claim: %w", err)
	}
	return recs, nil
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
			return 0, fmt.Errorf("jitoutbox/postgres: %s: %w", op, err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return 0, fmt.Errorf("jitoutbox/postgres: %s: rows affected: %w", op, err)
		}
		return n, nil
	}
}

// MarkPublished marks seqs leased by owner as published at `at`.
func (d *Dialect) MarkPublished(ctx context.Context, db *sql.DB, owner string, seqs []int64, at time.Time) (int64, error) {
	if len(seqs) == 0 {
		return 0, nil
	}
	return d.mark(ctx, db, "mark published", d.markPublished, sqlkit.UTC(at), intArray(seqs), owner)
}

// Delete deletes seqs leased by owner.
func (d *Dialect) Delete(ctx context.Context, db *sql.DB, owner string, seqs []int64) (int64, error) {
	if len(seqs) == 0 {
		return 0, nil
	}
	return d.mark(ctx, db, "delete", d.del, intArray(seqs), owner)
}

// mark runs query, a prepared call of the mark function (schema.sql), and
// returns the rows it marked or deleted.
func (d *Dialect) mark(ctx context.Context, db *sql.DB, op, query string, args ...any) (int64, error) {
	stmt, err := d.stmts.Stmt(ctx, db, query)
	if err != nil {
		return 0, fmt.Errorf("jitoutbox/postgres: %s: prepare: %w", op, err)
	}
	var n int64
	if err := stmt.QueryRowContext(ctx, args...).Scan(&n); err != nil {
		if ctx.Err() == nil {
			d.stmts.Forget(query) // e.g. the function was dropped and created again
		}
		return 0, fmt.Errorf("jitoutbox/postgres: %s: %w", op, err)
	}
	return n, nil
}

// Fail records failed attempts in one transaction and releases the leases.
func (d *Dialect) Fail(ctx context.Context, db *sql.DB, owner string, failures []dialects.Failure) error {
	if len(failures) == 0 {
		return nil
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("jitoutbox/postgres: fail: begin: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // no-op after Commit
	for _, f := range failures {
		state := dialects.StatePending
		if f.Dead {
			state = dialects.StateDead
		}
		if _, err := tx.ExecContext(ctx, d.fail, sqlkit.TruncateError(f.Error), sqlkit.UTC(f.NextAttemptAt),
			int(state), f.Seq, owner); err != nil {
			return fmt.Errorf("jitoutbox/postgres: fail seq %d: %w", f.Seq, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("jitoutbox/postgres: fail: commit: %w", err)
	}
	return nil
}

// Release gives back leases held by owner; the rows become claimable at
// notBefore (zero: at once).
func (d *Dialect) Release(ctx context.Context, db *sql.DB, owner string, seqs []int64, notBefore time.Time) error {
	if len(seqs) == 0 {
		return nil
	}
	var nb any
	if !notBefore.IsZero() {
		nb = sqlkit.UTC(notBefore)
	}
	_, err := affected("release")(db.ExecContext(ctx, d.release, nb, intArray(seqs), owner))
	return err
}

// Requeue moves dead rows selected by f back to pending. IDs must be UUIDs.
func (d *Dialect) Requeue(ctx context.Context, db *sql.DB, f dialects.RequeueFilter, now time.Time) (int64, error) {
	sel, err := sqlkit.RequeueSelector(f)
	if err != nil {
		return 0, err
	}
	n := sqlkit.UTC(now)
	switch sel {
	case sqlkit.SelectIDs:
		return affected("requeue")(db.ExecContext(ctx, d.requeueIDs, n, textArray(f.IDs)))
	case sqlkit.SelectAggregate:
		return affected("requeue")(db.ExecContext(ctx, d.requeueAggregate, n, f.AggregateType, f.AggregateID))
	default:
		return affected("requeue")(db.ExecContext(ctx, d.requeueAll, n))
	}
}

// Cleanup deletes up to limit rows published before `before`.
func (d *Dialect) Cleanup(ctx context.Context, db *sql.DB, before time.Time, limit int) (int64, error) {
	if limit <= 0 {
		return 0, nil
	}
	return affected("cleanup")(db.ExecContext(ctx, d.cleanup, sqlkit.UTC(before), limit))
}

// TryLock takes or renews the named lease for owner.
func (d *Dialect) TryLock(ctx context.Context, db *sql.DB, name, owner string, now, until time.Time) (bool, error) {
	var got string
	err := db.QueryRowContext(ctx, d.tryLock, name, owner, sqlkit.UTC(now), sqlkit.UTC(until)).Scan(&got)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("jitoutbox/postgres: trylock %q: %w", name, err)
	}
	return got == owner, nil
}

// Stats reads counts and the oldest pending time in one query.
func (d *Dialect) Stats(ctx context.Context, db *sql.DB) (dialects.Stats, error) {
	var s dialects.Stats
	var oldest sqlkit.NullTime
	if err := db.QueryRowContext(ctx, d.stats).Scan(&s.Pending, &s.Dead, &s.Published, &oldest); err != nil {
		return s, fmt.Errorf("jitoutbox/postgres: stats: %w", err)
	}
	s.OldestPending = oldest.Time
	return s, nil
}
